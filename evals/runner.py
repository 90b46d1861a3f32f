"""Control flow: execute → assert → retry once → classify. Bounded concurrency.

PASS: passed on the first attempt. FLAKY: passed only on the retry (never counted as a pass).
FAIL: failed both attempts. ERROR: the run or a check broke (never a fail). SKIPPED: the model
cannot run the case (e.g. photos to a model without image input).
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from app.chat.loop import run_turn
from app.chat.models import ChatModel, ModelCallError
from evals.assertions import ASSERTIONS
from evals.cases import Case
from evals.fixtures.catalog import fixtures_for
from evals.harness import EvalEnv, citation_evidence, compose_case
from evals.record import RecordedTurn

Status = Literal["PASS", "FLAKY", "FAIL", "ERROR", "SKIPPED"]
DEFAULT_CONCURRENCY = 4
MAX_ATTEMPTS = 2  # one retry


@dataclass
class CheckResult:
    kind: str
    passed: bool
    reason: str
    error: bool = False
    judge: dict[str, Any] | None = None  # model, prompt hash, verdict (judged checks only)


@dataclass
class Attempt:
    answer: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)
    qr_hints: list[str] = field(default_factory=list)
    attached_manuals: list[dict[str, Any]] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)
    latency_ms: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None and all(c.passed for c in self.checks)

    @property
    def broke(self) -> bool:
        return self.error is not None or any(c.error for c in self.checks)


@dataclass
class CaseResult:
    id: str
    file: str
    prompt: str
    status: Status
    attempts: list[Attempt]
    skipped_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_checks(case: Case, turn: RecordedTurn) -> list[CheckResult]:
    """Every assertion of a case on one recorded turn; a check that raises is data."""
    fixtures = fixtures_for(case.context.catalog)
    results = []
    for check in case.checks:
        try:
            passed, reason = ASSERTIONS[check.kind].check(turn, check.args, fixtures)
            results.append(CheckResult(check.describe(), passed, reason))
        except Exception as exc:  # recorded, never fatal: pydantic_evals does the same
            results.append(CheckResult(check.describe(), False,
                                       f"the check raised {type(exc).__name__}: {exc}", True))
    return results


def classify(attempts: list[Attempt]) -> Status:
    if attempts[0].passed:
        return "PASS"
    if len(attempts) > 1 and attempts[-1].passed:
        return "FLAKY"
    if any(a.broke for a in attempts):
        return "ERROR"
    return "FAIL"


def needs_evidence(case: Case) -> bool:
    return any(ASSERTIONS[c.kind].needs_evidence for c in case.checks)


async def judged_check(case: Case, turn: RecordedTurn, messages: list[dict[str, Any]],
                       judge_model: ChatModel | None) -> CheckResult:
    """The judge's verdict on the rubric and must_not, as one check; failures are ERRORs."""
    from evals.judge import JudgeInput, UnreadableVerdict, judge, prompt_hash

    kind = "judge"
    if judge_model is None:
        return CheckResult(kind, False, "the case is judged but no judge model is set", True)
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
    meta = {"model": judge_model.model_id, "prompt_hash": prompt_hash()}
    try:
        verdict = await judge(judge_model, item)
    except UnreadableVerdict as exc:
        return CheckResult(kind, False, f"unreadable verdict: {exc}", True,
                           {**meta, "verdict": None})
    except ModelCallError as exc:
        return CheckResult(kind, False, f"the judge's call failed: {exc}", True,
                           {**meta, "verdict": None})
    except Exception as exc:  # a judge bug is this case's ERROR, never the run's end
        return CheckResult(kind, False, f"the judge raised {type(exc).__name__}: {exc}", True,
                           {**meta, "verdict": None})
    return CheckResult(kind, verdict.passed, verdict.reason, False,
                       {**meta, "verdict": "pass" if verdict.passed else "fail"})


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content if isinstance(p, dict))


async def attempt(env: EvalEnv, case: Case, model: ChatModel,
                  judge_model: ChatModel | None = None) -> Attempt:
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
              "error": c.error} for c in result.tool_calls]
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
        checks.append(await judged_check(case, turn, composed.messages, judge_model))
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
    """One attempt, and a second only when the first did not pass (up to MAX_ATTEMPTS)."""
    attempts = [await make()]
    while not attempts[-1].passed and len(attempts) < MAX_ATTEMPTS:
        attempts.append(await make())
    return attempts


async def run_case(env: EvalEnv, case: Case, model: ChatModel,
                   judge_model: ChatModel | None = None) -> CaseResult:
    attempts = await with_one_retry(lambda: attempt(env, case, model, judge_model))
    return CaseResult(case.id, case.file, case.prompt, classify(attempts), attempts)


def prefix_key(case: Case) -> tuple[str, str, bool]:
    return (case.context.as_ or "", case.context.page_path.split("/")[1], case.context.curate)


def skip_reason(case: Case, model: ChatModel, vision: bool | None) -> str | None:
    if case.photos:
        can_see = vision if vision is not None else bool(getattr(model, "accepts_images", False))
        if not can_see:
            return f"{model.model_id} takes no image input (set EVAL_VISION=1 to send anyway)"
    return None


async def run_suite(
    env: EvalEnv,
    cases: list[Case],
    model: ChatModel,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    vision: bool | None = None,
    judge_model: ChatModel | None = None,
    on_done: Callable[[CaseResult], Awaitable[None] | None] | None = None,
) -> list[CaseResult]:
    """Run every case: the demo-catalogue cases first, then seed the lab and run the rest."""
    limit = asyncio.Semaphore(concurrency)
    results: dict[str, CaseResult] = {}

    async def one(case: Case) -> None:
        reason = skip_reason(case, model, vision)
        if reason:
            result = CaseResult(case.id, case.file, case.prompt, "SKIPPED", [], reason)
        else:
            async with limit:
                try:
                    result = await run_case(env, case, model, judge_model)
                except Exception as exc:  # whatever breaks, the other cases go on
                    result = CaseResult(case.id, case.file, case.prompt, "ERROR",
                                        [Attempt(error=f"{type(exc).__name__}: {exc}")])
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
