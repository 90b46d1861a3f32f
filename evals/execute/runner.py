"""Control flow: execute → assert → retry once → classify. Bounded concurrency.

The statuses are defined in evals/record/results.py.
"""

from __future__ import annotations

import asyncio
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from app.capabilities import Tool
from app.chat.models import ChatModel, ModelCallError
from evals.checks import ASSERTIONS
from evals.checks._registry import NO_ANSWER
from evals.checks.judged import JUDGED, JudgedSpec
from evals.execute.executors import AppTurn, Executor, Transcript
from evals.execute.guard import CallGuard, Spend
from evals.execute.harness import ComposedCase, EvalEnv, stub_tools
from evals.fixtures.catalog import fixtures_for
from evals.judge.trust import Trust
from evals.load.cases import Case
from evals.load.packs import PackPrompt
from evals.record.fingerprint import FrozenContext
from evals.record.results import Attempt, CaseResult, CheckResult, classify
from evals.record.turn import RecordedTurn

DEFAULT_CONCURRENCY = 4
MAX_ATTEMPTS = 2  # one retry


@dataclass(frozen=True)
class JudgeSetup:
    """The judge for a run and whether its verdicts decide cases."""

    model: ChatModel
    trust: Trust
    forced: bool = False  # --trust-judge: decides although calibration did not earn it
    pack: PackPrompt | None = None  # --judge PACK/NAME: rates cases instead of their rubric
    pack_trust: Trust | None = None  # the pack prompt's own calibration: the base's is not it

    @property
    def prompt_hash(self) -> str:
        """The hash of what the judge is asked: the template, with the pack's prompt if any."""
        from evals.judge import MAKERSPACE

        return self.pack.hash(MAKERSPACE.hash()) if self.pack else MAKERSPACE.hash()

    @property
    def decides(self) -> bool:
        return self.trust.trusted or self.forced

    def trust_for(self, packed: bool) -> Trust:
        """The trust of the prompt a verdict was given under: the pack's, or the base's."""
        return self.pack_trust if packed and self.pack_trust is not None else self.trust


def run_checks(case: Case, turn: RecordedTurn) -> list[CheckResult]:
    """Every assertion of a case on one recorded turn; a check that raises is data."""
    fixtures = fixtures_for(case.context.catalog)
    results = []
    for check in case.checks:
        try:
            passed, reason = ASSERTIONS[check.kind].check(turn, check.args, fixtures)
            results.append(CheckResult(kind=check.describe(), passed=passed, reason=reason))
        except Exception as exc:  # recorded, never fatal: pydantic_evals does the same
            results.append(CheckResult(kind=check.describe(), passed=False, error=True,
                                       reason=f"the check raised {type(exc).__name__}: {exc}"))
    if not turn.answer.strip():  # a blank final answer fails every single-turn case
        results.insert(0, CheckResult(kind="answer", passed=False, reason=NO_ANSWER))
    return results


def needs_evidence(case: Case) -> bool:
    return any(ASSERTIONS[c.kind].needs_evidence for c in case.checks)


@dataclass(frozen=True)
class Variant:
    """One agent version in a run: a chat model, and optionally a frozen agent (the system
    prompt and tool schemas a comparison point recorded per context) instead of today's."""

    label: str
    model: ChatModel
    frozen: dict[str, FrozenContext] | None = None
    # Another path than the app's (endpoint mode), and what that path cannot run.
    executor: Callable[[Any], Executor] | None = None
    skip: Callable[[Any], str | None] | None = None


class FrozenAgentError(ValueError):
    """A frozen agent that today's code can no longer run (a tool it was given is gone)."""


def apply_frozen(composed: ComposedCase, frozen: dict[str, FrozenContext], key: str) -> None:
    """Tell the model what the frozen version was told: its system prompt and tool schemas;
    the tools still run today's code (stubbed as in any eval)."""
    version = frozen.get(key)
    if version is None:
        raise FrozenAgentError(f"the frozen agent has no context {key!r}")
    current = {t.name: t for t in composed.composed.tools}
    tools = []
    for schema in version.tools:
        fn = schema.get("function", {})
        tool = current.get(fn.get("name", ""))
        if tool is None:
            tool = _registered(fn.get("name", ""))
        tools.append(replace(tool, description=fn.get("description", ""),
                             parameters=fn.get("parameters")))
    composed.composed.system_prompt = version.system_prompt
    composed.composed.tools = stub_tools(tools)


