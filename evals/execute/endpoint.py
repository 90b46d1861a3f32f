"""Endpoint mode: send each case's conversation to any OpenAI-compatible endpoint (no app
composition) and check the reply with the text assertions and the judge. A run sends its
items there as a version whose executor is "endpoint", skipping what `skip_reason` says
(evals/api/runs.py).

Cases that need the app's context (a tool page, an identity, a page path, the look-alike lab,
photos, frozen tool responses) or whose checks need what an endpoint does not expose (the
registry's `needs`: its tool calls, the cited documents) are SKIPPED with the reason. The
transcript says what it cannot show (`Transcript.unseen`), so a re-score of it leaves such a
check undecided too, never passed.
"""

from __future__ import annotations

from evals.checks import CHECKS
from evals.execute.executors import HIDDEN, HIDDEN_WHY
from evals.load.items import EvalItem


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

