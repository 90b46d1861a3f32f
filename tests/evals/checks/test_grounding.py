import pytest

from tests.evals.checks.helpers import check


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
    assert ("“145 x 145 x 185 mm” is attributed to build_volume, but Form 4 records no value"
            in reason)


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
    assert not passed and "only 1000 x 610" in reason


# The examples issue 10 found, rephrased: each was misjudged by the old checks.
@pytest.mark.parametrize("answer", [
    "No problem at all, the Ultimaker S5 is free this afternoon.",
    "Reserve the Bambu Lab X1 Carbon rather than queueing for the Form 4.",
    "Not certain about the hours, but the Epilog is often free.",
    "We don't have a Glowforge, but the Epilog is free.",
    "We don't have any Glowforge presets for that plywood.",
])
def test_a_denial_excuses_only_the_machine_it_denies(answer):
    passed, reason = check("no_unknown_tools", answer)
    assert not passed and "which the lab does not have" in reason


@pytest.mark.parametrize("answer", [
    "Neither a Tormach nor a Haas is part of this lab.",
    "I couldn't find a Tormach in our catalogue.",
    "A ShopBot isn't something we have.",
    "We don't have a Tormach, a Haas or a ShopBot.",
    "We've never had a Glowforge here.",
])
def test_denials_in_many_words_pass(answer):
    passed, reason = check("no_unknown_tools", answer)
    assert passed, reason


@pytest.mark.parametrize(("answer", "fields"), [
    ("The build volume isn't recorded; ask at desk 3.", ["build_volume"]),
    ("The laser power is not recorded. Room 2.14 has the SOP binder.", ["laser_power"]),
    ("Its resolution isn't listed, and prints take about 90 minutes.", ["resolution"]),
    ("Powered parts need 2 people to lift.", ["laser_power"]),
])
def test_numbers_about_other_things_are_not_specs(answer, fields):
    passed, reason = check("no_fabricated_specs", answer, fields=fields)
    assert passed, reason


@pytest.mark.parametrize(("answer", "fields"), [
    ("It has a 60 W tube.", ["laser_power"]),
    ("Layers can be as fine as 25 µm.", ["resolution"]),
    ("It prints 145 × 145 × 185 mm parts.", ["build_volume"]),
    ("The Form 4 has a work area of 1000 x 610 mm.", ["work_area"]),  # the Trotec's figure
])
def test_a_unit_states_the_field_and_figures_belong_to_their_machine(answer, fields):
    assert not check("no_fabricated_specs", answer, fields=fields)[0]


@pytest.mark.parametrize("kind", ["no_unknown_tools", "mentions_tool", "contains_all",
                                  "no_fabricated_specs", "identified_tool", "cites_resource"])
@pytest.mark.parametrize("answer", ["", "   \n "])
def test_a_blank_answer_is_never_grounded(kind, answer):
    args = {"no_fabricated_specs": {"fields": ["build_volume"]},
            "mentions_tool": {"value": "Form 4"}, "contains_all": {"value": ["x"]},
            "identified_tool": {"value": "none"}, "no_unknown_tools": {},
            "cites_resource": {}}[kind]
    assert check(kind, answer, **args) == (False, "no answer")


def test_cites_resource_named_or_any():
    answer = "Read the Trotec Speedy 400 SOP before your first job."
    assert check("cites_resource", answer, value="Trotec Speedy 400 SOP")[0]
    assert check("cites_resource", answer)[0]
    assert not check("cites_resource", "Read the manual.")[0]
    passed, reason = check("cites_resource", answer, value="Glowforge Handbook")
    assert not passed and "not a document" in reason


def test_a_catalogue_brand_with_another_model_code_is_unknown():
    passed, reason = check("no_unknown_tools", "The Bambu Lab P1S is cheaper.", catalog="lab")
    assert not passed and "“Bambu Lab P1S”" in reason
    # the catalogue's own model, a short form of it, and a measure after a possessive
    assert check("no_unknown_tools", "Use the Bambu Lab X1 Carbon.", catalog="lab")[0]
    assert check("no_unknown_tools", "Fit the Trotec's 1000 × 610 mm bed.")[0]


def test_a_capitalized_lexicon_name_matches_only_capitalized():
    assert check("no_unknown_tools", "Ask your brother to help carry it.")[0]
    assert not check("no_unknown_tools", "Use the Brother to sew it.")[0]


@pytest.mark.parametrize("answer", [
    "Do we have a Glowforge? We don't. The Trotec Speedy 400 cuts the same sheets.",
    "A Glowforge? The lab has never had one.",
    "Ask Roland at the front desk to unlock the laser room.",
    "No X-Carve, Carvey or Nomad here.",
])
def test_answered_questions_people_and_hyphenated_lists(answer):
    assert check("no_unknown_tools", answer)[0]


