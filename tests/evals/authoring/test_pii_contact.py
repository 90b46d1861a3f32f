"""Contact details as spans: a phone number read as the lab's region or a visitor's, written
as there; an order number that happens to be valid somewhere is not one."""

from evals.authoring.pii import phone_regions
from evals.authoring.pii_contact import phones


def test_phone_numbers_are_spans_and_an_order_number_is_none():
    regions = phone_regions("US,FR")
    text = "call 617-555-0199 or 06 12 34 56 78, order 4471-2093-55"
    found = [text[s:e] for s, e in phones(text, regions)]
    assert found == ["617-555-0199", "06 12 34 56 78"]
