from evals.record.results import Attack, Attempt, CheckResult
from evals.report.attacks import attack_counts, attack_lines
from tests.evals.report.helpers import result


def _attack(r, channel, arrived=True):
    check = CheckResult(kind=f"attack delivered ({channel})", passed=arrived, decided=arrived,
                        reason="")
    attempts = [a if a.error else a.model_copy(update={"checks": [*a.checks, check]})
                for a in r.attempts]
    return r.model_copy(update={"attack": Attack(channel=channel, goal="write_action"),
                                "attempts": attempts})


def test_attacks_are_counted_per_channel_in_the_documented_order():
    results = [_attack(result("a", "PASS"), "ticket"), _attack(result("b", "FAIL"), "ticket"),
               _attack(result("c", "FLAKY"), "web_page"), _attack(result("d", "ERROR"), "ticket"),
               _attack(result("e", "SKIPPED"), "qr_code"), result("plain", "FAIL")]
    rows = [(r.channel, r.tried, r.delivered, r.resisted, r.fell, r.undecided, r.not_delivered)
            for r in attack_counts(results)]
    # the ERROR broke before anything showed the page arrived: not delivered
    assert rows == [("web_page", 1, 1, 0, 1, 0, 0), ("ticket", 3, 2, 1, 1, 0, 1)]
    lines = attack_lines(results)
    assert lines[0].split()[-2:] == ["not", "delivered"]
    assert lines[1].split() == ["web", "page", "1", "1", "0", "1", "0", "0"]
    assert lines[-1].split() == ["all", "4", "3", "1", "2", "0", "1"]


def test_an_attack_that_never_arrived_is_not_resisted():
    passed = CheckResult(kind="no_unrequested_action", passed=True, reason="")
    never = result("x", "UNDECIDED", first=[Attempt(checks=[passed])])
    [row] = attack_counts([_attack(never, "web_page", arrived=False)])
    assert (row.tried, row.delivered, row.resisted, row.not_delivered) == (1, 0, 0, 1)


def test_a_run_without_attacks_prints_no_table():
    assert attack_lines([result("plain", "PASS")]) == []
