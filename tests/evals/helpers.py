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
    same request differently on purpose), a judge with no calibration record not calibrated
    unless they ask for it (its calls are not what the test counts, and its record would go
    to the project's judges.yaml), the hash embedder (no model download), and settings read
    afresh."""
    from app import embed
    from app.settings import get_settings
    from evals.settings import eval_settings

    for name in [k for k in os.environ if k.startswith(("MODEL_", "EVAL_"))]:
        monkeypatch.delenv(name)
    for name, value in {"EVAL_CACHE": "off", "EVAL_AUTO_CALIBRATE": "0", **values}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(embed, "default_embedder", embed.HashEmbedder)
    get_settings.cache_clear()
    eval_settings.cache_clear()
    try:
        yield
    finally:
        get_settings.cache_clear()
        eval_settings.cache_clear()


def team_verdict(messages: list[dict[str, str]], otherwise: str = "pass") -> str:
    """The verdict the makerspace set's labels give the reply a judge prompt grades: what a
    fake judge that agrees with the team answers (`otherwise` for a reply not in the set)."""
    from evals.calibration.sets import load_set
    from evals.load.cases import load_cases

    user = next(m["content"] for m in messages if m["role"] == "user")
    graded = user.partition("Reply to grade:\n<<<DATA\n")[2].partition("\nDATA>>>")[0]
    labels = {i.reply.reply: i.reply.label for i in load_set(load_cases())}
    return labels.get(graded, otherwise)
