"""What a chat turn knows about its surroundings: the page, the photos, the person."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.identity import Identity

if TYPE_CHECKING:
    from app.db import Database
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
