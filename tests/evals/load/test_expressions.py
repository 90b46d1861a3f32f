"""Expressions over a tool call's arguments in a frozen response: what parses, how a value is
rendered (kept whole, or written into text), and the sample arguments they are checked with."""

import pytest
from pydantic import BaseModel

from evals.load.expressions import (
    Expression,
    ExpressionError,
    expressions,
    parse,
    render,
    sample_arguments,
)


@pytest.mark.parametrize(("body", "expected"), [
    (" args.slug ", Expression("slug")),
    ("args.ticket_id", Expression("ticket_id")),
    (" args.slug | default('form-4') ", Expression("slug", "form-4", True)),
    ('args.slug|default("form-4")', Expression("slug", "form-4", True)),
    ("args.count | default(3)", Expression("count", 3, True)),
    ("args.note | default(null)", Expression("note", None, True)),
])
def test_an_expression_is_an_argument_and_perhaps_a_literal_default(body, expected):
    assert parse(body) == expected


@pytest.mark.parametrize("body", [
    " slug ", " args ", " args.slug.name ", " args['slug'] ", " args.slug() ",
    " __import__('os').system('true') ", " args.slug | upper ",
    " args.slug | default(args.other) ", " args.slug | default([1]) ",
    " args.slug | default('it's') ",
    " args.slug | default(" + "9" * 5000 + ") ",  # past Python's digits for an integer
    " args.slug | default(NaN) ", " args.slug | default(Infinity) ",
    ' args.slug | default("\\u0007bell") ',  # a control character, written as an escape
])
def test_anything_else_is_refused_never_run(body):
    with pytest.raises(ExpressionError, match="not|control character"):
        parse(body)


def test_a_control_character_in_a_default_is_named_by_its_code_point():
    with pytest.raises(ExpressionError, match=r"holds the control character U\+0007$"):
        parse(' args.slug | default("\\u0007bell") ')


def test_a_lone_surrogate_in_a_default_is_refused_by_its_code_point():
    with pytest.raises(ExpressionError, match=r"holds the lone surrogate U\+D800"):
        parse(' args.slug | default("\\ud800") ')


def test_a_whole_string_keeps_the_arguments_json_type_and_text_gets_it_written_in():
    response = {"ticket_id": "{{ args.ticket_id }}", "resolved": "{{args.done}}",
                "title": "Ticket {{ args.ticket_id }} ({{ args.done }}) for {{ args.slug }}",
                "nested": [{"slug": "{{ args.slug }}"}], "count": 2}
    arguments = {"ticket_id": 7, "done": True, "slug": "form-4"}
    assert render(response, arguments) == {
        "ticket_id": 7, "resolved": True, "title": "Ticket 7 (true) for form-4",
        "nested": [{"slug": "form-4"}], "count": 2}


def test_an_absent_argument_is_null_whole_empty_in_text_or_its_default():
    response = {"slug": "{{ args.slug }}", "note": "for {{ args.slug }}.",
                "given": "{{ args.slug | default('any') }}"}
    assert render(response, {"slug": None}) == {"slug": None, "note": "for .", "given": "any"}
    assert render(response, {"slug": ""})["given"] == "any"
    assert render(response, {"slug": "x"})["given"] == "x"


def test_two_expressions_in_one_string_are_two_never_one_whole_value():
    assert render("{{ args.a }}-{{ args.b }}", {"a": 1, "b": 2}) == "1-2"


def test_expressions_are_found_with_their_place_and_an_unclosed_one_is_an_error():
    found = list(expressions({"a": ["x {{ args.slug }}", "{{ args.url }}"], "b": "{{ oops }}",
                              "c": "{{ args.slug"}))
    assert [(path, getattr(e, "field", None)) for path, e in found] == [
        (("a", 0), "slug"), (("a", 1), "url"), (("b",), None), (("c",), None)]
    assert isinstance(found[2][1], ExpressionError)
    assert "'{{' opens no expression" in str(found[3][1])


def test_sample_arguments_fit_each_type_and_leave_optional_ones_out_once():
    from typing import Literal

    class Args(BaseModel):
        slug: str
        ticket_id: int
        status: Literal["open", "resolved"] | None = None
        ratio: float = 0.5
        urgent: bool = False

    sample, omitted = sample_arguments(Args)
    assert sample == {"slug": "sample", "ticket_id": 1, "status": "open", "ratio": 1.5,
                      "urgent": True}
    assert omitted == {"slug": "sample", "ticket_id": 1, "status": None, "ratio": 0.5,
                       "urgent": False}

    class Required(BaseModel):
        slug: str

    assert sample_arguments(Required) == [{"slug": "sample"}]