def _registered(name: str) -> Tool:
    from app.capabilities import REGISTRY

    tool = REGISTRY.all_tools().get(name)
    if tool is None:
        raise FrozenAgentError(f"the frozen agent's tool {name!r} no longer exists")
    return tool


def check_frozen(frozen: dict[str, FrozenContext]) -> None:
    """Refuse a frozen agent whose tools are no longer registered, before any call."""
    for key, version in frozen.items():
        for schema in version.tools:
            try:
                _registered(schema.get("function", {}).get("name", ""))
            except FrozenAgentError as exc:
                raise FrozenAgentError(f"{exc} (context {key!r})") from exc


def attempt_cost(model_id: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """The attempt's price from litellm's price data; None when the model has no price."""
    from app.chat.models import price_per_token

    prices = price_per_token(model_id)
    if prices is None:
        return None
    return prompt_tokens * prices[0] + completion_tokens * prices[1]


async def checks_for(case: Case, transcript: Transcript, judge: JudgeSetup | None
                     ) -> list[CheckResult]:
    """A case's checks on a transcript: its assertions, then its judged rubric (a judged check
    is one more registered check, run with the judge)."""
    checks = run_checks(case, transcript)
    if case.judged:
        spec = JudgedSpec("judge", case.rubric, case.must_not, case.context, case.photos)
        checks.append(await JUDGED["rubric"](spec, transcript, judge))
    return checks


async def attempt(env: EvalEnv | None, case: Any, model: ChatModel,
                  judge: JudgeSetup | None = None,
                  frozen: dict[str, FrozenContext] | None = None,
                  executor: Executor | None = None) -> Attempt:
    """One attempt of an item by its executor (by default the app path), then its checks."""
    started = time.perf_counter()
    if executor is None:
        executor = case.executor() if hasattr(case, "executor") else \
            AppTurn(case, frozen, evidence=needs_evidence(case))
    try:
        transcript = await executor.run(env, model)
    except ModelCallError as exc:
        return Attempt(error=f"model call failed: {exc}", failure=exc.kind or "unreadable",
                       latency_ms=int((time.perf_counter() - started) * 1000))
    except Exception as exc:  # a harness failure is this case's ERROR, not the run's end
        return Attempt(error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}",
                       latency_ms=int((time.perf_counter() - started) * 1000))
    if transcript.broke is not None:
        return Attempt(answer=transcript.answer, tool_calls=transcript.tool_calls,
                       error=transcript.broke)
    try:
        checks = await case.checks_on(transcript, judge) if hasattr(case, "checks_on") \
            else await checks_for(case, transcript, judge)
    except Exception as exc:
        return Attempt(answer=transcript.answer, tool_calls=transcript.tool_calls,
                       error=f"checking failed: {type(exc).__name__}: {exc}")
    return Attempt(
        answer=transcript.answer,
        tool_calls=transcript.tool_calls,
        checks=checks,
        qr_hints=transcript.qr_hints,
        attached_manuals=transcript.attached_manuals,
        evidence={k: asdict(v) for k, v in transcript.evidence.items()},
        turns=transcript.turns if transcript.conversation or len(transcript.turns) > 2 else [],
        timings=transcript.timings,
        latency_ms=transcript.latency_ms or int((time.perf_counter() - started) * 1000),
        usage={"prompt_tokens": transcript.usage.prompt_tokens,
               "completion_tokens": transcript.usage.completion_tokens,
               **{k: v for k, v in (("cut_at_cap", transcript.usage.cut),
                                    ("cached_tokens", transcript.usage.cached_tokens),
                                    ("prefill_ms", transcript.usage.prefill_ms),
                                    ("generation_ms", transcript.usage.generation_ms)) if v},
               **transcript.side_usage},
        cost_usd=attempt_cost(model.model_id, transcript.usage.prompt_tokens,
                              transcript.usage.completion_tokens),
    )


# A guard's refusals: retrying cannot help, and nothing was asked of the model.
NOT_CALLED = ("stopped", "unreachable", "cost_cap")
# Tries of one attempt lost to provider errors (after the model's own retries) before the
# attempt is given up as an ERROR.
PROVIDER_REATTEMPTS = 1


async def same_attempt(make: Callable[[], Awaitable[Attempt]]) -> Attempt:
    """One attempt; a try lost to a provider's failure is tried again as the same attempt."""
    lost: list[str] = []
    for _ in range(PROVIDER_REATTEMPTS):
        result = await make()
        if result.failure is None or result.failure in NOT_CALLED:
            return result.model_copy(update={"lost_to": lost}) if lost else result
        lost.append(result.error or result.failure)
    result = await make()
    return result.model_copy(update={"lost_to": lost}) if lost else result