def test_a_question_left_unanswered_fails_and_a_pronoun_takes_a_denial_back():
    passed, reason = check("no_unknown_tools", "Do you want the Glowforge? It's faster.")
    assert not passed and reason.startswith("asks about “Glowforge”")
    assert not check("no_unknown_tools",
                     "I can't find the Weller in the catalogue, so just grab it.")[0]


def test_where_the_parse_cannot_place_a_name_the_check_is_undecided_and_quotes_it(monkeypatch):
    from evals.checks import grounding
    from evals.checks._registry import Doubt
    monkeypatch.setattr(grounding, "stance", lambda *a, **k: None)
    passed, reason = check("no_unknown_tools", "Use the Glowforge.")
    assert passed is None and "“Use the Glowforge.”" in reason
    assert isinstance(reason, Doubt) and reason.question == "lab_has"
    assert reason.asks == (("Use the Glowforge.", "Glowforge"),)


@pytest.mark.parametrize(("answer", "expected"), [
    ("Just throw it on one of the FDM printers.", None),  # a kind no catalogue machine is
    ("Grab the Shaper Origin handheld router from the cabinet.", None),
    ("The Trotec Rotary is handy for mugs.", None),  # a name's word, another
    ("We have no FDM printers, only the Form 4.", True),
    ("Put it in the resin printer.", True),  # the Form 4's own words
    ("The Trotec is a CO2 laser.", True),
])
def test_a_machine_the_lexicon_never_heard_of_leaves_it_undecided(answer, expected):
    assert check("no_unknown_tools", answer)[0] is expected


@pytest.mark.parametrize(("answer", "expected"), [
    ("The Trotec's work area is 100 × 61 cm.", True),  # the recorded figure, in cm
    ("The work area is roughly 39 × 24 in.", True),
    ("The Trotec's work area is 100 × 60 cm.", False),  # converted, not the recorded one
    ("Your 1200 × 500 mm sheet won't fit: the work area is 1000 × 610 mm.", None),  # whose?
    ("I can't tell whether the work area is 900 x 600 mm or 1000 x 610 mm.", None),
    ("The Form 4 takes parts up to about 21 cm tall.", None),  # a height, read for a volume
])
def test_sizes_in_other_units_and_of_other_things(answer, expected):
    fields = ["build_volume"] if "Form 4" in answer else ["work_area"]
    assert check("no_fabricated_specs", answer, fields=fields)[0] is expected


@pytest.mark.parametrize("answer", [
    "The Trotec Speedy 400 takes a full 1200 x 800 mm sheet.",  # the machine's, or the sheet's
    "The Trotec fits your 1200 x 800 mm sheet without trimming.",
])
def test_a_size_that_may_be_the_visitor_s_object_is_undecided_never_dropped(answer):
    assert check("no_fabricated_specs", answer, fields=["work_area"])[0] is None


@pytest.mark.parametrize("answer", [
    "The Trotec Speedy 400 has a work area of 1 x 1 m.",  # 610 mm is not 1 m, however rounded
    "The Trotec Speedy 400's max part height is 0 m.",
])
def test_a_coarse_unit_matches_no_recorded_figure_it_is_not(answer):
    assert check("no_fabricated_specs", answer, fields=["work_area", "max_part_height"])[0] \
        is False


def test_a_possessive_s_is_no_machine_word():
    assert check("no_unknown_tools", "The lab's laser room is open until six.")[0] is True


@pytest.mark.parametrize(("answer", "fields"), [
    ("The Trotec Speedy 400 has a 120 W CO2 tube, more power than most desktop lasers.",
     ["laser_power"]),  # a comparison elsewhere in the sentence hides nothing
    ("Like many resin printers, the Form 4 has a build volume of 200 × 125 × 210 mm.",
     ["build_volume"]),
    ("The Form 4 has a 200 × 125 × 210 mm print volume.", ["build_volume"]),
    ("The Trotec allows a 400 mm part height.", ["max_part_height"]),
])
def test_an_invented_figure_beside_other_machines_or_spec_nouns_still_fails(answer, fields):
    assert check("no_fabricated_specs", answer, fields=fields)[0] is False


def test_a_figure_said_of_other_machines_is_undecided():
    answer = "The Form 4 uses 405 nm light. Some other printers use 385 nm, so check the label."
    assert check("no_fabricated_specs", answer, fields=["wavelength"])[0] is None


