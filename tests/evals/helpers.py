"""Small helpers the evals tests share."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager

from app.chat.reply import ModelReply
from evals.load.cases import Case
from evals.load.selection import select_cases
from evals.record.fingerprint import Selection


def select(cases: list[Case], names: str) -> list[Case]:
    """The cases a comma list of files or ids names, as EVAL_CASES would."""
    return select_cases(cases, Selection.of(names))


def verdict(v, reason="because"):
    """A judge's reply: the structured verdict and its reason."""
    return ModelReply(content=json.dumps({"verdict": v, "reason": reason}))


@contextmanager
def cli_environment(monkeypatch, values: dict[str, str]) -> Iterator[None]:
    """The process environment a command runs under: no MODEL_ or EVAL_ variable but these
    values, the call cache off unless they ask for it (a test's scripted model answers the
    same request differently on purpose), the hash embedder (no model download), and
    settings read afresh."""
    from app.manuals import embed
    from app.settings import get_settings
    from evals.settings import eval_settings

    for name in [k for k in os.environ if k.startswith(("MODEL_", "EVAL_"))]:
        monkeypatch.delenv(name)
    for name, value in {"EVAL_CACHE": "off", **values}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(embed, "default_embedder", embed.HashEmbedder)
    get_settings.cache_clear()
    eval_settings.cache_clear()
    try:
        yield
    finally:
        get_settings.cache_clear()
        eval_settings.cache_clear()
