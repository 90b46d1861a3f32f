"""How records become the store's rows: JSON redacted as in the artifact, and new ids."""

from __future__ import annotations

import json
import uuid
from typing import Any

from psycopg.types.json import Jsonb
from pydantic import BaseModel

from app.redact import redact


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def redacted_json(model: BaseModel, **kw: Any) -> Jsonb:
    """A record as JSON, with every secret-looking environment value redacted (as in the
    artifact and the report)."""
    return Jsonb(json.loads(redact(model.model_dump_json(**kw))))


def as_is(text: str) -> str:
    """JSON already written (and redacted) as text: psycopg sends it as it is."""
    return text
