"""Endpoint mode: send each case's conversation to any OpenAI-compatible endpoint (no app
composition) and check the reply with the text assertions and the judge.

Cases that need the app's context (a tool page, an identity, a page path, the look-alike lab,
photos, frozen tool responses) or whose checks need what an endpoint does not expose (the
registry's `needs`: its tool calls, the cited documents) are SKIPPED with the reason. The
transcript says what it cannot show (`Transcript.unseen`), so a re-score of it leaves such a
check undecided too, never passed.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.chat.models import ChatModel
from evals.checks import CHECKS
from evals.execute.executors import HIDDEN, HIDDEN_WHY
from evals.execute.runner import Variant, run_variants
from evals.judge.setup import JudgeSetup
from evals.load.items import EvalItem
from evals.record.results import CaseResult


def skip_reason(item: EvalItem) -> str | None:
    ctx = item.context
    needs = [name for name, used in (
        ("a tool page", ctx.page == "tool"), ("an identity", ctx.as_ is not None),
        ("a page path", ctx.path is not None),
        ("the look-alike lab" if ctx.catalog == "lab" else "the large lab", ctx.catalog != "demo"),
        ("photos", bool(item.photos)),
        ("frozen tool responses", bool(item.frozen_tools)),
    ) if used]
    if needs:
        return f"needs app context ({', '.join(needs)}), which endpoint mode does not have"
    blind = sorted({c.kind for c in item.checks if CHECKS[c.kind].needs & HIDDEN})
    if blind:
        return f"checks {', '.join(blind)}: {HIDDEN_WHY}"
    return None


async def run_endpoint(items: Sequence[EvalItem], model: ChatModel, judge: JudgeSetup | None,
                       *, concurrency: int) -> list[CaseResult]:
    """Every case through the runner (retries, guard, classification) on the endpoint path."""
    variant = Variant("endpoint", model, executor="endpoint", skip=skip_reason)
    results = await run_variants(None, items, [variant], concurrency=concurrency, judge=judge)
    return results["endpoint"]
