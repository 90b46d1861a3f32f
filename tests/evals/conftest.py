"""The evals tests' fixtures: an eval environment, and a run store of the test's own, a copy of
a database the store's migrations were applied to once a session (as the app's databases are
copies of `template_db`)."""

import pytest
from psycopg.conninfo import conninfo_to_dict

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


@pytest.fixture(scope="session")
async def store_template(server_conninfo):
    """The name of a database the run store's migrations were applied to (made once a session,
    a worker's under xdist): a test that needs a run-store database of its own, its own store
    or a DATABASE_URL for the CLI, clones it (`scratch_database(..., template=...)`) rather than
    migrating a blank one. A test of migrating a blank or older database makes its own."""
    async with scratch_database(server_conninfo, prefix="test_store_tmpl") as info:
        async with RunStore.open(info):
            pass
        yield conninfo_to_dict(info)["dbname"]


@pytest.fixture
async def store_conninfo(server_conninfo, store_template, admin):
    """A run-store database of the test's own, migrated (a copy of the template)."""
    async with scratch_database(server_conninfo, prefix="test_store",
                                template=store_template, admin=admin) as info:
        yield info


@pytest.fixture
async def store(store_conninfo):
    """A run store of the test's own."""
    async with RunStore.open(store_conninfo) as s:
        yield s
