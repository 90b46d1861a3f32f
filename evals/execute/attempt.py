"""One attempt of an item, case or conversation alike: its executor (executors.py), then its
checks (evals/checks/), with its model calls counted and priced, a call the cache replayed
apart from one this run made. A harness failure is this attempt's error, never the run's end.
"""

from __future__ import annotations

import time
import traceback

from app.chat.model_info import price_per_token
from app.chat.reply import Usage as ReplyUsage
from app.chat.retry import ModelCallError
from evals.checks import NO_ANSWER, measure_checks, run_checks
from evals.checks.visitor import check_visitor, judge_visitor
from evals.execute.cache import Tally, sample
from evals.execute.executors import EXECUTORS, Execution, Setup
from evals.execute.lost import Losses, losses
from evals.fixtures.catalog import fixtures_for
from evals.judge.setup import JudgeSetup
from evals.load.conversations import Conversation
from evals.load.items import EvalItem
from evals.record.results import Attempt, Calls, CheckResult, Usage
from evals.record.transcript import Transcript


def attempt_cost(model_id: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """The attempt's price from litellm's price data; None when the model has no price."""
    prices = price_per_token(model_id)
    if prices is None:
        return None
    return prompt_tokens * prices[0] + completion_tokens * prices[1]


def _usage(execution: Execution) -> Usage:
    u, visitor = execution.usage, execution.visitor_usage
    return Usage(prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens,
                 cut_at_cap=u.cut, cached_tokens=u.cached_tokens, prefill_ms=u.prefill_ms,
                 generation_ms=u.generation_ms,
                 visitor_tokens=visitor.prompt_tokens + visitor.completion_tokens
                 if visitor is not None else 0)


def _elapsed_ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


async def attempt(item: EvalItem, setup: Setup, judge: JudgeSetup | None = None,
                  executor: str | None = None, *, repetition: int = 1, number: int = 1,
                  run_id: str | None = None) -> Attempt:
    """One attempt of an item by its executor (or the variant's), then its checks: one sample
    (`repetition`, attempt `number`) of every model it calls, which the call cache keys by
    and keeps under `run_id` (the variant's run)."""
    with sample(repetition, number, run_id) as tally, losses() as lost:
        done = await _attempt(item, setup, judge, executor)
    done = _with_losses(_with_calls(done, tally, setup.model.model_id), lost)
    if done.error is not None:
        return done
    # Latency and cost are known only now, with the calls counted: the measured checks last.
    return done.model_copy(update={"checks": [*done.checks,
                                              *measure_checks(item.checks, done)]})


def _with_losses(done: Attempt, lost: Losses) -> Attempt:
    """The attempt with the judge's and visitor's calls lost to the provider: each try asked
    again in `lost_to`; one still lost after its tries makes the attempt lost to the provider
    (an ERROR naming whose call it was, and not run again), unless a decided check failed
    anyway: that failure is the agent's, whatever the judge would have said."""
    if lost.final is None:
        return done.model_copy(update={"lost_to": [*done.lost_to, *lost.asked_again]}) \
            if lost.asked_again else done
    if done.failed_a_check:
        return done.model_copy(update={"lost_to": [*done.lost_to, *lost.asked_again]})
    given_up = done.model_copy(update={"error": str(lost.final), "failure": lost.final.kind,
                                       "lost_to": [*done.lost_to, *lost.asked_again]})
    given_up._tries_spent = True
    return given_up


# The jobs whose calls are inside an attempt's measured latency (a judge's come after it, in
# the checks): a replayed one adds what it took when made (evals/checks/spend.py).
TIMED_JOBS = ("chat", "visitor")


def _with_calls(done: Attempt, tally: Tally, model_id: str) -> Attempt:
    """The attempt with its model calls counted: a replayed call's tokens, cost and latency
    apart from what was spent and measured."""
    if not tally.made and not tally.replayed:
        return done
    chat = tally.replayed_by_job.get("chat", ReplyUsage())
    visitor = tally.replayed_by_job.get("visitor", ReplyUsage())
    prompt, completion = chat.prompt_tokens, chat.completion_tokens
    u = done.usage
    # What this run spent: a replayed reply's tokens and the server's timings of it are the
    # run that made it's (`cut` stays: it says what the answer is).
    usage = u.model_copy(update={
        "prompt_tokens": max(0, u.prompt_tokens - prompt),
        "completion_tokens": max(0, u.completion_tokens - completion),
        "cached_tokens": max(0, u.cached_tokens - chat.cached_tokens),
        "prefill_ms": max(0, u.prefill_ms - chat.prefill_ms),
        "generation_ms": max(0, u.generation_ms - chat.generation_ms),
        "visitor_tokens": max(0, u.visitor_tokens - visitor.prompt_tokens
                              - visitor.completion_tokens)})
    calls = Calls(made=tally.made, replayed=tally.replayed,
                  replayed_prompt_tokens=tally.replayed_prompt_tokens,
                  replayed_completion_tokens=tally.replayed_completion_tokens,
                  replayed_cost_usd=_replayed_cost(tally, model_id, prompt, completion),
                  replayed_from=sorted(tally.runs),
                  replayed_timed=sum(tally.replayed_calls_by_job.get(j, 0) for j in TIMED_JOBS),
                  replayed_latency_ms=_replayed_ms(tally))
    update: dict[str, object] = {"calls": calls, "usage": usage}
    if done.cost_usd is not None:
        update["cost_usd"] = attempt_cost(model_id, usage.prompt_tokens,
                                          usage.completion_tokens)
    return done.model_copy(update=update)


def _replayed_cost(tally: Tally, model_id: str, prompt: int, completion: int) -> float | None:
    """What the replayed chat calls cost when they were made (the price then); entries kept
    before costs were are counted at today's price; None when no price is known."""
    if not tally.replayed:
        return None
    recorded = tally.replayed_cost_by_job.get("chat")
    if tally.replayed_calls_by_job.get("chat") and recorded is not None:
        return recorded
    return attempt_cost(model_id, prompt, completion)


def _replayed_ms(tally: Tally) -> int | None:
    """What the replayed calls inside the attempt's latency took when made; None when one of
    them has no latency recorded."""
    took = [tally.replayed_ms_by_job.get(job, 0) for job in TIMED_JOBS]
    return None if None in took else sum(ms or 0 for ms in took)


async def _attempt(item: EvalItem, setup: Setup, judge: JudgeSetup | None,
                   executor: str | None) -> Attempt:
    started = time.perf_counter()
    try:
        execution = await EXECUTORS[executor or item.executor].run(item, setup)
    except ModelCallError as exc:
        lost = Attempt(error=f"model call failed: {exc}", failure=exc.kind or "unreadable",
                       latency_ms=_elapsed_ms(started))
        lost._retry_after_s = getattr(exc, "retry_after_s", None)
        return lost
    except Exception as exc:  # a harness failure is this item's ERROR, not the run's end
        return Attempt(error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}",
                       latency_ms=_elapsed_ms(started))
    transcript = execution.transcript
    if execution.broke is not None:
        return Attempt(transcript=_answer_only(transcript), error=execution.broke)
    try:
        checks = await run_checks(item.checks, transcript, fixtures_for(item.context.catalog),
                                  judge, item.context.about(item.photos))
    except Exception as exc:
        return Attempt(transcript=_answer_only(transcript),
                       error=f"checking failed: {type(exc).__name__}: {exc}")
    if item.single_turn and not transcript.answer.strip():  # saying nothing fails a case
        checks.insert(0, CheckResult(kind="answer", passed=False, reason=NO_ANSWER))
    # What the record keeps: not what the model was sent (the checks have read it), and the
    # conversation only when it was more than one exchange.
    kept: dict[str, list[object]] = {"messages": []}
    if item.single_turn and len(transcript.turns) <= 2:
        kept["turns"] = []
    transcript = transcript.model_copy(update=kept)
    usage = _usage(execution)
    # A conversation's visitor is checked too: one that failed makes it UNDECIDED.
    visitor = None
    if isinstance(item, Conversation):
        visitor = await judge_visitor(check_visitor(transcript.turns),
                                      item.scenario.visitor.model_dump(), transcript.turns,
                                      judge)
    return Attempt(
        transcript=transcript, checks=checks, timings=execution.timings, visitor=visitor,
        latency_ms=execution.latency_ms or _elapsed_ms(started), usage=usage,
        cost_usd=attempt_cost(setup.model.model_id, usage.prompt_tokens,
                              usage.completion_tokens))


def _answer_only(transcript: Transcript) -> Transcript:
    """What a broken attempt keeps: the answer and the tool calls that led to it."""
    return Transcript(answer=transcript.answer, tool_calls=transcript.tool_calls)
