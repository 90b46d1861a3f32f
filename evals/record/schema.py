"""The published JSON Schemas (evals/schemas/): each generated from the pydantic models that
read what it describes, written by `python -m evals schema`, and compared in a test, which fails
when a committed one is stale. What every one shares is here (its file, `$id`, title and
description, its text), with the run record's own; the case and scenario files' are in
evals/load/schema.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.record.run import ARTIFACT_VERSION, RunRecord
from evals.settings import SCHEMAS_DIR

# The dialect pydantic generates.
DIALECT = "https://json-schema.org/draft/2020-12/schema"
# A schema's `$id`: a name, not an address (nothing is served from it; an editor reads the
# file a YAML file's schema line points to).
ID_PREFIX = "urn:makerlab-assistant:evals:schema:"


@dataclass(frozen=True)
class Published:
    """One published schema: its name (the file `evals/schemas/<name>.schema.json`), its title
    and description, and how it is generated from the models."""

    name: str
    title: str
    description: str
    generate: Callable[[], dict[str, Any]]

    @property
    def path(self) -> Path:
        return SCHEMAS_DIR / f"{self.name}.schema.json"

    def schema(self) -> dict[str, Any]:
        body = self.generate()
        body.pop("title", None)
        body.pop("description", None)
        return {"$schema": DIALECT, "$id": ID_PREFIX + self.name, "title": self.title,
                "description": self.description, **body}

    def text(self) -> str:
        """The schema as its committed file holds it."""
        return json.dumps(self.schema(), indent=2, ensure_ascii=False) + "\n"

    def stale(self) -> bool:
        """Whether the committed file is missing or differs from what the models generate."""
        try:
            return self.path.read_text(encoding="utf-8") != self.text()
        except (OSError, UnicodeDecodeError):
            return True


RUN_RECORD = Published(
    "run-record", f"Run record (version {ARTIFACT_VERSION})",
    "A run of the eval suite as its JSON artifact (evals/.last-run.json, `write_run`) holds it"
    " and the run store keeps it: RunRecord in evals/record/run.py, as it is written."
    " Versions 1 and 2 are upgraded when read; a run is written at this version.",
    lambda: RunRecord.model_json_schema(mode="serialization"))
