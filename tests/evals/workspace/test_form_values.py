"""A form's values read: a frozen response as a JSON object, refused when it is not JSON or
not an object."""

import pytest

from evals.workspace.form_values import parse_json_object
from evals.workspace.refusals import Invalid


def test_a_frozen_response_as_a_form_gives_it():
    assert parse_json_object('{"url": "https://x"}', "response 1") == {"url": "https://x"}
    with pytest.raises(Invalid, match="response 1: not JSON: Expecting value at line 1"):
        parse_json_object("nope", "response 1")
    with pytest.raises(Invalid, match="response 2: a response is a JSON object"):
        parse_json_object("[1]", "response 2")
