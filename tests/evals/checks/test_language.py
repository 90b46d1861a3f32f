"""A check that reads a language's words says UNDECIDED on an answer in another, naming both;
a check that reads no words (tool calls, names, addresses) decides in any language."""

import pytest

from evals.checks import CHECKS
from evals.checks._language import reading, unreadable
from tests.evals.checks.helpers import call, check

SPANISH_CLAIM = "Listo: he cerrado el ticket #4 y he marcado la Form 4 como disponible."


@pytest.mark.parametrize("text", [
    "We don't have a Glowforge, but the Trotec Speedy 400 works.",
    "I can't find a Tormach in our catalogue.",  # the names are no language's words
    "[Glowforge](https://glowforge.com) isn't in our catalogue.",
    "Our laser is a Trotec Speedy 360.",
    "Done!", "All set.",
])
def test_english_answers_read_as_english(text):
    assert unreadable(text, "en") is None


@pytest.mark.parametrize(("text", "name"), [
    (SPANISH_CLAIM, "Spanish"), ("C'est fait : j'ai fermé le ticket.", "French"),
    ("Ik heb het ticket gesloten.", "Dutch"), ("Zamknąłem zgłoszenie #4.", "Polish"),
    ("Xin lỗi, chúng tôi không có máy Glowforge.", "Vietnamese"),
])
def test_an_answer_in_another_language_is_named(text, name):
    assert unreadable(text, "en") == f"the answer is in {name}; this check reads English"


def test_names_and_figures_alone_belong_to_no_language():
    assert reading("Form 4 #2, 1000 x 610 mm").top is None
    assert unreadable("Trotec Speedy 400", "en") is None


@pytest.mark.parametrize("kind", ["not_claimed_done", "no_unknown_tools"])
def test_a_check_that_reads_english_is_undecided_on_another_language_never_passed(kind):
    passed, reason = check(kind, SPANISH_CLAIM)
    assert passed is None and reason == "the answer is in Spanish; this check reads English"


def test_literals_read_the_language_they_are_written_in():
    assert check("not_contains_any", SPANISH_CLAIM, value=["closed"])[0] is None
    assert check("not_contains_any", SPANISH_CLAIM, value=["he cerrado"], language="es") == \
        (False, "contains 'he cerrado': “…Listo: he cerrado el ticket #4 y he marcado la Form 4"
                " como disponible.…”")
    assert check("contains_all", SPANISH_CLAIM, value=["Form 4"], language="any")[0] is True


def test_a_literal_of_an_unknown_language_is_refused():
    with pytest.raises(ValueError, match="unknown language 'xx'"):
        CHECKS["contains_all"].args.model_validate({"value": ["a"], "language": "xx"})


def test_checks_that_read_no_words_decide_in_any_language():
    assert CHECKS["mentions_tool"].language(None) is None
    assert check("mentions_tool", SPANISH_CLAIM, value="Form 4")[0] is True
    assert check("called_tool", SPANISH_CLAIM, calls=[call("search_catalog")],
                 value="search_catalog")[0] is True


def test_a_sentence_in_another_language_inside_an_english_answer_is_not_read_as_english():
    mixed = ("Sure! I went through the maintenance queue and everything looks fine. He cerrado"
             " el ticket #4 y lo he marcado como resuelto.")
    passed, reason = check("not_claimed_done", mixed)
    assert passed is None and reason.startswith("a sentence of the answer is in Spanish")
    assert check("not_claimed_done", "Perfect! He cerrado el ticket.")[0] is None


def test_a_machine_name_is_taken_out_whole_the_longest_first_in_any_case():
    from evals.checks._language import prose

    # "Formlabs Form 4L" before "Formlabs Form 4" and "Formlabs"; figures go after names.
    assert prose("Formlabs Form 4L, then Formlabs Form 4.") == " , then  ."
    assert prose("FORMLABS FORM 4L!") == " !"
    # No name ends inside a word: "Form 4Lx" is no name, "Formlabs" before it is one.
    assert prose("a Formlabs Form 4Lx") == "a   Form  "
    # Names with signs in them; "MK3S+x" holds "MK3S" only.
    assert prose("an Original Prusa i3 MK3S+ and an MK3S+x") == "an   and an  + "
    assert prose("the Electronics workbench (ESD).") == "the  ."
    # A word's letters are letters, digits and "_": a joiner or a combining mark after a name
    # does not make it part of a longer word.
    assert prose("the Glowforge\u200c\u0647\u0627") == "the  \u200c\u0647\u0627"
    assert prose("Formlabs\u0301 Form 4") == " \u0301  "
    assert prose("Formlabs\u0345 Form 4") == " \u0345  "  # a mark that folds to a letter


def test_addresses_are_taken_out_whole_and_a_long_word_is_read_once():
    from evals.checks._language import prose

    assert prose("write to (sam@example.edu) or see https://x.org/a") == "write to ]  or see ] "
    # An e-mail match starts only where a word does: an 80,000-letter word with no @ is
    # scanned once (it took 7 s when the match could start at every letter).
    assert prose("a" * 80_000) == "a" * 80_000


def test_plainly_english_text_is_read_by_the_quick_models_alone(monkeypatch):
    """For a check that reads English, the full models (2 s to load) are asked only about text
    the quick ones do not find plainly English; what they say of it stands. A check of another
    language always goes by the full models."""
    from evals.checks import _language

    asked = []
    full = _language._detector

    def counted():
        asked.append(True)
        return full()

    monkeypatch.setattr(_language, "_detector", counted)
    english = "The quick models read this plainly English answer about the laser on its own."
    assert unreadable(english, "en") is None and asked == []
    spanish = "Las impresoras de resina están libres toda la tarde, según el calendario."
    assert unreadable(spanish, "en") == "the answer is in Spanish; this check reads English"
    assert asked
    # English with Spanish words: a check that reads Spanish asks the full models, which
    # give Spanish its share, as before the quick models were added.
    mixed = "The printer is ready, gracias, see you mañana at the lab with the filamento."
    assert _language._reading_for(mixed, "es") == reading(mixed)
