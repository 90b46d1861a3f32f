"""The item seam: what a run runs, whatever it is. A case (evals/load/cases.py) and a scenario
conversation (evals/load/scenarios.py) are both EvalItems; the runner schedules, executes,
checks and records them without asking which one it has.

An item names its executor (evals/execute/executors.py keeps the registry) and carries its
checks (evals/checks/, structural and judged in one registry). A new kind of item implements
this protocol; a new way of running one is an executor; a new way of judging one is a check.
"""

from __future__ import annotations

from typing import Any, Protocol

from evals.checks import CheckSpec
from evals.load.context import Context
from evals.record.results import Attack

# A name registered in evals/execute/executors.py (EXECUTORS), where a new one is added.
ExecutorName = str


class EvalItem(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def file(self) -> str: ...

    @property
    def line(self) -> int: ...

    @property
    def group(self) -> str | None: ...

    @property
    def attack(self) -> Attack | None:
        """What a security item plants, and where (reported per channel, never scored)."""
        ...

    @property
    def context(self) -> Context: ...

    @property
    def prompt(self) -> str:
        """What the report shows as the item's prompt."""
        ...

    @property
    def photos(self) -> tuple[str, ...]: ...

    @property
    def checks(self) -> tuple[CheckSpec, ...]: ...

    @property
    def executor(self) -> ExecutorName: ...

    @property
    def single_turn(self) -> bool:
        """One exchange: a blank final answer fails it before any check."""
        ...

    @property
    def names(self) -> tuple[str, ...]:
        """The names a selection may pick it by (besides its file's): its id, and what it
        was made from (a conversation's scenario)."""
        ...

    @property
    def frozen_tools(self) -> frozenset[str]:
        """The tools that answer it from frozen responses (which only the app's path serves)."""
        ...

    @property
    def max_turns(self) -> int:
        """The most visitor turns it runs: 1 for a single exchange."""
        ...

    @property
    def judged(self) -> bool: ...

    @property
    def where(self) -> str: ...

    def content(self) -> dict[str, Any]:
        """What the plan fingerprint hashes of this item."""
        ...
