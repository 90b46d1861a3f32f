from evals.record.results import Attempt, CaseResult, CheckResult, JudgeVerdict
from evals.record.transcript import Transcript, Turn
from evals.report.console import (
    case_line,
    detail_block,
    exit_code,
    print_report,
    redact,
    skip_lines,
    totals_line,
)


def r(status, **kw):
    return CaseResult(id="x", file="f.yaml", prompt="p", status=status, **kw)


def test_exit_code_fails_on_fail_error_or_undecided_not_flaky():
    assert exit_code([r("PASS"), r("FLAKY"), r("SKIPPED")]) == 0
    assert exit_code([r("PASS"), r("FAIL")]) == 1
    assert exit_code([r("ERROR")]) == 1
    assert exit_code([r("UNDECIDED")]) == 1
    assert exit_code([r("PASS"), r("SKIPPED")], fail_on_skip=True) == 1


def test_totals_and_skips_are_counted_and_every_skip_says_why():
    results = [r("PASS"), r("SKIPPED", skipped_reason="no image input"), r("FAIL")]
    assert totals_line(results) == ("1/3 passed · 0 flaky · 1 failed · 0 undecided · 0 errored"
                                    " · 1 skipped")
    assert skip_lines(results) == ["  skipped 1: no image input"]


def test_a_conversation_line_counts_its_visitor_turns():
    turns = [Turn(role="user", content="a"), Turn(role="assistant", content="b"),
             Turn(role="user", content="c"), Turn(role="assistant", content="d")]
    line = case_line(r("PASS", attempts=[Attempt(transcript=Transcript(turns=turns))]))
    assert line.endswith("(2 visitor turns)")


def test_an_advisory_verdict_says_why_the_judge_is_not_trusted():
    check = CheckResult(kind="judge", passed=True, reason="fine", decided=False,
                        judge=JudgeVerdict(model="j", prompt_hash="h", trust="kappa 0.1",
                                           verdict="pass"))
    block = detail_block(r("UNDECIDED", attempts=[Attempt(checks=[check])]))
    assert "? judge (j) undecided, advisory verdict pass: fine" in block
    assert "the judge is not trusted: kappa 0.1" in block


def test_the_console_is_redacted_like_the_artifact(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-value")
    answer = Transcript(answer="key sk-very-secret-value")
    import sys

    print_report([r("FAIL", attempts=[Attempt(transcript=answer)])], sys.stdout)
    out = capsys.readouterr().out
    assert "sk-very-secret-value" not in out and "[redacted]" in out


def test_redact_only_touches_secret_looking_variables():
    env = {"ANTHROPIC_API_KEY": "abc123456", "HOME": "/root"}
    assert redact("abc123456 at /root", env) == "[redacted] at /root"


def test_replies_cut_at_the_token_cap_are_reported():
    from app.chat.openai_wire import _reply
    from evals.record.results import Attempt, CaseResult, Usage
    from evals.report.console import cut_lines

    cut = _reply({"choices": [{"message": {"content": "and so on and so on"},
                               "finish_reason": "length"}]})
    whole = _reply({"choices": [{"message": {"content": "done"}, "finish_reason": "stop"}]})
    assert (cut.usage.cut, whole.usage.cut) == (1, 0) and (cut.usage + whole.usage).cut == 1
    cases = [CaseResult(id="a", file="f.yaml", prompt="p", status="FAIL",
                        attempts=[Attempt(usage=Usage(cut_at_cap=2)), Attempt()]),
             CaseResult(id="b", file="f.yaml", prompt="p", status="PASS", attempts=[Attempt()])]
    assert cut_lines(cases) == ["cut at the token cap: 2 model repl(ies) in 1 attempt(s) ended"
                                " at the cap (the embedded model's is 768 tokens): a"]
    assert cut_lines(cases[1:]) == []


def test_the_cost_tells_refused_retries_from_attempts_at_an_unknown_price():
    from evals.report.console import cost_lines

    def item(*attempts):
        return CaseResult(id="c", file="f.yaml", prompt="p", status="ERROR",
                          attempts=list(attempts))

    priced = Attempt(checks=[CheckResult(kind="k", passed=False, reason="no")], cost_usd=0.012)
    capped = Attempt(error="cost cap reached: this call may cost up to $0.0100",
                     failure="cost_cap")
    unpriced = Attempt(checks=[CheckResult(kind="k", passed=True, reason="ok")])
    assert cost_lines([item(priced, capped)], "openai/gpt-4o-mini") == [
        "cost: $0.0120 (1 attempt(s) refused by the cost cap)"]
    assert cost_lines([item(priced, capped), item(unpriced)], "openai/gpt-4o-mini") == [
        "cost: $0.0120 (1 attempt(s) at an unknown price; 1 attempt(s) refused by the cost"
        " cap)"]
    assert cost_lines([item(unpriced)], "local/qwen") == [
        "cost: unknown (local/qwen has no price in litellm's table)"]
    assert cost_lines([item(capped)], "openai/gpt-4o-mini") == [
        "cost: $0.0000 (1 attempt(s) refused by the cost cap)"]
    assert cost_lines([], "x") == []


def test_the_cost_line_names_every_jobs_part_when_the_record_keeps_them():
    from evals.record.run import Spent
    from evals.report.console import cost_lines

    capped = CaseResult(id="c", file="f.yaml", prompt="p", status="SKIPPED",
                        skipped_reason="cost cap reached: no new model call was made")
    spend = Spent(chat=0.45, judge=0.3, visitor=0.05, calibration=0.02, max_cost_usd=1.0,
                  unpriced=["openai/fake"])
    assert cost_lines([capped], "openai/gpt-4o-mini", spend) == [
        "cost: $0.8200 (chat $0.4500, judge $0.3000, visitor $0.0500, calibration $0.0200);"
        " of a $1.0000 cap; 1 item(s) or attempt(s) refused by the cost cap; not counted:"
        " openai/fake, at no known price"]
    assert cost_lines([], "x", Spent(chat=0.01)) == ["cost: $0.0100 (chat $0.0100)"]


def test_a_visitor_failing_at_three_turns_is_one_attempt_of_that_kind():
    from evals.record.results import Attempt, CaseResult
    from evals.record.visitor import VisitorCheck, VisitorFailure
    from evals.report.console import visitor_lines

    three = VisitorCheck(kinds=["broke_role", "leaked"], failures=[
        VisitorFailure(kind="broke_role", turn=n, reason="“How can I help you”")
        for n in (1, 2, 3)])
    unread = VisitorCheck(kinds=[], unread=[1])
    results = [CaseResult(id=f"talk{i}@calm", file="s.yaml", prompt="p", status="UNDECIDED",
                          attempts=[Attempt(visitor=v)]) for i, v in enumerate((three, unread))]
    assert visitor_lines(results) == [
        "simulated visitor: 1 of 2 conversation attempts failed (broke role 1) · 1 with a"
        " message in another language, not read · not checked: broke role in 1, leaked its"
        " instructions in 1, gave up before its goal, agreed to what it was told to refuse"]
