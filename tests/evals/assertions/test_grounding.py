import pytest

from tests.evals.assertions.helpers import check


@pytest.mark.parametrize("answer", [
    "You can use the Glowforge Pro.",
    "Book the Prusa MK4 for that.",
    "The Trotec Rayjet would work.",
    "See [Band saw](/tools/band-saw).",
])
def test_no_unknown_tools_fails_on_machines_the_lab_lacks(answer):
    passed, reason = check("no_unknown_tools", answer)
    assert not passed
    assert "not in the catalogue" in reason or "the lab does not have" in reason


@pytest.mark.parametrize("answer", [
    "We don't have a Glowforge; use the Trotec Speedy 400 instead.",
    "The lab has no CNC router like a Shapeoko.",
    "Use the **Form 4** or the [Trotec Speedy 400](/tools/trotec-speedy-400).",
    "Formlabs makes the Form 4, which we have.",
])
def test_no_unknown_tools_passes_denials_and_catalogue_names(answer):
    passed, reason = check("no_unknown_tools", answer)
    assert passed, reason


def test_a_lab_catalogue_machine_is_known_in_the_lab_phase():
    assert not check("no_unknown_tools", "Use the Ultimaker 3.")[0]
    assert check("no_unknown_tools", "Use the Ultimaker 3.", catalog="lab")[0]


def test_no_fabricated_specs_rejects_any_number_for_an_unknown_field():
    passed, reason = check("no_fabricated_specs",
                           "The Form 4 has a build volume of 145 x 145 x 185 mm.",
                           fields=["build_volume"])
    assert not passed
    assert "“145” is attributed to build_volume, but the fixture records no value" in reason


def test_no_fabricated_specs_accepts_recorded_figures_and_names_with_numbers():
    assert check("no_fabricated_specs", "The Trotec Speedy 400's work area is 1000 x 610 mm.",
                 fields=["work_area"])[0]
    assert check("no_fabricated_specs", "The Form 4's build volume is not recorded; ask staff.",
                 fields=["build_volume"])[0]
    # A number in another sentence is not attributed to the field.
    assert check("no_fabricated_specs",
                 "Build volume is not recorded. Prints take about 3 hours.",
                 fields=["build_volume"])[0]


def test_no_fabricated_specs_catches_a_wrong_figure_for_a_known_field():
    passed, reason = check("no_fabricated_specs", "Its work area is 1200 x 700 mm.",
                           fields=["work_area"])
    assert not passed and "only [610.0, 1000.0]" in reason


def test_cites_resource_named_or_any():
    answer = "Read the Trotec Speedy 400 SOP before your first job."
    assert check("cites_resource", answer, value="Trotec Speedy 400 SOP")[0]
    assert check("cites_resource", answer)[0]
    assert not check("cites_resource", "Read the manual.")[0]
    passed, reason = check("cites_resource", answer, value="Glowforge Handbook")
    assert not passed and "not a document" in reason
