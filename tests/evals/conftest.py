"""The evals tests' fixtures: an eval environment and a run store of the test's own."""

import pytest

from app.db import scratch_database
from app.embed import HashEmbedder
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
