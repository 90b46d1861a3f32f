"""An item's limits on what one attempt may take: `max_latency_s` (seconds) and `max_cost`
(USD), written on a case or a scenario, or for every item of a file by the file's first entry:

    - defaults: {max_latency_s: 20, max_cost: 0.002}

An item's own value wins over the file's. Each limit set becomes a measured check of every
attempt (evals/checks/spend.py: a breach fails the attempt like any check; an unknown figure
leaves it undecided). A limit that is not set adds nothing, so an item without limits keeps
its plan fingerprint.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from evals.checks import CheckSpec
from evals.checks.spend import MaxCost, MaxLatency
from evals.load.yamlfile import field_errors, line_of, no_flag

DEFAULTS = "defaults"
# A limit as a case, a scenario and a defaults entry write it (`.inf` would never fail).
Limit = Annotated[float, Field(gt=0, allow_inf_nan=False), BeforeValidator(no_flag)]
# Each limit's key, its check kind and the check's arguments.
KINDS: dict[str, tuple[str, Any]] = {
    "max_latency_s": ("max_latency", lambda v: MaxLatency(limit_s=v)),
    "max_cost": ("max_cost", lambda v: MaxCost(limit_usd=v)),
}


class Limits(BaseModel):
    """The limits of a defaults entry."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max_latency_s: Limit | None = None
    max_cost: Limit | None = None


class FileDefaults(BaseModel):
    """A file's defaults entry and the line of each limit in it."""

    limits: Limits = Limits()
    lines: dict[str, int] = {}


def file_defaults(data: list[Any], lines: dict[tuple[Any, ...], int], file: str
                  ) -> tuple[FileDefaults, list[tuple[int, Any]], list[str]]:
    """A file's defaults (its first entry, when that is `- defaults: {...}`), the other entries
    with their indexes, and the errors of a defaults entry (file:line)."""
    errors: list[str] = []
    entries = [(0, data[0])] if data else []
    for i, raw in enumerate(data[1:], start=1):
        if isinstance(raw, dict) and DEFAULTS in raw:
            errors.append(f"{file}:{line_of((i, DEFAULTS), lines)}: defaults: only a file's"
                          " first entry may be its defaults")
        else:
            entries.append((i, raw))
    first = data[0] if data else None
    if not (isinstance(first, dict) and DEFAULTS in first):
        return FileDefaults(), entries, errors
    others = sorted(str(k) for k in first if k != DEFAULTS)
    if others:
        errors.append(f"{file}:{line_of((0,), lines)}: the defaults entry holds only"
                      f" 'defaults:' (found {', '.join(others)})")
    raw = first[DEFAULTS]
    try:
        limits = Limits.model_validate(raw)
    except ValidationError as exc:
        for loc, message in field_errors(exc, DEFAULTS):
            errors.append(f"{file}:{line_of((0, DEFAULTS, *loc), lines)}:"
                          f" {'defaults.' if loc else ''}{message}")
        return FileDefaults(), entries[1:], errors
    at = {name: line_of((0, DEFAULTS, name), lines) for name in KINDS}
    return FileDefaults(limits=limits, lines=at), entries[1:], errors


def limit_checks(own: BaseModel, defaults: FileDefaults, base: tuple[Any, ...],
                 lines: dict[tuple[Any, ...], int]) -> list[CheckSpec]:
    """The measured checks of an item's limits (`own`: a case or a scenario; else the
    file's), each at the line that set it."""
    checks = []
    for name, (kind, args) in KINDS.items():
        value, line = getattr(own, name), line_of((*base, name), lines)
        if value is None:
            value, line = getattr(defaults.limits, name), defaults.lines.get(name, 0)
        if value is not None:
            checks.append(CheckSpec(kind, args(value), line))
    return checks
