"""Control flow: execute → assert → retry once → classify. Bounded concurrency.

The statuses are defined in evals/results.py.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

from app.chat.loop import run_turn
from app.chat.models import ChatModel, ModelCallError
from evals.assertions import ASSERTIONS
from evals.assertions._registry import NO_ANSWER
from evals.cases import Case
from evals.fixtures.catalog import fixtures_for
from evals.harness import EvalEnv, citation_evidence, compose_case
from evals.record import RecordedTurn
from evals.results import Attempt, CaseResult, CheckResult, classify
from evals.trust import Trust

DEFAULT_CONCURRENCY = 4
MAX_ATTEMPTS = 2  # one retry


@dataclass(frozen=True)
class JudgeSetup:
    """The judge for a run and whether its verdicts decide cases."""

    model: ChatModel
    trust: Trust
    forced: bool = False  # --trust-judge: decides although calibration did not earn it

    @property
    def decides(self) -> bool:
        return self.trust.trusted or self.forced


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


async def judged_check(case: Case, turn: RecordedTurn, messages: list[dict[str, Any]],
                       judge: JudgeSetup | None) -> CheckResult:
    """The judge's verdict on the rubric and must_not, as one check; failures are ERRORs. An
    untrusted judge's verdict is recorded as advisory (decided: false)."""
    from evals.judge import MAKERSPACE, JudgeInput, UnreadableVerdict
    from evals.judge import judge as ask_judge

    kind = "judge"
    if judge is None:
        return CheckResult(kind=kind, passed=False, error=True,
                           reason="the case is judged but no judge model is set")
    ctx = case.context
    item = JudgeInput(
        rubric=case.rubric, must_not=case.must_not,
        conversation=[{"role": m["role"], "content": _text(m["content"])} for m in messages
                      if m["role"] in ("user", "assistant")],
        reply=turn.answer, tool_calls=turn.tool_calls,
        reference={"page": ctx.page_path, "asking_as": ctx.as_ or "anonymous visitor",
                   "catalogue": sorted(fixtures_for(ctx.catalog).slugs),
                   "qr_codes": turn.qr_hints},
        pictures=list(case.photos),
    )
    meta: dict[str, Any] = {"model": judge.model.model_id, "prompt_hash": MAKERSPACE.hash(),
                            "trust": judge.trust.reason, "trusted_by_flag": judge.forced
                            and not judge.trust.trusted}
    try:
        verdict = await ask_judge(judge.model, item, MAKERSPACE)
    except UnreadableVerdict as exc:
        return CheckResult(kind=kind, passed=False, error=True,
                           reason=f"unreadable verdict: {exc}", judge={**meta, "verdict": None})
    except ModelCallError as exc:
        return CheckResult(kind=kind, passed=False, error=True,
                           reason=f"the judge's call failed: {exc}",
                           judge={**meta, "verdict": None})
    except Exception as exc:  # a judge bug is this case's ERROR, never the run's end
        return CheckResult(kind=kind, passed=False, error=True,
                           reason=f"the judge raised {type(exc).__name__}: {exc}",
                           judge={**meta, "verdict": None})
    return CheckResult(kind=kind, passed=verdict.passed, reason=verdict.reason,
                       judge={**meta, "verdict": "pass" if verdict.passed else "fail"},
                       decided=judge.decides)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content if isinstance(p, dict))


async def attempt(env: EvalEnv, case: Case, model: ChatModel,
                  judge: JudgeSetup | None = None) -> Attempt:
    started = time.perf_counter()
    try:
        composed = await compose_case(env, case, accepts_pdf=getattr(model, "accepts_pdf",
                                                                      False))
        result = await run_turn(model, composed.composed, composed.messages, composed.ctx,
                                max_steps=env.settings.max_tool_steps)
    except ModelCallError as exc:
        return Attempt(error=f"model call failed: {exc}",
                       latency_ms=int((time.perf_counter() - started) * 1000))
    except Exception as exc:  # a harness failure is this case's ERROR, not the run's end
        return Attempt(error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}",
                       latency_ms=int((time.perf_counter() - started) * 1000))
    calls = [{"name": c.name, "arguments": c.arguments, "result": c.result, "kind": c.kind,
              "error": c.error, "outcome": c.outcome} for c in result.tool_calls]
    turn = RecordedTurn(result.answer, calls, composed.composed.attached_manuals,
                        [h.text for h in composed.composed.qr_hints])
    if needs_evidence(case):
        try:
            turn.evidence = await citation_evidence(env, turn.answer, turn.search_results(),
                                                    turn.attached_manuals)
        except Exception as exc:
            return Attempt(answer=result.answer, tool_calls=calls,
                           error=f"gathering citation evidence failed: {exc}")
    checks = run_checks(case, turn)
    if case.judged:
        checks.append(await judged_check(case, turn, composed.messages, judge))
    return Attempt(
        answer=result.answer,
        tool_calls=calls,
        checks=checks,
        qr_hints=turn.qr_hints,
        attached_manuals=turn.attached_manuals,
        evidence={k: asdict(v) for k, v in turn.evidence.items()},
        latency_ms=result.latency_ms,
        usage={"prompt_tokens": result.usage.prompt_tokens,
               "completion_tokens": result.usage.completion_tokens},
    )


async def with_one_retry(make: Callable[[], Awaitable[Attempt]]) -> list[Attempt]:
    """One attempt, and a second only when the first failed or broke (up to MAX_ATTEMPTS); an
    undecided attempt is not retried, since a retry cannot make its judge trusted."""
    attempts = [await make()]
    while not (attempts[-1].passed or attempts[-1].undecided) and len(attempts) < MAX_ATTEMPTS:
        attempts.append(await make())
    return attempts


async def run_case(env: EvalEnv, case: Case, model: ChatModel,
                   judge: JudgeSetup | None = None) -> CaseResult:
    attempts = await with_one_retry(lambda: attempt(env, case, model, judge))
    return CaseResult(id=case.id, file=case.file, prompt=case.prompt,
                      status=classify(attempts), attempts=attempts)


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
) -> list[CaseResult]:
    """Run every case: the demo-catalogue cases first, then seed the lab and run the rest."""
    limit = asyncio.Semaphore(concurrency)
    results: dict[str, CaseResult] = {}

    async def one(case: Case) -> None:
        reason = skip_reason(case, model, vision)
        if reason:
            result = CaseResult(id=case.id, file=case.file, prompt=case.prompt,
                                status="SKIPPED", skipped_reason=reason)
        else:
            async with limit:
                try:
                    result = await run_case(env, case, model, judge)
                except Exception as exc:  # whatever breaks, the other cases go on
                    result = CaseResult(id=case.id, file=case.file, prompt=case.prompt,
                                        status="ERROR",
                                        attempts=[Attempt(error=f"{type(exc).__name__}: {exc}")])
        results[case.id] = result
        if on_done is not None:
            maybe = on_done(result)
            if maybe is not None:
                await maybe

    # Cases with the same audience and page share the longest prompt prefix: running them
    # together lets a server-side prompt cache reuse it. The report keeps the files' order.
    ordered = sorted(cases, key=prefix_key)
    demo = [c for c in ordered if c.context.catalog == "demo"]
    lab = [c for c in ordered if c.context.catalog == "lab"]
    await asyncio.gather(*(one(c) for c in demo))
    if lab:
        await env.use_lab()
        await asyncio.gather(*(one(c) for c in lab))
    return [results[c.id] for c in cases]
