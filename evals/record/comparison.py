"""A comparison of two runs of one plan, typed: per pair and per item, improved, regressed,
unchanged or uncertain, and for the items that moved, what changed for their context between
the two versions (evals/report/compare.py and attribution.py make it; the store keeps it), and
what each side's attempts took (evals/report/spend.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Outcome = Literal["improved", "regressed", "unchanged", "uncertain"]
OUTCOMES: tuple[Outcome, ...] = ("improved", "regressed", "unchanged", "uncertain")
# What a prompt's changed line is put down to when no capability's fragment is known.
WHOLE_PROMPT = "system prompt"


class Pair(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    file: str
    repetition: int
    baseline: str  # status, or "—" when that side has no result
    current: str
    outcome: Outcome
    why: str = ""


class FragmentDiff(BaseModel):
    """The changed lines of one capability's prompt fragment ("-" removed, "+" added)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    capability: str
    diff: tuple[str, ...]
    more: int = 0  # changed lines not shown


class ToolDiff(BaseModel):
    """A tool schema (the model's tool) added, removed or changed, and its capability."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    capability: str | None  # None: no capability registers it today
    what: str  # "added", "removed", "description changed", "parameters changed: …"
    diff: tuple[str, ...] = ()
    more: int = 0


class Change(BaseModel):
    """What differs for one context between the baseline's agent and the current one."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    model: str | None = None  # "A → B"
    settings: str | None = None  # "max_tool_steps 6 → max_tool_steps 8"
    new_context: bool = False  # the baseline's agent has no such context
    prompt: tuple[FragmentDiff, ...] = ()
    tools: tuple[ToolDiff, ...] = ()
    order_changed: bool = False  # the same tools, sent in another order
    unknown: str | None = None  # why it cannot be said (the runs do not record it)

    @property
    def nothing(self) -> bool:
        """Same prompt, tools, model and settings: a move is noise or has another cause."""
        return self == Change()

    def describe(self) -> str:
        """The change in one line, for a person."""
        if self.nothing:
            return ("nothing differs for its context (same prompt, tools, model and settings):"
                    " noise, or a cause outside the agent")
        if self.model and self == Change(model=self.model):
            return f"only the model changed: {self.model}"
        parts = []
        if self.model:
            parts.append(f"the model changed ({self.model})")
        if self.settings:
            parts.append(f"the settings changed ({self.settings})")
        if self.new_context:
            parts.append("its context is new (the baseline's agent has none)")
        if [f.capability for f in self.prompt] == [WHOLE_PROMPT]:
            parts.append("the system prompt changed")
        elif self.prompt:
            names = ", ".join(f"`{f.capability}`" for f in self.prompt)
            parts.append(f"the {names} fragment{'s' if len(self.prompt) > 1 else ''} changed")
        parts += [f"the `{t.name}` tool was {t.what}" if t.what in ("added", "removed")
                  else f"the `{t.name}` tool's schema changed ({t.what})" for t in self.tools]
        if self.order_changed:
            parts.append("the same tools in another order")
        if self.unknown:
            return ("after " + "; ".join(parts) + "; " if parts else "") + \
                f"what changed in its context is not known: {self.unknown}"
        return "after " + "; ".join(parts)


class Attribution(BaseModel):
    """The moved items that share one change, by outcome, and the contexts they ran in."""

    model_config = ConfigDict(extra="forbid")
    change: Change
    improved: list[str] = []
    regressed: list[str] = []
    # Uncertain items whose status changed (UNDECIDED → FAIL, PASS → ERROR): not a move the
    # counts or the test see, but what a person looks at next.
    unsettled: list[str] = []
    contexts: list[str] = []  # context keys ("staff /tools/form-4 demo")


class SideSpend(BaseModel):
    """What one side's attempts took: latency over the attempts that measured it (none of
    their model calls replayed), and the cost per item (None: some attempt had no price)."""

    model_config = ConfigDict(extra="forbid")
    items: int
    attempts: int
    timed: int  # attempts whose latency was measured
    p50_s: float | None = None
    p95_s: float | None = None
    cost_per_item_usd: float | None = None
    unpriced: int = 0  # attempts whose cost is unknown


class Spend(BaseModel):
    model_config = ConfigDict(extra="forbid")
    baseline: SideSpend
    current: SideSpend


class Comparison(BaseModel):
    model_config = ConfigDict(extra="forbid")
    baseline_run: str | None
    current_run: str | None
    plan_fingerprint: str | None
    pairs: list[Pair]  # per item and repetition, for reading
    cases: dict[str, Outcome] = {}  # per item: what the counts and the test are made of
    counts: dict[str, int]  # items per outcome (each of OUTCOMES)
    recovered: dict[Literal["baseline", "current"], int]  # FLAKY per side
    p_value: float | None
    verdict: str
    # Per change, the improved and regressed items it is shared by ([]: stored before this).
    attribution: list[Attribution] = []
    spend: Spend | None = None  # None: stored before comparisons measured it
