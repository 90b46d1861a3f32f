"""Results with the attempts each status implies, for the report's tests."""

from evals.record.results import Attempt, CaseResult, CheckResult


def result(cid, status, rep=1, file="f.yaml", *, first=None):
    passed = CheckResult(kind="k", passed=True, reason="")
    failed = CheckResult(kind="k", passed=False, reason="no")
    attempts = {
        "PASS": [Attempt(checks=[passed])],
        "FLAKY": [Attempt(checks=[failed]), Attempt(checks=[passed])],
        "FAIL": [Attempt(checks=[failed]), Attempt(checks=[failed])],
        "ERROR": [Attempt(error="model call failed"), Attempt(error="again")],
        "UNDECIDED": [Attempt(checks=[passed, CheckResult(kind="judge", passed=True, reason="",
                                                          decided=False)])],
        "SKIPPED": [],
    }[status]
    return CaseResult(id=cid, file=file, prompt="p", status=status, repetition=rep,
                      attempts=first or attempts)
