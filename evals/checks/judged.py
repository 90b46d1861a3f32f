"""Judged checks: checks like the structural ones, registered in the same registry, that ask
the judge one question about a transcript: a case's rubric and must_not about its reply
(`rubric`), or a scenario's criterion about the whole conversation (`criterion`).

Failures of the judge are ERRORs; an untrusted judge's verdict is recorded as advisory
(decided: false); an informational criterion is reported and never counted (required: false).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from pydantic import Field

from app.chat.models import ModelCallError
from evals.checks._registry import About, Args, CheckSpec, judged
from evals.fixtures.catalog import fixtures_for
from evals.judge import MAKERSPACE, JudgeInput, UnreadableVerdict
from evals.judge import judge as ask_judge
from evals.judge.setup import JudgeSetup, PackPrompt
from evals.record.results import CheckResult, JudgeVerdict
from evals.record.transcript import Transcript


class RubricArgs(Args):
    rubric: str | None = None
    must_not: str | None = None


class CriterionArgs(Args):
    statement: str = Field(min_length=3, max_length=1000)
    enforcement: Literal["required", "informational"] = "required"


def _reference(about: About, transcript: Transcript) -> dict[str, Any]:
    return {"page": about.page, "asking_as": about.audience or "anonymous visitor",
            "catalogue": sorted(fixtures_for(about.catalog).slugs),
            "qr_codes": transcript.qr_hints}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))


@judged("rubric", args=RubricArgs, label=lambda args: "judge")
async def rubric(spec: CheckSpec, transcript: Transcript, judge: JudgeSetup | None,
                 about: About) -> CheckResult:
    """A case: its reply, after the conversation the model was sent. A run's evaluator pack,
    if any, rates it instead of the case's own rubric."""
    args: RubricArgs = spec.args  # type: ignore[assignment]
    pack = judge.pack if judge is not None else None
    conversation = [{"role": str(m["role"]), "content": _text(m["content"])}
                    for m in transcript.messages if m["role"] in ("user", "assistant")]
    item = JudgeInput(rubric=args.rubric, must_not=args.must_not, conversation=conversation,
                      reply=transcript.answer, tool_calls=transcript.tool_calls,
                      reference=_reference(about, transcript), pictures=list(about.pictures))
    if pack is not None:
        item = replace(item, rubric=pack.rubric, must_not=pack.must_not)
    return await _ask(spec, item, judge, pack)


@judged("criterion", args=CriterionArgs,
        label=lambda args: f"criterion ({args.enforcement}): {args.statement}")
async def criterion(spec: CheckSpec, transcript: Transcript, judge: JudgeSetup | None,
                    about: About) -> CheckResult:
    """A scenario: every assistant turn of the conversation, not only the last reply."""
    args: CriterionArgs = spec.args  # type: ignore[assignment]
    turns = [t.model_dump() for t in transcript.turns]
    item = JudgeInput(
        rubric=("Judge the whole conversation, every assistant turn, not only the last"
                f" reply. Pass only if this holds: {args.statement}"),
        must_not=None, conversation=turns[:-1],
        reply=turns[-1]["content"] if turns else "", tool_calls=transcript.tool_calls,
        reference=_reference(about, transcript), pictures=list(about.pictures))
    return await _ask(spec, item, judge)


async def _ask(spec: CheckSpec, item: JudgeInput, judge: JudgeSetup | None,
               pack: PackPrompt | None = None) -> CheckResult:
    label = spec.describe()
    if judge is None:
        return CheckResult(kind=label, passed=False, error=True, required=spec.required,
                           reason="judged, but no judge model is set")
    trust = judge.trust_for(pack is not None)
    meta = JudgeVerdict(model=judge.model.model_id,
                        prompt_hash=pack.hash(MAKERSPACE.hash()) if pack else MAKERSPACE.hash(),
                        trust=trust.reason, trusted_by_flag=judge.forced and not trust.trusted,
                        pack=pack.ref if pack is not None else None)
    if not judge.asked(pack is not None):
        return CheckResult(kind=label, passed=False, decided=False, required=spec.required,
                           judge=meta.model_copy(update={"asked": False}),
                           reason="not asked: this judge has not earned trust, so its verdict"
                                  " would decide nothing (--advisory-judge asks it anyway)")
    try:
        verdict = await ask_judge(judge.model, item, MAKERSPACE)
    except UnreadableVerdict as exc:
        reason = f"unreadable verdict: {exc}"
    except ModelCallError as exc:
        reason = f"the judge's call failed: {exc}"
    except Exception as exc:  # a judge bug is this item's ERROR, never the run's end
        reason = f"the judge raised {type(exc).__name__}: {exc}"
    else:
        return CheckResult(kind=label, passed=verdict.passed, reason=verdict.reason,
                           judge=meta.model_copy(update={
                               "verdict": "pass" if verdict.passed else "fail"}),
                           decided=trust.trusted or judge.forced, required=spec.required)
    return CheckResult(kind=label, passed=False, error=True, reason=reason,
                       required=spec.required, judge=meta)
