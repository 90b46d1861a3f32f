"""What a capability is given about a chat turn: the person, the page, the photos.

A capability's prompt fragment reads a PromptContext and its tools run with a ToolContext;
chat composition builds both, and the web routes and the evals make the photos and pages
that go into them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.db import Database
from app.identity import Identity
from app.manuals.library import ManualLibrary
from app.settings import Settings


@dataclass(frozen=True)
class Photo:
    """A photo attached to this turn's message."""

    name: str
    content_type: str
    data: bytes
    attachment_id: str = field(default_factory=lambda: str(uuid.uuid4()))


@dataclass(frozen=True)
class SelectedRow:
    kind: str  # "ticket" | "person" | "machine"
    id: int
    label: str
    detail: dict[str, Any]


@dataclass(frozen=True)
class PageContext:
    """The page the person is on, resolved against the database."""

    path: str = "/"
    kind: str = "gallery"  # gallery | tool | curate | tickets | people
    machine: dict[str, Any] | None = None
    selection: tuple[SelectedRow, ...] = ()

    @property
    def curating(self) -> bool:
        return self.kind == "curate"


@dataclass(frozen=True)
class PromptContext:
    """Everything a capability's prompt fragment may read."""

    identity: Identity | None
    page: PageContext
    catalogue: list[dict[str, Any]]
    photos: tuple[Photo, ...] = ()
    attached_manuals: tuple[dict[str, Any], ...] = ()


@dataclass
class ToolContext:
    """Everything a tool's run function may use."""

    db: Database
    settings: Settings
    identity: Identity | None
    page: PageContext
    photos: tuple[Photo, ...] = ()
    manuals: ManualLibrary | None = None
    # How a proposal's id is made: a random UUID (it cannot be guessed), unless the caller
    # says otherwise (the evals: the same ids in every run, so a conversation that proposes
    # asks the model the same thing each time).
    new_id: Callable[[], str] | None = None
