"""The table of bench-peers: median and range of the rounds whose items all passed, the
issue's targets, "ahead on every column", and the notes on what runs left running."""

from evals.bench.peers_table import (
    CONTAINS_ALL,
    INSPECT,
    PROMPTFOO,
    SUITE,
    Measured,
    Outcome,
    Row,
    ahead,
    notes,
    table,
    target,
)
from evals.bench.processes import Timed


def run(wall, cpu, rss, outcome=None, left=0.0):
    return Measured(Timed(wall, cpu, rss, 0, left, ("postgres",) if left else ()),
                    outcome or Outcome(1, 1))


def test_the_table_shows_median_and_range_of_the_rounds_that_passed_and_names_the_others():
    good = Row(SUITE, CONTAINS_ALL, 1, [run(1.0, 0.8, 300), run(1.5, 0.9, 320),
                                         run(1.1, 0.7, 310)])
    failed = Row(PROMPTFOO, "contains Form 4", 1, [
        run(3.0, 2.0, 200), run(0.1, 0.1, 90, Outcome(0, 1, "exit 1; stderr: boom")),
        run(2.0, 1.0, 210)])
    lines = table([good, failed])
    assert lines[0].split() == ["tool", "check", "N", "wall", "s", "CPU", "s", "peak", "RSS",
                                "MiB", "items", "target"]
    assert "1.10 (1.00–1.50)  0.80 (0.70–0.90)  310 (300–320)" in lines[1]
    assert "all 1 passed, 3 of 3 rounds" in lines[1] and lines[1].endswith("wall ≤ 1.2 s: met")
    # The failed round is named and left out of the figures (0.1 s would be the minimum).
    assert "2.50 (2.00–3.00)  1.50 (1.00–2.00)  205 (200–210)" in lines[2]
    assert "round 2 FAILED: 0/1 passed, exit 1; stderr: boom" in lines[2]


def test_a_row_with_no_good_round_has_no_figures():
    row = Row(INSPECT, "includes Form 4", 200, [run(1, 1, 1, Outcome(0, 200, "exit 1"))])
    assert table([row])[1].split()[5:8] == ["—", "—", "—"]


def test_the_issues_targets_are_met_or_unmet_at_the_median_of_good_rounds():
    assert target(Row(SUITE, CONTAINS_ALL, 1, [run(1.2, 5, 1), run(1.3, 5, 1),
                                               run(1.0, 5, 1)])) == "wall ≤ 1.2 s: met"
    assert target(Row(SUITE, CONTAINS_ALL, 1, [run(1.3, 0, 1)])) == "wall ≤ 1.2 s: unmet"
    assert target(Row(SUITE, CONTAINS_ALL, 200, [run(9, 1.1, 1)])) == "CPU ≤ 1.1 s: met"
    assert target(Row(SUITE, CONTAINS_ALL, 200, [run(0, 1.2, 1)])) == "CPU ≤ 1.1 s: unmet"
    # A round whose items did not all pass leaves the target unmet, however fast the rest.
    assert target(Row(SUITE, CONTAINS_ALL, 200, [
        run(0, 0.5, 1), run(0, 0.5, 1, Outcome(199, 200, "1 FAIL"))])) == "CPU ≤ 1.1 s: unmet"
    assert target(Row(SUITE, CONTAINS_ALL, 50, [run(0, 0.5, 1)])) == ""  # not the issue's N
    assert target(Row(SUITE, CONTAINS_ALL, 200, [run(0, 0.5, 1)], concurrency=10)) == ""
    assert target(Row(SUITE, "no-glowforge", 1, [run(0.5, 0.5, 1)])) == ""
    assert target(Row(PROMPTFOO, "contains Form 4", 1, [run(0.5, 0.5, 1)])) == ""


def test_ahead_compares_this_suites_medians_with_both_peers_on_every_column():
    rows = [Row(SUITE, CONTAINS_ALL, 1, [run(1.0, 2.0, 300)]),
            Row(SUITE, "no-glowforge", 1, [run(9.0, 9.0, 900)]),
            Row(PROMPTFOO, "contains Form 4", 1, [run(2.0, 1.5, 200)]),
            Row(INSPECT, "includes Form 4", 1, [run(3.0, 3.0, 150)]),
            Row(SUITE, CONTAINS_ALL, 200, [run(1.0, 1.0, 1)]),
            Row(PROMPTFOO, "contains Form 4", 200, [run(2.0, 2.0, 2)]),
            Row(INSPECT, "includes Form 4", 200, [run(0, 0, 0, Outcome(0, 200, "exit 1"))])]
    lines = ahead(rows)
    assert lines[:3] == [
        "N=1    wall s        this suite 1.00 vs promptfoo 2.00, inspect_ai 3.00: ahead",
        "N=1    CPU s         this suite 2.00 vs promptfoo 1.50, inspect_ai 3.00:"
        " behind promptfoo",
        "N=1    peak RSS MiB  this suite 300 vs promptfoo 200, inspect_ai 150:"
        " behind promptfoo, inspect_ai"]
    assert lines[3] == ("N=200  wall s        this suite 1.00 vs promptfoo 2.00, inspect_ai —:"
                        " not measured (a row has no run whose items all passed)")
    assert len(lines) == 6


def test_the_notes_give_what_a_run_left_running_and_what_still_ran():
    rows = [Row(SUITE, CONTAINS_ALL, 1, [run(1, 1, 1, left=0.25), run(1, 1, 1, left=0.35)]),
            Row(PROMPTFOO, "contains Form 4", 1, [
                Measured(Timed(1, 1, 1, 0, 0, ("node",), still_running=1), Outcome(1, 1))]),
            Row(PROMPTFOO, "contains Form 4", 200, [run(1, 1, 1)])]
    assert notes(rows) == [
        f"{SUITE} {CONTAINS_ALL} N=1: of its CPU, processes it left running (postgres;"
        " reaped after it exited) 0.30 (0.25–0.35) s",
        f"{PROMPTFOO} contains Form 4 N=1: 1 process(es) it left still ran 30 s after it"
        " exited: their CPU is not counted"]


def test_a_suite_row_that_started_no_database_server_says_its_cpu_is_not_counted():
    rows = [Row(SUITE, CONTAINS_ALL, 200, [run(1, 1, 1), run(1, 1, 1)])]
    assert notes(rows) == [
        f"{SUITE} {CONTAINS_ALL} N=200: left nothing running: its database server was running"
        " before it (or DATABASE_URL names one), and that server's CPU is not in its figures"]
