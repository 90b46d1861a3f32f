"""Evidence kept (store migrations 0005, 0009): a stored case, its attempts and checks, a
comparison point, a comparison, a complete run and a label cannot be changed or removed, not
even by a statement typed by hand; an unfinished run can still be finished, stopped and resumed,
and a case written twice is kept as first written. The roles the app and the evals work as
(app/db/roles.py) cannot switch those rules off."""

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from app.db.roles import APP_ROLE, EVALS_ROLE
from evals.record.fingerprint import Point
from evals.record.labels import Label, add_labels, list_labels
from evals.record.store import StoreError
from evals.report.compare import compare_runs
from tests.evals.record.helpers import judged_run, stored, stored_cases

# Each statement a person might type against the store, and the rule that refuses it.
BY_HAND = [
    ("UPDATE eval_cases SET status = 'PASS'", "UPDATE on eval_cases refused: a stored case"
                                              " result is final"),
    ("DELETE FROM eval_cases", "DELETE on eval_cases refused"),
    ("TRUNCATE eval_cases CASCADE", "TRUNCATE on eval_cases refused"),
    ("UPDATE eval_attempts SET answer = 'A better answer.'", "UPDATE on eval_attempts refused"),
    ("DELETE FROM eval_attempts", "DELETE on eval_attempts refused"),
    ("UPDATE eval_checks SET passed = true", "UPDATE on eval_checks refused"),
    ("DELETE FROM eval_checks", "DELETE on eval_checks refused"),
    ("UPDATE eval_points SET plan_fingerprint = 'other'", "UPDATE on eval_points refused: a"
                                                          " comparison point is final"),
    ("DELETE FROM eval_points", "DELETE on eval_points refused"),
    ("UPDATE eval_comparisons SET result = '{}'", "UPDATE on eval_comparisons refused: a"
                                                  " stored comparison is final"),
    ("DELETE FROM eval_comparisons", "DELETE on eval_comparisons refused"),
    ("TRUNCATE eval_comparisons", "TRUNCATE on eval_comparisons refused"),
    ("DELETE FROM eval_runs WHERE id = 'ev0001base'", "DELETE on eval_runs refused: run"
                                                      " ev0001base is kept whole"),
    ("TRUNCATE eval_runs CASCADE", "TRUNCATE on eval_runs refused"),
    ("UPDATE eval_runs SET status = 'interrupted' WHERE id = 'ev0001base'",
     "UPDATE on eval_runs refused: run ev0001base is complete, and a complete run is final"),
    ("INSERT INTO eval_cases (run_id, case_id, repetition, file, status, result)"
     " VALUES ('ev0001base', 'added', 1, 'f.yaml', 'PASS', '{}')",
     "INSERT on eval_cases refused: run ev0001base is complete"),
    ("INSERT INTO eval_attempts (run_id, case_id, repetition, attempt, answer, latency_ms)"
     " VALUES ('ev0001base', 'case-0', 1, 3, 'another try', 1)",
     "INSERT on eval_attempts refused: case case-0 repetition 1 of run ev0001base is stored"
     " already"),
    ("INSERT INTO eval_checks (run_id, case_id, repetition, attempt, n, kind, passed, decided,"
     " error, reason) VALUES ('ev0001base', 'case-0', 1, 1, 9, 'judge', true, true, false, 'x')",
     "INSERT on eval_checks refused"),
]


async def _evidence(store):
    """Two complete runs, a point and the comparison of the two."""
    base, cur = judged_run("ev0001base", ["fail", "fail"]), judged_run("ev0002cur",
                                                                       ["pass", "fail"])
    for record in (base, cur):
        await stored(store, record)
    await store.save_point(Point(name="p1", created="2026-12-01", plan=base.plan,
                                 agent=base.agent))
    cid = await store.save_comparison("p1", "ev0001base", "ev0002cur", compare_runs(base, cur))
    return base, cid


async def test_stored_evidence_cannot_be_changed_or_removed_by_hand(store):
    base, cid = await _evidence(store)
    before = await store.load_run(base.run_id)
    comparison = await store.load_comparison(cid)
    conninfo = store.db.conninfo
    for statement, refusal in BY_HAND:
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
            with pytest.raises(psycopg.errors.RestrictViolation) as raised:
                await conn.execute(statement)
        assert f"evidence kept: {refusal}" in str(raised.value), statement
    assert (await store.load_run(base.run_id)).model_dump() == before.model_dump()
    assert (await store.load_comparison(cid)).model_dump() == comparison.model_dump()
    assert [p.name for p in await store.list_points()] == ["p1"]
    rows = await store.db.fetchone("SELECT count(*) AS n FROM eval_checks")
    assert rows["n"] == 8  # two runs of two cases, two checks each: none added or gone


async def test_an_unfinished_run_is_finished_stopped_and_resumed_then_final(store):
    record = judged_run("ev0003run", ["pass", "fail"]).model_copy(update={"status": "running"})
    await stored_cases(store, record.model_copy(update={"cases": record.cases[:1]}))
    await store.finish_run(record.model_copy(update={"status": "interrupted",
                                                     "cases": record.cases[:1]}))
    await store.finish_run(record.model_copy(update={"status": "running"}))  # resumed
    await store.save_case(record.run_id, record.cases[1])
    await store.finish_run(record.model_copy(update={"status": "complete"}))
    assert (await store.load_run(record.run_id)).status == "complete"
    with pytest.raises(psycopg.errors.RestrictViolation, match="a complete run is final"):
        await store.finish_run(record.model_copy(update={"status": "complete"}))
    unfinished = judged_run("ev0004run", ["pass"]).model_copy(update={"status": "running"})
    await store.start_run(unfinished)
    with pytest.raises(psycopg.errors.RestrictViolation,
                       match="id, start, model, plan and point are fixed when it starts"):
        await store.db.execute("UPDATE eval_runs SET plan_fingerprint = 'other'"
                               " WHERE id = 'ev0004run'")
    await store.db.execute("UPDATE eval_runs SET status = 'interrupted' WHERE id ="
                           " 'ev0004run'")  # what a stopped run's end writes


