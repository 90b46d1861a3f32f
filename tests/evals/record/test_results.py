"""An item's status from its attempts (PASS, FLAKY, FAIL, UNDECIDED, ERROR), what an attempt
counts, whether a first attempt decided, and the totals per status."""

import pytest

from evals.record.results import (
    STATUSES,
    Attempt,
    CaseResult,
    CheckResult,
    Totals,
    certain_miss,
    classify,
    counted_status,
    first_decided,
)
from evals.record.transcript import ToolCall, Transcript, Turn
from evals.record.visitor import VisitorCheck, VisitorFailure

OK = CheckResult(kind="k", passed=True, reason="fine")
MISS = CheckResult(kind="k", passed=False, reason="missed")
BROKEN = CheckResult(kind="k", passed=False, reason="the check raised", error=True)
ADVISORY = CheckResult(kind="judge", passed=True, reason="kind", decided=False)

PASSED = Attempt(checks=[OK])
FAILED = Attempt(checks=[OK, MISS])
UNDECIDED = Attempt(checks=[OK, ADVISORY])
ERRORED = Attempt(error="model call failed")
LOST = Attempt(error="model call failed: 429 rate limited", failure="rate_limit")


@pytest.mark.parametrize(("attempts", "status"), [
    ([PASSED], "PASS"),
    ([UNDECIDED], "UNDECIDED"),  # no retry: the judge would not decide the second time either
    ([FAILED, PASSED], "FLAKY"),
    ([FAILED, FAILED], "FAIL"),
    ([FAILED], "FAIL"),
    ([FAILED, UNDECIDED], "UNDECIDED"),
    ([FAILED, ERRORED], "FAIL"),  # a failed check stays a FAIL when the retry breaks
    ([ERRORED, FAILED], "FAIL"),
    ([ERRORED, PASSED], "FLAKY"),  # the first attempt broke, the retry passed
    ([ERRORED, UNDECIDED], "UNDECIDED"),
    ([ERRORED, ERRORED], "ERROR"),
    ([ERRORED], "ERROR"),
    ([Attempt(checks=[OK, BROKEN])], "ERROR"),  # a check that raised is an error, not a fail
])
def test_classify_by_the_rules_the_module_states(attempts, status):
    assert classify(attempts) == status


@pytest.mark.parametrize(("attempts", "status"), [
    ([LOST, PASSED], "PASS"),  # the provider lost the first: the pass is the first that counts
    ([LOST, FAILED], "FAIL"),
    ([LOST, FAILED, PASSED], "FLAKY"),
    ([FAILED, LOST], "FAIL"),
    ([LOST], "ERROR"),
    ([LOST, LOST], "ERROR"),
    ([Attempt(error="cost cap reached", failure="cost_cap"), PASSED], "FLAKY"),  # refused
])
def test_an_attempt_lost_to_the_provider_is_neither_a_pass_nor_a_fail(attempts, status):
    assert classify(attempts) == status


VISITOR_FAILED = VisitorCheck(kinds=["broke_role", "leaked"], failures=[
    VisitorFailure(kind="leaked", turn=2, reason="“simulated visitor”")])


@pytest.mark.parametrize(("attempts", "status"), [
    ([FAILED.model_copy(update={"visitor": VISITOR_FAILED})], "UNDECIDED"),
    ([PASSED.model_copy(update={"visitor": VISITOR_FAILED})], "UNDECIDED"),
    ([PASSED.model_copy(update={"visitor": VisitorCheck(kinds=["leaked"])})], "PASS"),
    ([FAILED.model_copy(update={"visitor": VisitorCheck(kinds=["leaked"])}), FAILED], "FAIL"),
    ([ERRORED.model_copy(update={"visitor": VISITOR_FAILED})], "ERROR"),
])
def test_a_conversation_whose_visitor_failed_is_undecided_whatever_its_checks(attempts,
                                                                              status):
    assert classify(attempts) == status


def test_an_informational_check_is_reported_never_counted():
    info_miss = MISS.model_copy(update={"required": False})
    info_broken = BROKEN.model_copy(update={"required": False})
    attempt = Attempt(checks=[OK, info_miss, info_broken])
    assert attempt.counted == [OK]
    assert attempt.passed and not attempt.broke and not attempt.failed_a_check
    assert classify([attempt]) == "PASS"


def test_what_an_attempt_says_of_itself():
    assert PASSED.passed and not PASSED.broke and not PASSED.undecided
    assert not FAILED.passed and FAILED.failed_a_check and not FAILED.undecided
    assert UNDECIDED.undecided and not UNDECIDED.passed and not UNDECIDED.failed_a_check
    assert ERRORED.broke and not ERRORED.passed and not ERRORED.undecided
    assert Attempt(checks=[BROKEN]).broke and not Attempt(checks=[BROKEN]).failed_a_check
    # an undecided judge beside a failed check: the failure decides, not the judge
    both = Attempt(checks=[MISS, ADVISORY])
    assert both.failed_a_check and not both.undecided


def test_an_attempt_reads_its_transcript():
    call = ToolCall(name="search_catalog", arguments={"query": "laser"})
    turns = [Turn(role="user", content="hi"), Turn(role="assistant", content="Hello.")]
    attempt = Attempt(transcript=Transcript(answer="Hello.", tool_calls=[call], turns=turns))
    assert (attempt.answer, attempt.tool_calls, attempt.turns) == ("Hello.", [call], turns)


def result(status, *attempts):
    return CaseResult(id="a", file="f.yaml", prompt="p", status=status, attempts=list(attempts))


@pytest.mark.parametrize(("case", "decided"), [
    (result("PASS", PASSED), True),
    (result("FAIL", FAILED, FAILED), False),
    (result("FLAKY", FAILED, PASSED), False),  # the first attempt is what counts
    (result("FLAKY", ERRORED, PASSED), None),  # its first attempt broke: it cannot say
    (result("UNDECIDED", UNDECIDED), None),
    (result("ERROR", ERRORED, ERRORED), None),
    (result("SKIPPED"), None),
    (result("PASS"), None),  # no attempt recorded
])
def test_only_a_decided_first_attempt_counts(case, decided):
    assert first_decided(case) is decided


def test_totals_count_every_status():
    assert STATUSES
    results = [result(s) for s in STATUSES for _ in range(STATUSES.index(s) + 1)]
    totals = Totals.of(results)
    assert totals == Totals(cases=21, passed=1, flaky=2, failed=3, undecided=4, errored=5,
                            skipped=6)
    assert Totals.of([]) == Totals()


@pytest.mark.parametrize(("attempts", "counted"), [
    # a first attempt that failed a check or broke, a retry an untrusted judge left open:
    # FLAKY if it passes, FAIL if not, a miss either way
    ([FAILED, UNDECIDED], "FAIL"),
    ([ERRORED, UNDECIDED], "FAIL"),
    ([UNDECIDED], "UNDECIDED"),  # the judge's own call: open
    ([LOST, UNDECIDED], "UNDECIDED"),  # a lost attempt does not count
    ([FAILED, PASSED], "FLAKY"),  # every other status is its own
])
def test_a_failed_first_attempt_is_a_miss_whatever_an_untrusted_judge_says_of_the_retry(
        attempts, counted):
    case = result(classify(attempts), *attempts)
    assert counted_status(case) == counted
    assert certain_miss(case) is (case.status == "UNDECIDED" and counted == "FAIL")
