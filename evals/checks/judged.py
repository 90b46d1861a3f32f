"""Judged checks: checks like the assertions, registered by kind, that need the judge.

A judged check reads a transcript and asks the judge one question about it: a case's rubric
and must_not about its reply (`rubric`), or a scenario's criterion about the whole
conversation (`criterion`). Failures of the judge are ERRORs; an untrusted judge's verdict is
recorded as advisory (decided: false); an informational criterion is reported and never
counted (required: false).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from app.chat.models import ModelCallError
from evals.fixtures.catalog import fixtures_for
from evals.record.results import CheckResult

if TYPE_CHECKING:
    from evals.execute.executors import Transcript
    from evals.execute.runner import JudgeSetup
    from evals.load.cases import Context
    from evals.load.packs import PackPrompt


@dataclass(frozen=True)
class JudgedSpec:
    """What to ask the judge, and where the item ran."""

    label: str
    rubric: str | None
    must_not: str | None
    context: Context
    pictures: tuple[str, ...] = ()
    required: bool = True


Asker = Callable[[JudgedSpec, "Transcript", "JudgeSetup | None"], Awaitable[CheckResult]]
JUDGED: dict[str, Asker] = {}


def judged(kind: str) -> Callable[[Callable[[JudgedSpec, Transcript], Any]], Asker]:
    """Register a judged check: the decorated function turns a spec and a transcript into
    the judge's input; asking, trust and failures are the same for every kind."""

    def wrap(make_input: Callable[[JudgedSpec, Transcript], Any]) -> Asker:
        if kind in JUDGED:
            raise ValueError(f"judged check {kind!r} is registered twice")

        async def ask(spec: JudgedSpec, transcript: Transcript, judge: JudgeSetup | None
                      ) -> CheckResult:
            item = make_input(spec, transcript)
            pack = judge.pack if judge is not None else None
            if pack is not None and kind == "rubric":  # a pack rates cases, not scenarios
                item = replace(item, rubric=pack.rubric, must_not=pack.must_not)
            return await _ask(spec, item, judge, pack if kind == "rubric" else None)

        JUDGED[kind] = ask
        return ask

    return wrap


def _reference(spec: JudgedSpec, transcript: Transcript) -> dict[str, Any]:
    ctx = spec.context
    return {"page": ctx.page_path, "asking_as": ctx.as_ or "anonymous visitor",
            "catalogue": sorted(fixtures_for(ctx.catalog).slugs),
            "qr_codes": transcript.qr_hints}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content if isinstance(p, dict))


@judged("rubric")
def rubric_input(spec: JudgedSpec, transcript: Transcript) -> Any:
    """A case: its reply, after the conversation the model was sent."""
    from evals.judge import JudgeInput

    conversation = [{"role": m["role"], "content": _text(m["content"])}
                    for m in transcript.messages if m["role"] in ("user", "assistant")]
    return JudgeInput(rubric=spec.rubric, must_not=spec.must_not, conversation=conversation,
                      reply=transcript.answer, tool_calls=transcript.tool_calls,
                      reference=_reference(spec, transcript), pictures=list(spec.pictures))


@judged("criterion")
def criterion_input(spec: JudgedSpec, transcript: Transcript) -> Any:
    """A scenario: every assistant turn of the conversation, not only the last reply."""
    from evals.judge import JudgeInput

    turns = transcript.turns
    return JudgeInput(
        rubric=("Judge the whole conversation, every assistant turn, not only the last"
                f" reply. Pass only if this holds: {spec.rubric}"),
        must_not=spec.must_not, conversation=turns[:-1],
        reply=turns[-1]["content"] if turns else "", tool_calls=transcript.tool_calls,
        reference=_reference(spec, transcript), pictures=list(spec.pictures))


async def _ask(spec: JudgedSpec, item: Any, judge: JudgeSetup | None,
               pack: PackPrompt | None = None) -> CheckResult:
    from evals.judge import MAKERSPACE, UnreadableVerdict
    from evals.judge import judge as ask_judge

    if judge is None:
        return CheckResult(kind=spec.label, passed=False, error=True, required=spec.required,
                           reason="judged, but no judge model is set")
    meta: dict[str, Any] = {"model": judge.model.model_id,
                            "prompt_hash": pack.hash(MAKERSPACE.hash()) if pack
                            else MAKERSPACE.hash(),
                            "trust": judge.trust_for(pack is not None).reason,
                            "trusted_by_flag": judge.forced and not judge.trust_for(
                                pack is not None).trusted}
    if pack is not None:
        meta["pack"] = pack.ref
    try:
        verdict = await ask_judge(judge.model, item, MAKERSPACE)
    except UnreadableVerdict as exc:
        reason = f"unreadable verdict: {exc}"
    except ModelCallError as exc:
        reason = f"the judge's call failed: {exc}"
    except Exception as exc:  # a judge bug is this item's ERROR, never the run's end
        reason = f"the judge raised {type(exc).__name__}: {exc}"
    else:
        return CheckResult(kind=spec.label, passed=verdict.passed, reason=verdict.reason,
                           judge={**meta, "verdict": "pass" if verdict.passed else "fail"},
                           decided=judge.trust_for(pack is not None).trusted or judge.forced,
                           required=spec.required)
    return CheckResult(kind=spec.label, passed=False, error=True, reason=reason,
                       required=spec.required, judge={**meta, "verdict": None})
