"""The selector language: every form fits and misses as documented, and what a file may not
write is named."""

import pytest

from app.capabilities import REGISTRY
from evals.checks.selectors import SUFFIXES, fields_of, matches, parse, selector_errors
from evals.load.scenarios import SELECTABLE


@pytest.mark.parametrize(("actual", "selectors", "misses"), [
    ({"slug": "Form-4"}, {"slug": "form-4"}, []),                      # case-insensitive
    ({"slug": " form-4 "}, {"slug": "form-4"}, []),                    # ends trimmed
    ({"reporter_name": None}, {"reporter_name": None}, []),            # null: absent
    ({}, {"reporter_name": None}, []),
    ({"reporter_name": ""}, {"reporter_name": None}, []),              # ... or empty
    ({"reporter_name": "Jo"}, {"reporter_name": None}, ["reporter_name is 'Jo', not None"]),
    ({"filed": True}, {"filed": False}, ["filed is True, not False"]),
    ({"ticket_id": 3}, {"ticket_id": 4}, ["ticket_id is 3, not 4"]),
    ({"status": "Resolved"}, {"status_in": ["open", "resolved"]}, []),
    ({"status": "open"}, {"status_in": ["in_progress", "resolved"]},
     ["status is 'open', not one of ['in_progress', 'resolved']"]),
    ({"ticket_id": 2}, {"ticket_id_in": [1, 2]}, []),
    ({}, {"status_in": ["open", None]}, []),                           # null in the list
    ({"description": "It SMOKED"}, {"description_contains": "smoke"}, []),
    ({"description": "It stopped"}, {"description_contains": "smoke"},
     ["description 'It stopped' lacks 'smoke'"]),
    ({"ticket_id": 13}, {"ticket_id_contains": "3"}, ["ticket_id 13 lacks '3'"]),  # text only
    ({"url": "https://FORMLABS.example/x"}, {"url_matches": r"formlabs\.example"}, []),
    ({"slug": "old-form-4x"}, {"slug_matches": r"form-\d"}, []),       # found anywhere
    ({"slug": "old-form-4x"}, {"slug_matches": r"^form-\d$"},          # anchored: the whole
     ["slug 'old-form-4x' does not match '^form-\\\\d$'"]),
    ({"slug": None}, {"slug_matches": "."}, ["slug None does not match '.'"]),
    ({"slug": "a", "title": "b"}, {"slug": "x", "title": "y"},         # every miss is named
     ["slug is 'a', not 'x'", "title is 'b', not 'y'"]),
    ("not a mapping", {"x": 1}, ["not a mapping"]),
    ("not a mapping", {}, []),                                         # no selectors: fits
])
def test_each_form_fits_and_misses_as_documented(actual, selectors, misses):
    assert matches(actual, selectors) == misses


def test_a_key_names_its_field_and_form():
    assert parse("slug") == ("slug", "is")
    assert parse("slug_in") == ("slug", "in")
    assert parse("body_contains") == ("body", "contains")
    assert parse("url_matches") == ("url", "matches")
    assert parse("_in") == ("_in", "is")


def test_no_field_a_selector_may_name_ends_like_a_form():
    """Else `field_in` could not tell the field `field_in` from `field` picked by one of."""
    names = {n for t in REGISTRY.all_tools().values() for model in (t.args, t.result)
             for n in model.model_fields}
    names |= {c for columns in SELECTABLE.values() for c in columns}
    assert not [n for n in names if parse(n)[1] != "is"], sorted(names)
    assert set(SUFFIXES) == {"_in", "_contains", "_matches"}


def test_a_field_holds_text_when_its_type_admits_text():
    assert fields_of(REGISTRY.tool("update_ticket").args) == {
        "ticket_id": False, "status": True, "note": True}  # status: an optional Literal
    assert fields_of(REGISTRY.tool("report_issue").result) == {
        "ticket_id": False, "machine": True, "filed": False, "anonymous": False}


FIELDS = {"slug": True, "ticket_id": False}


@pytest.mark.parametrize(("selectors", "message"), [
    ({"colour": "red"}, "x: unknown field 'colour'; known: slug, ticket_id"),
    ({"colour_in": ["red"]}, "x: unknown field 'colour'; known: slug, ticket_id"),
    ({"slug_contains": 3}, "x: slug_contains needs text"),
    ({"slug_matches": ["a"]}, "x: slug_matches needs text"),
    ({"ticket_id_contains": "3"}, "x: ticket_id_contains: ticket_id is not text, so _contains"
                                  " cannot select it"),
    ({"ticket_id_matches": "3"}, "x: ticket_id_matches: ticket_id is not text, so _matches"),
    ({"slug_matches": "form-(4"}, "x: slug_matches: not a valid pattern (missing ) at"
                                  " position 7)"),
    ({"slug_matches": "a{4294967296}"}, "x: slug_matches: not a valid pattern"),
    ({"slug_matches": "(" * 5000 + ")" * 5000}, "x: slug_matches: not a valid pattern (a"
                                                " pattern of 10,000 characters; at most 500)"),
    ({"slug_in": []}, "x: slug_in needs a list of one or more plain values"),
    ({"slug": ["a", "b"]}, "x: slug needs a plain value (text, a number, true/false, null), not"
                           " ['a', 'b']; for one of several, write slug_in"),
    ({"slug_in": "form-4"}, "x: slug_in needs a list of one or more plain values"),
    ({"slug_in": [["form-4"]]}, "x: slug_in needs a list of one or more plain values"),
])
def test_each_selector_a_file_may_not_write_is_named(selectors, message):
    [(key, said)] = selector_errors(selectors, FIELDS, "x")
    assert key == next(iter(selectors)) and said.startswith(message), said


def test_a_pattern_that_backtracks_without_end_is_no_match_not_a_hang():
    import time

    started = time.perf_counter()
    said = matches({"description": "a" * 4000 + "!"}, {"description_matches": "(a+)+$"})
    assert time.perf_counter() - started < 2  # 26 characters took 9 s with re
    assert len(said) == 1 and "does not match '(a+)+$'" in said[0]
    assert matches({"description": "smoke from the laser"}, {"description_matches": "smo+ke"}) \
        == []


def test_forms_and_values_can_be_limited_where_a_database_compares_them():
    columns = {"status": True}
    assert selector_errors({"status_in": ["open"]}, columns, "t", forms=("is", "contains")) == [
        ("status_in", "t: status_in: _in is not offered here (only field: value,"
                      " field_contains)")]
    assert selector_errors({"status": False}, columns, "t", text_only=True) == [
        ("status", "t: status needs text or null, not False (quote it)")]
    assert selector_errors({"status": None, "status_contains": "op"}, columns, "t",
                           text_only=True, forms=("is", "contains")) == []


def test_well_formed_selectors_pass():
    assert selector_errors({"slug": "form-4", "slug_in": ["a", None], "slug_contains": "f",
                            "slug_matches": "^f", "ticket_id": 3, "ticket_id_in": [1, 2]},
                           FIELDS, "x") == []
