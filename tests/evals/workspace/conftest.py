import shutil

import pytest

from app.db import scratch_database
from evals.execute.agent import agent_info
from evals.load.plan import plan_info
from evals.record.fingerprint import AgentSettings
from evals.record.results import Attempt, CaseResult, CheckResult
from evals.record.run import Models, RunRecord
from evals.record.store import RunStore
from evals.record.transcript import Transcript
from evals.report.compare import compare_runs
from evals.settings import CASES_DIR, SCENARIOS_DIR
from evals.workspace.sources import Sources

TOKEN = "the-token"


def run(run_id: str, status: str, answer: str, passed: bool) -> RunRecord:
    return RunRecord(
        run_id=run_id, status="complete", models=Models(chat="m"),
        plan=plan_info([], judge_model=None, judge_prompt_hash=None, repeat=1),
        agent=agent_info("m", AgentSettings(max_tool_steps=6), {}, ("c", False)),
        cases=[CaseResult(id="no-glowforge", file="honest-absence.yaml", prompt="Glowforge?",
                          status=status, attempts=[Attempt(
                              transcript=Transcript(answer=answer), checks=[CheckResult(
                              kind="no_unknown_tools", passed=passed,
                              reason="ok" if passed else f"offers “{answer}”")])])])


@pytest.fixture
async def stored(server_conninfo):
    """A store holding a passing run, then a failing one, and their comparison."""
    async with scratch_database(server_conninfo, prefix="test_ws") as info:
        async with RunStore.open(info) as store:
            base = run("ws0000base", "PASS", "We have no Glowforge.", True)
            cur = run("ws0001run", "FAIL", "Use the Glowforge Pro.", False)
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
