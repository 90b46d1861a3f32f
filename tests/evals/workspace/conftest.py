"""The workspace tests' fixtures: a store with two runs and their comparison, a copy of the
case and scenario files, the workspace app with a launcher that starts nothing, and a browser."""

import shutil

import pytest
from starlette.testclient import TestClient

from app.db import scratch_database
from evals.record.store import RunStore
from evals.report.compare import compare_runs
from evals.settings import CASES_DIR, SCENARIOS_DIR
from evals.workspace import create_workspace
from evals.workspace.sources import Sources
from tests.browser import chromium
from tests.evals.workspace.helpers import BASE, TOKEN, Recording, run


@pytest.fixture
async def stored(server_conninfo, store_template, admin):
    """A store holding a passing run, then a failing one, and their comparison."""
    async with scratch_database(server_conninfo, prefix="test_ws", template=store_template,
                                admin=admin) as info:
        async with RunStore.open(info) as store:
            base = run("ws0000base", "PASS", "We have no Glowforge.", True)
            cur = run("ws0001run", "FAIL", "Use the Glowforge Pro.", False,
                      prompt="Say what the lab has.\nOffer any machine <b>asked</b> for.")
            for record in (base, cur):
                await store.start_run(record)
                for case in record.cases:
                    await store.save_case(record.run_id, case)
                await store.flush()
                await store.finish_run(record)
            await store.save_comparison(None, base.run_id, cur.run_id,
                                        compare_runs(base, cur))
        yield info


@pytest.fixture
def tree(tmp_path) -> Sources:
    """A copy of the case and scenario files for a test to write."""
    shutil.copytree(CASES_DIR, tmp_path / "cases")
    shutil.copytree(SCENARIOS_DIR, tmp_path / "scenarios")
    return Sources(tmp_path / "cases", tmp_path / "scenarios")


@pytest.fixture
def launcher():
    return Recording()


@pytest.fixture
def client(stored, tree, launcher):
    app = create_workspace(stored, TOKEN, sources=tree, launcher=launcher)
    with TestClient(app, base_url=BASE, follow_redirects=True) as c:
        assert c.get(f"/?token={TOKEN}").status_code == 200
        yield c


@pytest.fixture(scope="session")
async def browser():
    """Debian's chromium, one for every browser test of the workspace (each test opens its own
    context); skipped or failed as tests/browser.py's need_chromium says."""
    async with chromium() as b:
        yield b