async def with_one_retry(make: Callable[[], Awaitable[Attempt]]) -> list[Attempt]:
    """One attempt, and a second only when the first failed or broke (up to MAX_ATTEMPTS); an
    undecided attempt is not retried, since a retry cannot make its judge trusted, and neither
    is one the guard refused."""
    attempts = [await same_attempt(make)]
    while not (attempts[-1].passed or attempts[-1].undecided
               or attempts[-1].failure in NOT_CALLED) and len(attempts) < MAX_ATTEMPTS:
        attempts.append(await same_attempt(make))
    return attempts


async def run_case(env: EvalEnv | None, case: Case, model: ChatModel,
                   judge: JudgeSetup | None = None, *, repetition: int = 1,
                   frozen: dict[str, FrozenContext] | None = None,
                   executor: Executor | None = None) -> CaseResult:
    attempts = await with_one_retry(lambda: attempt(env, case, model, judge, frozen, executor))
    return CaseResult(id=case.id, file=case.file, prompt=case.prompt, group=case.group,
                      status=classify(attempts), attempts=attempts, repetition=repetition)


def prefix_key(case: Case) -> tuple[str, str, bool]:
    return (case.context.as_ or "", case.context.page_path.split("/")[1], case.context.curate)


def skip_reason(case: Case, model: ChatModel, vision: bool | None) -> str | None:
    if case.photos:
        can_see = vision if vision is not None else accepts_images(model.model_id)
        if not can_see:
            return (f"{model.model_id} takes no image input, by litellm's model info (set"
                    " EVAL_VISION=1 to send photos anyway)")
    return None


def accepts_images(model_id: str) -> bool:
    """Whether litellm's model information says the model takes image input."""
    from app.chat.models import supports_vision

    return supports_vision(model_id)


async def run_suite(
    env: EvalEnv,
    cases: list[Case],
    model: ChatModel,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    vision: bool | None = None,
    judge: JudgeSetup | None = None,
    on_done: Callable[[CaseResult], Awaitable[None] | None] | None = None,
    repeat: int = 1,
) -> list[CaseResult]:
    """Run every case (`repeat` times): the demo-catalogue cases first, then the lab's."""
    async def done(label: str, result: CaseResult) -> None:
        if on_done is not None:
            maybe = on_done(result)
            if maybe is not None:
                await maybe

    out = await run_variants(env, cases, [Variant("run", model)], concurrency=concurrency,
                             vision=vision, judge=judge, on_done=done, repeat=repeat)
    return out["run"]


GRACE_S = 5.0  # how long in-flight cases may finish once a run is told to stop


