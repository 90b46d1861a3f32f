from evals.record.fingerprint import JudgePlan, PlanInfo, Selection, digest


def test_a_selection_reads_comma_lists_and_says_itself_in_one_line():
    s = Selection.of("a, b,,", " staff queue ", only="cases", full=True)
    assert s.names == ("a", "b") and s.groups == ("staff queue",)
    assert s.describe() == "cases=a,b; groups=staff queue; only=cases; styles=full"
    assert Selection().describe() is None
    assert Selection.of(file="x.yaml").describe() == "file=x.yaml"


def test_a_digest_ignores_key_order_and_sees_every_value():
    assert digest({"a": 1, "b": [1, 2]}) == digest({"b": [1, 2], "a": 1})
    assert digest({"a": 1}) != digest({"a": 2})


def test_plan_changes_name_what_changed():
    old = PlanInfo(fingerprint="1", cases={"a": "x", "b": "y"},
                   fixtures={"f": "1", "gone": "1"}, judge=JudgePlan(), repeat=1, harness="h")
    new = old.model_copy(update={"fingerprint": "2", "cases": {"a": "z", "c": "y"},
                                 "fixtures": {"f": "2", "new": "1"}, "harness": "h2"})
    assert new.changes_since(old) == [
        "case added: c", "case removed: b", "case edited: a", "now a fixture of this plan: new",
        "no longer a fixture of this plan: gone", "fixture changed: f",
        "harness changed (the checks, the catalogue pins or the judge code)"]
    assert old.changes_since(old) == []
