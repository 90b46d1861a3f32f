"""Which consented turns become which cases: a flagged turn asked for by id only if its person
consented, with the online checks that failed on it as its assertions."""

import datetime as dt

from evals.authoring.picking import StoredTurn, flagged_checks, picked_turns


def turn(n: int) -> StoredTurn:
    return StoredTurn(n, "c", "u_x", dt.datetime(2026, 12, 1, tzinfo=dt.UTC), "hi", "ok", [],
                      "/", "student", [])


def test_a_flagged_turn_is_picked_only_when_its_person_consented():
    picked, left = picked_turns([turn(1), turn(2)], eligible={2}, flagged={2: [], 1: [], 9: []})
    assert [(kind, t.id) for kind, t in picked] == [("flagged", 2)]
    assert [line.split(":")[0] for line in left] == ["turn 1", "turn 9"]


def test_a_flagged_turns_checks_are_the_online_checks_that_failed_on_it():
    checks = flagged_checks(["not_claimed_done", "no_fabricated_specs"])["assert"]
    assert checks[0] == {"kind": "not_claimed_done"}
    assert checks[1]["kind"] == "no_fabricated_specs" and "build_volume" in checks[1]["fields"]
