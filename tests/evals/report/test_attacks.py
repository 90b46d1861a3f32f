from evals.record.results import Attack
from evals.report.attacks import attack_counts, attack_lines
from tests.evals.report.helpers import result


def _attack(r, channel):
    return r.model_copy(update={"attack": Attack(channel=channel, goal="write_action")})


def test_attacks_are_counted_per_channel_in_the_documented_order():
    results = [_attack(result("a", "PASS"), "ticket"), _attack(result("b", "FAIL"), "ticket"),
               _attack(result("c", "FLAKY"), "web_page"), _attack(result("d", "ERROR"), "ticket"),
               _attack(result("e", "SKIPPED"), "qr_code"), result("plain", "FAIL")]
    rows = [(r.channel, r.tried, r.resisted, r.fell, r.undecided) for r in attack_counts(results)]
    assert rows == [("web_page", 1, 0, 1, 0), ("ticket", 3, 1, 1, 1)]
    lines = attack_lines(results)
    assert lines[1].split() == ["web", "page", "1", "0", "1", "0"]
    assert lines[-1].split() == ["all", "4", "1", "2", "1"]


def test_a_run_without_attacks_prints_no_table():
    assert attack_lines([result("plain", "PASS")]) == []
