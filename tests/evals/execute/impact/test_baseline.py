"""A stored run as the baseline of a change."""

import pytest
from psycopg.types.json import Jsonb

from evals.execute.impact import run_baseline
from evals.record.run import RunRecord
from evals.record.store import StoreError


async def test_a_stored_run_without_plan_or_agent_is_no_baseline(store):
    header = RunRecord(run_id="0ld000000000").model_dump(mode="json", exclude={"cases"})
    await store.db.execute(
        "INSERT INTO eval_runs (id, status, model, plan_fingerprint, agent_fingerprint, header)"
        " VALUES ('0ld000000000', 'complete', 'm', '', '', %s)", (Jsonb(header),))
    with pytest.raises(StoreError, match="run 0ld000000000 records no plan or agent"):
        await run_baseline(store, "0ld")
