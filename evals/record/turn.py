"""What the assertions read: the recorded turn and the fixtures it ran against."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.catalog import MachineRecord
from app.chat.loop import outcome_of
from app.manuals.citations import DocumentEvidence, searched_passages


@dataclass
class RecordedTurn:
    """One attempt's final answer and everything that came with it."""

    answer: str
    tool_calls: list[dict[str, Any]]  # {name, arguments, result, kind, outcome}
    attached_manuals: list[dict[str, Any]] = field(default_factory=list)
    qr_hints: list[str] = field(default_factory=list)
    evidence: dict[str, DocumentEvidence] = field(default_factory=dict)

    def calls(self, name: str) -> list[dict[str, Any]]:
        """Every call of that tool, whatever its outcome."""
        return [c for c in self.tool_calls if c["name"] == name]

    def ran(self, name: str) -> list[dict[str, Any]]:
        """The calls of that tool whose arguments validated and which ran."""
        return [c for c in self.calls(name) if call_outcome(c) == "ok"]

    def search_results(self) -> list[dict[str, Any]]:
        return searched_passages((c["name"], c.get("result")) for c in self.tool_calls)


OUTCOMES = ("ok", "invalid_arguments", "unknown_tool", "error")


def call_outcome(call: dict[str, Any]) -> str:
    """ok, invalid_arguments, unknown_tool or error."""
    if call.get("outcome") in OUTCOMES:
        return str(call["outcome"])
    error = call.get("error")
    return outcome_of(error)  # recorded before calls carried an outcome


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: fixtures_for caches them
class Fixtures:
    """The catalogue a case ran against and the lab's manual titles (pure data)."""

    machines: tuple[MachineRecord, ...]
    manual_titles: dict[str, tuple[str, ...]]  # machine slug -> titles

    @property
    def slugs(self) -> set[str]:
        return {m.slug for m in self.machines}

    def by_slug(self, slug: str) -> MachineRecord | None:
        return next((m for m in self.machines if m.slug == slug), None)

    @property
    def all_titles(self) -> set[str]:
        return {t for titles in self.manual_titles.values() for t in titles}
