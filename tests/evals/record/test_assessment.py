"""Assessments: a rescore or a re-judging stored beside a run's results, read back as typed
records, final once stored (direct SQL cannot change them), and never over the original."""

import psycopg
import pytest

from evals.record.assessment import (
    AssessedCase,
    AssessedCheck,
    Assessment,
    AssessmentJudge,
    LeftOut,
    assessments_of,
    load_assessment,
    save_assessment,
)
from evals.record.results import CheckResult, JudgeVerdict
from evals.record.store import StoreError
from tests.evals.record.helpers import judged_run, stored


def _rejudging(run_id, aid="as0001", cases=("case-0", "case-1")):
    verdict = CheckResult(kind="judge", passed=True, reason="the new judge's reason",
                          judge=JudgeVerdict(model="other-judge", prompt_hash="h2",
                                             verdict="pass"))
    return Assessment(
        id=aid, run_id=run_id, kind="rejudge", created="2026-12-01T10:00:00+00:00",
        harness="hh", judge=AssessmentJudge(model="other-judge", prompt_hash="h2",
                                            decides=True, trust="kappa 0.80 on 40 items"),
        left_out=[LeftOut(id="gone", repetition=1, reason="no longer in the case files")],
        cases=[AssessedCase(id=c, repetition=1, status="PASS",
                            checks=[AssessedCheck(attempt=1, check=2, result=verdict)])
               for c in cases])


async def test_an_assessment_is_stored_beside_the_run_and_read_back_whole(store):
    record = judged_run("as0run0001", ["fail", "fail"])
    await stored(store, record)
    before = await store.load_run(record.run_id)
    assessment = _rejudging(record.run_id)
    assert await save_assessment(store, assessment) == []
    assert await load_assessment(store, "as0001") == assessment
    assert await assessments_of(store, record.run_id) == [assessment]
    # the original results are as they were: the re-judging sits beside them
    assert (await store.load_run(record.run_id)).model_dump() == before.model_dump()
    assert (await store.list_runs())[0].assessments == 1


async def test_cases_the_store_lacks_are_named_and_left_out(store):
    record = judged_run("as0run0002", ["fail"])
    await stored(store, record)
    missing = await save_assessment(store, _rejudging(record.run_id, cases=("case-0", "new")))
    assert missing == ["new#1"]
    assert [c.id for c in (await load_assessment(store, "as0001")).cases] == ["case-0"]
    with pytest.raises(StoreError, match="no stored run 'nosuchrun': an assessment is stored"
                                         " beside a stored run"):
        await save_assessment(store, _rejudging("nosuchrun", aid="as0002"))
    with pytest.raises(StoreError, match="no stored assessment 'as0404'"):
        await load_assessment(store, "as0404")


async def test_a_stored_assessment_cannot_be_changed_by_hand(store):
    record = judged_run("as0run0003", ["fail", "pass"])
    await stored(store, record)
    await save_assessment(store, _rejudging(record.run_id, cases=("case-0",)))
    for statement, refusal in [
            ("UPDATE eval_assessments SET kind = 'rescore'", "UPDATE on eval_assessments"),
            ("DELETE FROM eval_assessments", "DELETE on eval_assessments"),
            ("UPDATE eval_assessment_cases SET status = 'FAIL'",
             "UPDATE on eval_assessment_cases"),
            ("DELETE FROM eval_assessment_cases", "DELETE on eval_assessment_cases"),
            ("TRUNCATE eval_assessment_cases", "TRUNCATE on eval_assessment_cases"),
            ("INSERT INTO eval_assessment_cases (assessment_id, run_id, case_id, repetition,"
             " status, result) VALUES ('as0001', 'as0run0003', 'case-1', 1, 'PASS', '{}')",
             "INSERT on eval_assessment_cases refused: assessment as0001 is stored already")]:
        async with await psycopg.AsyncConnection.connect(store.db.conninfo,
                                                         autocommit=True) as conn:
            with pytest.raises(psycopg.errors.RestrictViolation,
                               match=f"evidence kept: {refusal}"):
                await conn.execute(statement)
    assert len((await load_assessment(store, "as0001")).cases) == 1


@pytest.mark.parametrize(("judge", "named", "role"), [
    (AssessmentJudge(model="m", prompt_hash="h", decides=True, trust="kappa 0.8"),
     "m (prompt h)", "its verdicts decide"),
    (AssessmentJudge(model="m", prompt_hash="h", pack="essays", decides=True, trust="flag",
                     trusted_by_flag=True),
     "m (prompt h, pack essays)", "its verdicts decide on --trust-judge only"),
    (AssessmentJudge(model="m", prompt_hash="h", decides=False, trust="kappa 0.1",
                     advisory=True), "m (prompt h)", "advisory (--advisory-judge)"),
    (AssessmentJudge(model="m", prompt_hash="h", decides=False, trust="kappa 0.1"),
     "m (prompt h)", "not called")])
def test_a_re_judgings_judge_is_named_and_its_role_worded_once(judge, named, role):
    assert (judge.named(), judge.role()) == (named, role)
