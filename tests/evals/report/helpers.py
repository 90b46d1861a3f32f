"""What the report's tests share: results with the attempts each status implies, and a run
with a failed case whose check quotes a sentence of its answer."""

from evals.record.results import Attempt, CaseResult, CheckResult
from evals.record.run import Models, RunRecord
from evals.record.transcript import ToolCall, Transcript


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


SENTENCE = "You could use the Glowforge Pro in room 2."


def record():
    failed = CaseResult(id="no-glowforge", file="honest-absence.yaml", prompt="Glowforge?",
                        status="FAIL", attempts=[Attempt(
                            transcript=Transcript(
                                answer=f"Sure! {SENTENCE} <script>alert(1)</script>",
                                tool_calls=[ToolCall(name="search_catalog",
                                                     arguments={"query": "x"},
                                                     result={"machines": []})]),
                            checks=[CheckResult(kind="no_unknown_tools", passed=False,
                                                reason=f"offers “Glowforge Pro”: “{SENTENCE}”"),
                                    CheckResult(kind="not_called_tool {'value':"
                                                " 'search_catalog'}", passed=False,
                                                reason="search_catalog was called")])])
    passed = CaseResult(id="where-is-the-lab", file="lab-identity.yaml", prompt="Where?",
                        status="PASS",
                        attempts=[Attempt(transcript=Transcript(answer="Room 1."))])
    return RunRecord(run_id="r1", cases=[passed, failed], models=Models(chat="m"))
