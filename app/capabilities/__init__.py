"""The capability registry. Importing this package registers every capability module."""

from app.capabilities import (  # noqa: F401  (imported to register)
    catalog,
    corrections,
    curation,
    issue_reports,
    lab_identity,
    maintenance,
    manuals,
    people,
    photo_intake,
    read_page,
    units,
)
from app.capabilities._context import PageContext, Photo, PromptContext, SelectedRow, ToolContext
from app.capabilities._registry import (
    REGISTRY,
    TOOL_KINDS,
    Capability,
    Registry,
    RegistryError,
    Tool,
    ToolError,
    ToolKind,
    capability,
    tool,
)

__all__ = [
    "REGISTRY",
    "TOOL_KINDS",
    "Capability",
    "PageContext",
    "Photo",
    "PromptContext",
    "Registry",
    "RegistryError",
    "SelectedRow",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolKind",
    "capability",
    "tool",
]
