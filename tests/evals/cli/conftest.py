"""The command tests' fixture: the CLI pointed at a scratch database and a fake model."""

import pytest

from app.db import scratch_database
from tests.evals.cli.helpers import ANSWER
from tests.evals.helpers import cli_environment
from tests.fake_openai import completion, fake_openai_server


@pytest.fixture
async def cli(server_conninfo, store_template, admin, tmp_path, monkeypatch):
    """The CLI pointed at a scratch database and a fake OpenAI-compatible model; yields the
    requests the model received."""
    async with scratch_database(server_conninfo, prefix="test_cli",
                                template=store_template, admin=admin) as info:
        with fake_openai_server(lambda body: (200, completion(ANSWER["text"]))) as (base, got):
            with cli_environment(monkeypatch, {
                    "DATABASE_URL": info, "MODEL_CHAT": "openai/fake-chat",
                    "MODEL_API_BASE": base, "OPENAI_API_KEY": "sk-test",
                    "DATA_DIR": str(tmp_path)}):
                yield got
