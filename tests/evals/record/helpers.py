"""A version-2 run artifact as 37bb7c5 wrote it (tests/evals/record/data/README.md says how it
was made), with the report, page and JUnit XML that harness gave for it; and a run of judged
verdicts for the label tests."""

import gzip
import json
from pathlib import Path

import psycopg

from evals.execute.agent import agent_info
from evals.load.plan import plan_info
from evals.record.fingerprint import AgentSettings
from evals.record.results import Attempt, CaseResult, CheckResult, JudgeVerdict
from evals.record.run import Models, RunRecord
from evals.record.transcript import Transcript

DATA = Path(__file__).parent / "data"


def v2_data() -> dict:
    return json.loads(gzip.decompress((DATA / "v2-run.json.gz").read_bytes()))


def judged_run(run_id: str, verdicts: list[str], *, model: str = "judge-m",
               prompt_hash: str = "h1", pack: str | None = None,
               asked: bool = True) -> RunRecord:
    """A stored-run record of one judged case per verdict (`case-0`, `case-1`, …): a
    structural check first, then the judge's verdict (check 2, kind `judge`), given under
    `pack`'s prompt if any; with `asked` false, the judge was not called (not trusted, no
    --advisory-judge) and the check holds no verdict."""
    cases = [CaseResult(
        id=f"case-{i}", file="safety-and-care.yaml", prompt=f"Question {i}?",
        status="UNDECIDED", attempts=[Attempt(
            transcript=Transcript(answer=f"Answer {i}."), checks=[
                CheckResult(kind="no_unknown_tools", passed=True, reason="ok"),
                CheckResult(kind="judge", passed=v == "pass", decided=False,
                            reason=f"the judge's reason {i}",
                            judge=JudgeVerdict(model=model, prompt_hash=prompt_hash,
                                               verdict=v if asked else None, pack=pack,
                                               asked=asked))])])
        for i, v in enumerate(verdicts)]
    return RunRecord(run_id=run_id, status="complete", models=Models(chat="m", judge=model),
                     plan=plan_info([], judge_model=model, judge_prompt_hash=prompt_hash,
                                    repeat=1),
                     agent=agent_info("m", AgentSettings(max_tool_steps=6), {}, ("c", False)),
                     cases=cases)


async def stored(store, record) -> None:
    """Put a run record into the store, as a run writes it."""
    await store.start_run(record)
    for case in record.cases:
        await store.save_case(record.run_id, case)
    await store.flush()
    await store.finish_run(record)


async def left_unfinished(store, record, keep, *, status="running", pid=None):
    """A copy of a stored run, under a new id, as a killed run (`running`, its process `pid`
    gone) or a stopped one (`interrupted`, the rest listed unfinished) leaves it: the cases
    `keep` accepts. The store never lets a stored run be undone, so a test that needs an
    unfinished run makes one this way. Returns the copy's id."""
    from evals.record.results import Totals
    from evals.record.store import new_run_id

    kept = [c for c in record.cases if keep(c)]
    copy = record.model_copy(update={
        "run_id": new_run_id(), "status": "running", "cases": kept,
        "settings": record.settings.model_copy(update={"pid": pid})})
    await stored_cases(store, copy)
    if status == "interrupted":
        await store.finish_run(copy.model_copy(update={
            "status": "interrupted", "totals": Totals.of(kept),
            "unfinished": [f"{c.id}#{c.repetition}" for c in record.cases if not keep(c)]}))
    return copy.run_id


def unfinished_copy(conninfo, run_id, keep, *, status="running", pid=None):
    """left_unfinished on the store at `conninfo`, from a command test (no event loop)."""
    import asyncio

    from evals.record.store import RunStore

    async def body():
        async with RunStore.open(conninfo) as store:
            record = await store.load_run(run_id)
            return await left_unfinished(store, record, keep, status=status, pid=pid)

    return asyncio.run(body())


async def stored_cases(store, record) -> None:
    """A run started and its cases written, not finished (as a killed run leaves it)."""
    await store.start_run(record)
    for case in record.cases:
        await store.save_case(record.run_id, case)
    await store.flush()


async def as_owner(store, statement: str) -> None:
    """Run a statement on the store's database as its owner (as a person in psql would): the
    store's own pool works as the evals role, which may not alter a table."""
    async with await psycopg.AsyncConnection.connect(store.db.conninfo, autocommit=True) as conn:
        await conn.execute(statement)