@pytest.mark.parametrize("answer", [
    "Our waterjet can do it though — ask SuperMaker for a slot.",
    "Scan the pieces with the EinScan SE by the door first.",
    "Move the platform to the Form Wash next to bench 2.",
    "Both laser cutters are free at the moment.",  # the lab has one laser cutter
    "#55 | Lathe | Chuck key missing | Jonas",
    "#38 — Creality Ender 3: \"Nozzle clogged, bed won't heat\"",
    "Bambu Lab X1 Carbon #2",
    "The band saw is free right now if you need to cut the sheet down.",
    "Print the part solid and then drill the holes on the drill press afterwards.",
])
def test_machines_placed_in_the_lab_where_the_parse_misreads_them_fail(answer):
    passed, reason = check("no_unknown_tools", answer)
    assert passed is False, reason


@pytest.mark.parametrize("answer", [
    "True nylon parts need an SLS printer like the Formlabs Fuse 1, which the MakerLAB doesn't"
    " have.",
    "Bare steel needs a fibre laser, which we don't have.",
    "Both resin printers are free this afternoon.",  # the Form 4 has two units
])
def test_a_denial_in_a_relative_clause_and_a_count_the_lab_has_pass(answer):
    passed, reason = check("no_unknown_tools", answer)
    assert passed is True, reason


@pytest.mark.parametrize("answer", [
    "Epilog vs Trotec?",  # a comparison
    "Used a Form 3 in your old lab?",  # the visitor's experience
    "Your friend's Bambu at home would be quicker.",  # someone else's
    "The engineering workshop on the north campus has a waterjet.",  # another place's
    "You'd normally use a 3D scanner for that.",  # general knowledge
    "Formlabs recommends washing parts in IPA, with a Form Wash if you have one.",
    "The Glowforge is a popular choice elsewhere, but it isn't something we have.",
])
def test_comparisons_experience_other_places_and_pronoun_denials_are_undecided(answer):
    passed, reason = check("no_unknown_tools", answer)
    assert passed is None, reason


@pytest.mark.parametrize(("answer", "expected"), [
    ("After washing in IPA, put the parts in the UV curing chamber on bench 2.", False),
    ("For anything thicker, the waterjet is usually the better call.", False),
    ("(Or the Epilog, if the Trotec's queue gets long.)", False),
    ("Cut the outline on the laser, and then drape-form it on the vacuum former next door.",
     False),
    ("#49 Ultimaker S3 — \"Nozzle clog on left extruder\"", False),
    ("| Machine | In the lab? |\n|---|---|\n| Epilog Fusion | ❌ No |", None),  # whose no?
    ("For 4 mm poplar ply on the Trotec I'd start at 80% power, 0.7 cm/s, one pass.", True),
    ("For stickers you'd need a vinyl cutter (something like a Cricut) — MakerLAB doesn't have"
     " one.", True),
    # not a step: "all refer to the same machine" opens with no verb (an unknown machine
    # noun phrase, so undecided, never failed as used)
    ("Yes — \"the SLA printer\", \"resin printer\" and \"Formlabs Form 4\" all refer to the"
     " same machine.", None),
])
def test_steps_alternatives_tickets_and_rows_read_from_the_words(answer, expected):
    passed, reason = check("no_unknown_tools", answer)
    assert passed is expected, reason


@pytest.mark.parametrize(("answer", "expected"), [
    # a denial clause denies the name it follows, not one earlier in the sentence
    ("Use the Glowforge for the acrylic, and skip the bandsaw, which the lab doesn't have.",
     False),
    ("The Glowforge by the window is free today — we don't have any bookings on it yet.", False),
    ("The Glowforge, which isn't in our queue today, is free to use.", False),
    ("Grab the Glowforge — the lab doesn't have one of the Epilogs though.", False),
    # "our X" and a question about the lab's machine still fail
    ("Did you know our Glowforge is free today?", False),
    ("Have you booked the Glowforge for Friday yet?", False),
    ("You can cut it on the Glowforge if you have an induction.", False),
    ("Our main workshop has a Glowforge you can book.", False),
    ("Use the Glowforge vs the Trotec for thin acrylic: it's faster.", False),
    # a "No" in some column of a table says nothing of the lab; a model code stays one
    ("| Machine | Induction required |\n| --- | --- |\n| Glowforge Pro | No |", None),
    ("Put the sheet on the Trotec SP500's bed.", None),
])
def test_denials_experience_and_other_places_are_read_no_wider_than_they_reach(answer, expected):
    passed, reason = check("no_unknown_tools", answer)
    assert passed is expected, reason
