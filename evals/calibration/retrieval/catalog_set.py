"""The labelled requests of catalogue search (`catalog.yaml` beside this module, and the
held-out `catalog-holdout.yaml`): a request as a person types it, with every machine of the
large lab that is a right answer, `none` when the lab has nothing for it, or `all` for a
general question about what the lab holds. Slugs are checked against the large lab."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evals.calibration.retrieval.labelled import RetrievalSetError
from evals.fixtures.lab_catalog import large_lab
from evals.load.yamlfile import field_errors, line_of, read_list

CATALOG_SET = Path(__file__).parent / "catalog.yaml"
CATALOG_HOLDOUT = Path(__file__).parent / "catalog-holdout.yaml"
CATALOG_HOLDOUT_2 = Path(__file__).parent / "catalog-holdout-2.yaml"

RequestKind = Literal["task", "material", "misspelling", "brand", "model", "lookalike",
                      "several", "absent", "general"]
# What a right search does with a request: rank the machines, say none matches, or give the
# catalogue's overview.
Expect = Literal["machines", "none", "overview"]


class Request(BaseModel):
    """One item of the file."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=80)
    request: str = Field(min_length=2, max_length=500)  # search_catalog's own limit
    kind: RequestKind
    machines: list[str] | Literal["none", "all"]
    why: str = ""

    @field_validator("machines")
    @classmethod
    def _some(cls, value: list[str] | str) -> list[str] | str:
        if isinstance(value, list) and not value:
            raise ValueError("name at least one machine, or write `none` or `all`")
        return value


@dataclass(frozen=True)
class LabelledRequest:
    where: str  # file:line
    item: Request

    @property
    def expect(self) -> Expect:
        m = self.item.machines
        return "none" if m == "none" else "overview" if m == "all" else "machines"

    @property
    def expected(self) -> tuple[str, ...]:
        """The right machines (any one ranked counts as a hit), best first."""
        m = self.item.machines
        return tuple(m) if isinstance(m, list) else ()


def load_requests(path: Path = CATALOG_SET) -> list[LabelledRequest]:
    """Every request of a labelled set; all its errors raised together (file:line)."""
    data, lines, errors = read_list(path, "a catalogue set is a list of requests")
    if errors:
        raise RetrievalSetError(errors)
    slugs = {m.slug for m in large_lab()}
    out: list[LabelledRequest] = []
    seen: dict[str, str] = {}
    for i, raw in enumerate(data):

        def err(loc: tuple[Any, ...], message: str, i: int = i) -> None:
            errors.append(f"{path.name}:{line_of((i, *loc), lines)}: {message}")

        if not isinstance(raw, dict):
            err((), "a request is a mapping (id, request, kind, machines)")
            continue
        try:
            item = Request.model_validate(raw)
        except ValidationError as exc:
            for loc, message in field_errors(exc, "(request)"):
                err(loc, message)
            continue
        where = f"{path.name}:{line_of((i,), lines)}"
        if item.id in seen:
            err(("id",), f"duplicate id {item.id!r} (first at {seen[item.id]})")
            continue
        seen[item.id] = where
        named = item.machines if isinstance(item.machines, list) else []
        unknown = [s for s in named if s not in slugs]
        if unknown:
            err(("machines",), f"machines: not in the large lab: {', '.join(unknown)}")
            continue
        out.append(LabelledRequest(where, item))
    if errors:
        raise RetrievalSetError(errors)
    return out
