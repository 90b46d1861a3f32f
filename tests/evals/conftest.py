import os
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from app.db import scratch_database
from app.manuals.embed import HashEmbedder
from app.settings import Settings
from evals.execute.env import eval_env
from evals.record.store import RunStore


@pytest.fixture
async def env(server_conninfo, tmp_path):
    settings = Settings(data_dir=tmp_path, model_chat="scripted/fake")
    async with eval_env(server_conninfo, settings, HashEmbedder()) as e:
        yield e


@pytest.fixture
async def store(server_conninfo):
    """A run store of the test's own."""
    async with scratch_database(server_conninfo, prefix="test_store") as info, \
            RunStore.open(info) as s:
        yield s


@contextmanager
def cli_environment(monkeypatch, values: dict[str, str]) -> Iterator[None]:
    """The process environment a command runs under: no MODEL_ or EVAL_ variable but these
    values, the hash embedder (no model download), and settings read afresh."""
    from app.manuals import embed
    from app.settings import get_settings
    from evals.settings import eval_settings

    for name in [k for k in os.environ if k.startswith(("MODEL_", "EVAL_"))]:
        monkeypatch.delenv(name)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(embed, "default_embedder", embed.HashEmbedder)
    get_settings.cache_clear()
    eval_settings.cache_clear()
    try:
        yield
    finally:
        get_settings.cache_clear()
        eval_settings.cache_clear()
