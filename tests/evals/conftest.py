import os
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from app.manuals.embed import HashEmbedder
from app.settings import Settings
from evals.execute.harness import eval_env


@pytest.fixture
async def env(server_conninfo, tmp_path):
    settings = Settings(data_dir=tmp_path, model_chat="scripted/fake")
    async with eval_env(server_conninfo, settings, HashEmbedder()) as e:
        yield e


@contextmanager
def cli_environment(monkeypatch, values: dict[str, str]) -> Iterator[None]:
    """The process environment a command runs under: no MODEL_ or EVAL_ variable but these
    values, the hash embedder (no model download), and settings read afresh."""
    from app.manuals import embed
    from app.settings import get_settings

    for name in [k for k in os.environ if k.startswith(("MODEL_", "EVAL_"))]:
        monkeypatch.delenv(name)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(embed, "default_embedder", embed.HashEmbedder)
    get_settings.cache_clear()
    try:
        yield
    finally:
        get_settings.cache_clear()