async def test_a_case_written_twice_is_kept_as_first_written(store):
    record = judged_run("ev0005run", ["pass"]).model_copy(update={"status": "running"})
    await stored_cases(store, record)
    await store.save_case(record.run_id, record.cases[0])  # a batch tried again: no change
    assert await store.flush() and store.write_errors == []
    other = record.cases[0].model_copy(update={"status": "FAIL"})
    await store.save_case(record.run_id, other)
    assert await store.flush()
    assert store.write_errors == ["case case-0 repetition 1 of run ev0005run is stored already"
                                  " with another result; a stored result is never rewritten"]
    assert (await store.load_run(record.run_id)).cases[0].status == "UNDECIDED"
    rows = await store.db.fetchone("SELECT count(*) AS n FROM eval_attempts")
    assert rows["n"] == 1


async def test_an_import_into_a_complete_run_that_would_add_to_it_is_refused(store):
    record = judged_run("ev0006run", ["pass", "fail"])
    await stored(store, record.model_copy(update={"cases": record.cases[:1]}))
    with pytest.raises(StoreError, match="run ev0006run is complete in the store, and a"
                                         " complete run is final: an artifact of it that is"
                                         " complete with 1 case.s. it lacks would change it"):
        await store.import_run(record)
    assert await store.import_run(record.model_copy(update={"cases": record.cases[:1]})) == \
        (0, 1)
    assert await store.run_lock("ev0006run") is None


async def _labelled(store):
    """A complete run with one person's label of its judged verdict."""
    await stored(store, judged_run("ev0007run", ["pass"]))
    await add_labels(store, [Label(run="ev0007run", item="case-0", repetition=1, attempt=1,
                                   check=2, kind="judge", verdict="pass", by="ana")])


async def test_a_stored_label_cannot_be_changed_or_removed_by_hand(store):
    await _labelled(store)
    for statement, refusal in [
            ("UPDATE eval_labels SET verdict = 'fail'", "UPDATE on eval_labels refused"),
            ("UPDATE eval_labels SET labelled_by = 'ben'", "UPDATE on eval_labels refused"),
            ("DELETE FROM eval_labels", "DELETE on eval_labels refused"),
            ("TRUNCATE eval_labels", "TRUNCATE on eval_labels refused")]:
        async with await psycopg.AsyncConnection.connect(store.db.conninfo,
                                                         autocommit=True) as conn:
            with pytest.raises(psycopg.errors.RestrictViolation) as raised:
                await conn.execute(statement)
        assert f"evidence kept: {refusal}: a stored label is final" in str(raised.value)
    assert [(x.by, x.verdict) for x in await list_labels(store)] == [("ana", "pass")]


# What a process of the app or the evals might try to get past the rules above: each is
# refused for want of the right, not by a trigger (which these would switch off).
PAST_THE_RULES = [
    "SET session_replication_role = replica",
    "ALTER TABLE eval_cases DISABLE TRIGGER eval_cases_kept",
    "ALTER TABLE eval_labels DISABLE TRIGGER ALL",
    "ALTER TABLE eval_runs DISABLE TRIGGER USER",
    "DROP TRIGGER eval_cases_kept ON eval_cases",
    "UPDATE eval_cases SET status = 'PASS'",
    "DELETE FROM eval_checks",
    "TRUNCATE eval_cases CASCADE",
    "UPDATE eval_labels SET verdict = 'fail'",
    "DELETE FROM eval_labels",
    "TRUNCATE eval_labels",
    "DELETE FROM eval_runs",
    "UPDATE eval_points SET plan_fingerprint = 'other'",
    "DELETE FROM eval_comparisons",
    "DELETE FROM eval_assessments",
    "DELETE FROM eval_launches",
    "DELETE FROM eval_schema_migrations",
    "CREATE TABLE eval_mine (x int)",
    "CREATE DATABASE mine",
]


async def test_the_evals_and_app_roles_cannot_get_past_the_evidence_rules(store,
                                                                          store_conninfo):
    await _labelled(store)
    await store.save_point(Point(name="p1", created="2026-12-01",
                                 plan=judged_run("x", []).plan, agent=judged_run("x", []).agent))
    async with store.db.connection() as conn:  # the store's own pool: the evals role
        cur = await conn.execute("SELECT current_user AS u, session_user AS s")
        assert await cur.fetchone() == {"u": EVALS_ROLE, "s": EVALS_ROLE}
    app = make_conninfo(store_conninfo, user=APP_ROLE)
    async with store.db.connection() as evals, \
            await psycopg.AsyncConnection.connect(app, autocommit=True) as by_app:
        for statement in PAST_THE_RULES:
            for conn in (evals, by_app):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    await conn.execute(statement)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # nothing of the store
            await by_app.execute("SELECT * FROM eval_labels")
    assert [(x.by, x.verdict) for x in await list_labels(store)] == [("ana", "pass")]
    assert [p.name for p in await store.list_points()] == ["p1"]
