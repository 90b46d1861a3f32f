"""JUnit XML for CI: one test case per eval case with its repetitions together; FLAKY a pass
marked flaky, SKIPPED skipped, FAIL and UNDECIDED failures, ERROR an <error>, every reason
redacted."""

import xml.etree.ElementTree as ET

from evals.record.results import Attempt, CaseResult, CheckResult
from evals.record.run import RunRecord
from evals.report.junit import junit_xml, write_junit
from tests.evals.report.helpers import result

SECRET = "sk-junit-secret-value-123"


def parsed(*results):
    suite = ET.fromstring(junit_xml(RunRecord(cases=list(results))))
    return suite, {c.get("name"): c for c in suite.iter("testcase")}


def properties(case):
    return {p.get("name"): p.get("value") for p in case.iter("property")}


def test_each_status_as_ci_reads_it():
    suite, cases = parsed(result("passes", "PASS"), result("flaky", "FLAKY"),
                          result("fails", "FAIL"), result("undecided", "UNDECIDED"),
                          result("errors", "ERROR"), result("skipped", "SKIPPED"))
    assert cases
    assert [c.tag for c in cases["passes"]] == ["properties"]
    assert [c.tag for c in cases["flaky"]] == ["properties"]  # a pass...
    assert properties(cases["flaky"])["flaky"] == "true"  # ...marked flaky
    assert "flaky" not in properties(cases["passes"])
    assert cases["fails"].find("failure").get("message") == "FAIL (repetition 1)"
    assert cases["undecided"].find("failure").get("message") == "UNDECIDED (repetition 1)"
    assert cases["errors"].find("error").get("message") == "ERROR (repetition 1)"
    assert cases["errors"].find("failure") is None
    assert cases["skipped"].find("skipped") is not None
    counts = {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")}
    assert counts == {"tests": "6", "failures": "2", "errors": "1", "skipped": "1"}


def test_the_reasons_of_a_failure_are_its_failed_advisory_and_errored_parts():
    errored = CaseResult(id="e", file="f.yaml", prompt="p", status="ERROR",
                         attempts=[Attempt(error="model call failed: 503")])
    failed = result("f", "FAIL")
    _, cases = parsed(errored, failed, result("u", "UNDECIDED"))
    assert cases["e"].find("error").text == "error: model call failed: 503"
    assert cases["f"].find("failure").text == "k: no\nk: no"  # each failed attempt's check
    assert cases["u"].find("failure").text == "judge: "  # the advisory verdict, not the pass


def test_repetitions_are_one_test_case_and_its_first_bad_one_is_reported():
    reps = [result("a", s, rep) for rep, s in ((2, "FAIL"), (1, "PASS"), (3, "ERROR"))]
    for r in reps:
        r.attempts[0].latency_ms = 500
    suite, cases = parsed(*reps, result("b", "SKIPPED", file="other.yaml"))
    assert suite.get("tests") == "2" and list(cases) == ["a", "b"]
    assert properties(cases["a"])["statuses"] == "PASS FAIL ERROR"  # in repetition order
    assert cases["a"].find("failure").get("message") == "FAIL (repetition 2)"
    assert cases["a"].get("classname") == "f" and cases["b"].get("classname") == "other"
    assert cases["a"].get("time") == "1.500"
    # a skip in one repetition among passes is not a skipped test case
    _, mixed = parsed(result("c", "PASS", 1), result("c", "SKIPPED", 2))
    assert mixed["c"].find("skipped") is None and mixed["c"].find("failure") is None


def test_the_skip_says_why():
    skipped = CaseResult(id="photo", file="f.yaml", prompt="p", status="SKIPPED",
                         skipped_reason="takes no image input")
    _, cases = parsed(skipped)
    assert cases["photo"].find("skipped").get("message") == "takes no image input"


def test_reasons_are_redacted(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    leaked = CheckResult(kind="no_unknown_tools", passed=False, reason=f"quotes “key {SECRET}”")
    failed = CaseResult(id="a", file="f.yaml", prompt="p", status="FAIL",
                        attempts=[Attempt(checks=[leaked], error=f"echoed {SECRET}")])
    path = write_junit(RunRecord(cases=[failed]), tmp_path / "junit.xml")
    text = path.read_text()
    assert SECRET not in text and text.count("[redacted]") == 2
    assert ET.fromstring(text).find("testcase/failure") is not None
