"""What an attempt produced, typed to the leaves: the final answer, every tool call, the
conversation, the manuals attached to it and the evidence gathered for the checks.

An executor makes a Transcript; the checks read it; the run record keeps it as the attempt's
payload. Here "tool" means the model's tools (a tool call), never the lab's machines.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from app.chat.loop import outcome_of
from app.manuals.citations import DocumentEvidence, searched_passages

# Evidence an executor may be unable to see (a subset of the checks' needs).
Unseen = Literal["tool_calls", "documents"]
CallOutcome = Literal["ok", "invalid_arguments", "unknown_tool", "error"]
OUTCOMES: tuple[CallOutcome, ...] = ("ok", "invalid_arguments", "unknown_tool", "error")


def as_json(value: Any) -> JsonValue:
    """A tool's arguments or result as plain JSON (a date becomes its text, as in the artifact),
    so a live check reads exactly what a re-score of the record will read."""
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))  # type: ignore[no-any-return]


class ToolCall(BaseModel):
    """One call of a model tool, as the tool-call loop recorded it."""

    model_config = ConfigDict(extra="forbid")
    name: str
    arguments: JsonValue = None
    result: JsonValue = None
    kind: str | None = None  # read, write, action, live_read; confirm for a pressed card
    error: str | None = None
    outcome: CallOutcome | None = None  # None: recorded before calls carried an outcome

    @property
    def status(self) -> CallOutcome:
        """ok, invalid_arguments, unknown_tool or error: whether the call really ran."""
        if self.outcome is not None:
            return self.outcome
        found = outcome_of(self.error)
        return next((o for o in OUTCOMES if o == found), "error")

    @property
    def args(self) -> dict[str, JsonValue]:
        """The arguments as a mapping ({} when the model sent something else)."""
        return self.arguments if isinstance(self.arguments, dict) else {}

    @property
    def result_map(self) -> dict[str, JsonValue]:
        """The result as a mapping ({} when the tool returned something else)."""
        return self.result if isinstance(self.result, dict) else {}


class Turn(BaseModel):
    """One message of the conversation as the visitor and the assistant saw it."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    content: str
    photos: list[str] = []  # the photos a visitor's message carried (their file names)


class AttachedManual(BaseModel):
    """A text-less manual attached to the turn as a file (the model reads the PDF itself)."""

    model_config = ConfigDict(extra="forbid")
    ref: str
    title: str
    key: str | None = None
    address: str | None = None
    page_count: int | None = None


class Transcript(BaseModel):
    """An attempt's payload: what the checks read and the record keeps."""

    model_config = ConfigDict(extra="forbid")
    answer: str = ""
    tool_calls: list[ToolCall] = []
    attached_manuals: list[AttachedManual] = []
    qr_hints: list[str] = []
    # Every cited document fetched over HTTP, with its page texts: a citation check's evidence.
    evidence: dict[str, DocumentEvidence] = {}
    # The whole conversation, kept when it was more than one exchange (a scenario's always).
    turns: list[Turn] = []
    # A scenario's end state, counted in its database before the database was dropped:
    # selector description -> matching rows.
    end_state: dict[str, int] = {}
    # What the model was sent last (the rubric judge reads the conversation from it); large
    # (the system prompt), so never stored.
    messages: list[dict[str, JsonValue]] = Field(default=[], exclude=True)
    # What the executor could not see, and why ("an endpoint does not expose its tool
    # calls"): a check that needs it is undecided, never passed (evals/checks/_registry.py).
    unseen: list[Unseen] = []
    unseen_why: str | None = None

    def photo_answer(self) -> str:
        """The assistant's answer to the last message that carried photos: what a check of
        what is pictured reads. A case's answer is that one (its turns are not kept)."""
        for n in range(len(self.turns) - 1, -1, -1):
            if self.turns[n].role == "user" and self.turns[n].photos:
                after = self.turns[n + 1:n + 2]
                return after[0].content if after and after[0].role == "assistant" else ""
        return self.answer

    def calls(self, name: str) -> list[ToolCall]:
        """Every call of that tool, whatever its outcome."""
        return [c for c in self.tool_calls if c.name == name]

    def ran(self, name: str) -> list[ToolCall]:
        """The calls of that tool whose arguments validated and which ran."""
        return [c for c in self.calls(name) if c.status == "ok"]

    def search_results(self) -> list[dict[str, Any]]:
        """The manual passages that search_manual returned, for the citation checks."""
        return searched_passages((c.name, c.result) for c in self.tool_calls)

    def attached(self) -> list[dict[str, Any]]:
        """The attached manuals as the app's citation code reads them."""
        return [m.model_dump() for m in self.attached_manuals]