async def run_variants(
    env: EvalEnv | None,
    cases: list[Case],
    variants: list[Variant],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    vision: bool | None = None,
    judge: JudgeSetup | None = None,
    on_done: Callable[[str, CaseResult], Awaitable[None]] | None = None,
    repeat: int = 1,
    on_lab: Callable[[], Awaitable[None]] | None = None,
    stop: asyncio.Event | None = None,
    max_cost_usd: float | None = None,
    skip: set[tuple[str, str, int]] | None = None,
) -> dict[str, list[CaseResult]]:
    """Every case, `repeat` independent times, for every variant, interleaved (case by case,
    the variants side by side) under one concurrency limit. The demo-catalogue cases of every
    variant run first, then the look-alike lab is seeded and the rest run.

    Each variant's model is guarded (evals/guard.py). Once `stop` is set no new model call is
    made, cases in flight get GRACE_S to finish, and the rest are left out of the result (the
    caller lists them as unfinished). `skip` names (variant, case, repetition) already done."""
    stop = stop or asyncio.Event()
    limit = asyncio.Semaphore(concurrency)
    results: dict[tuple[str, str, int], CaseResult] = {}
    # The cost cap is the run's: the chat models', the visitors' and the judge's calls all
    # count toward it, and once it is reached none of them is made.
    spend = Spend(max_cost_usd)
    guards = {v.label: CallGuard(v.model, concurrency, spend=spend, stop=stop)
              for v in variants}
    visitors: dict[int, CallGuard] = {}
    if judge is not None and not isinstance(judge.model, CallGuard):
        # Its own stop event: a stopped run lets the cases in flight be judged in their grace
        # time. It does not take the model's retry hook, which the chat model's guard holds
        # when the judge is the same model object.
        judge = replace(judge, model=CallGuard(judge.model, concurrency, spend=spend,
                                               listen_to_retries=False))

    def visitor_guarded(case: Any) -> Any:
        """A scenario's simulated visitor goes through a guard too: a stopped run asks it
        nothing more, and its calls count toward the cost cap."""
        visitor = getattr(case, "visitor_model", None)
        if visitor is None or isinstance(visitor, CallGuard):
            return case
        guard = visitors.setdefault(id(visitor), CallGuard(
            visitor, concurrency, spend=spend, stop=stop,
            listen_to_retries=not any(visitor is v.model for v in variants)))
        return replace(case, visitor_model=guard)

    async def one(case: Case, variant: Variant, repetition: int) -> None:
        guard = guards[variant.label]
        reason = (variant.skip(case) if variant.skip else None) or \
            skip_reason(case, variant.model, vision)
        if reason is None and guard.cost_cap_reached:
            reason = "cost cap reached: no new model call was made"
        if reason:
            result = CaseResult(id=case.id, file=case.file, prompt=case.prompt,
                                group=case.group, status="SKIPPED", skipped_reason=reason,
                                repetition=repetition)
        else:
            async with limit:
                if stop.is_set():
                    return
                try:
                    result = await run_case(
                        env, case, guard, judge, repetition=repetition, frozen=variant.frozen,
                        executor=variant.executor(case) if variant.executor else None)
                except Exception as exc:  # whatever breaks, the other cases go on
                    result = CaseResult(id=case.id, file=case.file, prompt=case.prompt,
                                        group=case.group, status="ERROR", repetition=repetition,
                                        attempts=[Attempt(error=f"{type(exc).__name__}: {exc}")])
            last = result.attempts[-1] if result.attempts else None
            if last is not None and last.failure == "stopped":
                return  # unfinished: the run stopped before this case could be decided
            if last is not None and last.failure == "cost_cap" and len(result.attempts) == 1 \
                    and not last.lost_to:
                result = result.model_copy(update={
                    "status": "SKIPPED", "attempts": [],
                    "skipped_reason": "cost cap reached: no new model call was made"})
        results[(variant.label, case.id, repetition)] = result
        if on_done is not None:
            try:
                await on_done(variant.label, result)
            except Exception as exc:  # reporting a result must never lose the run
                print(f"warning: {case.id}: {type(exc).__name__}: {exc}", file=sys.stderr)

    # Cases with the same audience and page share the longest prompt prefix: running them
    # together lets a server-side prompt cache reuse it. The report keeps the files' order.
    ordered = [visitor_guarded(c) for c in sorted(cases, key=prefix_key)]
    for phase in ("demo", "lab"):
        jobs = [(c, v, r) for c in ordered if c.context.catalog == phase
                for r in range(1, repeat + 1) for v in variants
                if (v.label, c.id, r) not in (skip or set())]
        if not jobs or stop.is_set():
            continue
        if phase == "lab" and env is not None:
            await env.use_lab()
            if on_lab is not None:
                await on_lab()
        await _until_stopped([asyncio.create_task(one(c, v, r)) for c, v, r in jobs], stop)
    return {v.label: [results[(v.label, c.id, r)] for c in cases
                      for r in range(1, repeat + 1) if (v.label, c.id, r) in results]
            for v in variants}


async def _until_stopped(tasks: list[asyncio.Task[None]], stop: asyncio.Event) -> None:
    """Wait for the tasks; once stop is set, give those in flight GRACE_S, then cancel. If one
    raises, the others are cancelled and its exception raised. (One gather, not a wait on the
    whole pending set after every task: that would cost N² for N cases.)"""
    waiter: asyncio.Future[Any] = asyncio.create_task(stop.wait())
    everything: asyncio.Future[Any] = asyncio.gather(*tasks)
    try:
        await asyncio.wait({everything, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if everything.done():
            everything.result()  # raises the first task's exception, if any
            return
        pending = [t for t in tasks if not t.done()]
        if pending:
            _, late = await asyncio.wait(pending, timeout=GRACE_S)
            for task in late:
                task.cancel()
        for outcome in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(outcome, Exception):  # broke while the run was stopping: say so
                print(f"warning: a case broke while the run stopped: {outcome!r}",
                      file=sys.stderr)
    finally:
        waiter.cancel()
        for task in tasks:
            task.cancel()
        await asyncio.gather(waiter, *tasks, return_exceptions=True)
        if everything.done() and not everything.cancelled():
            everything.exception()  # retrieved, so asyncio does not warn about it
