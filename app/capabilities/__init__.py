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
    "Registry",
    "RegistryError",
    "Tool",
    "ToolError",
    "ToolKind",
    "capability",
    "tool",
]
