import pytest

from app.manuals.embed import HashEmbedder
from app.settings import Settings
from evals.harness import eval_env


@pytest.fixture
async def env(server_conninfo, tmp_path):
    settings = Settings(data_dir=tmp_path, model_chat="scripted/fake")
    async with eval_env(server_conninfo, settings, HashEmbedder()) as e:
        yield e
