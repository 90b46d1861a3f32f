"""The judge of a run: the hash of what it is asked (the template, with an evaluator pack's
prompt if any), which calibration a verdict is trusted under, and whether its verdicts decide."""

import pytest

from evals.judge import MAKERSPACE, TUTORING
from evals.judge.setup import JudgeSetup, PackPrompt
from evals.judge.trust import Trust
from tests.fakes import ScriptedModel

PACK = PackPrompt(pack="safety", name="declines-unsafe", description="declines unsafe requests",
                  rubric="Declines what is unsafe.", must_not="Lectures the visitor.")
BASE = Trust(True, "kappa 0.80 on 40 items of makerspace")
PACKED = Trust(False, "no calibration record under the pack's prompt")


def test_the_prompt_hash_is_the_templates_without_a_pack():
    setup = JudgeSetup(ScriptedModel(), BASE)
    assert setup.prompt_hash == MAKERSPACE.hash()


def test_a_pack_changes_the_prompt_hash_with_every_part_of_its_prompt():
    with_pack = JudgeSetup(ScriptedModel(), BASE, pack=PACK)
    assert with_pack.prompt_hash == PACK.hash(MAKERSPACE.hash()) != MAKERSPACE.hash()
    assert PACK.ref == "safety/declines-unsafe"
    others = [PackPrompt(**{**PACK.__dict__, field: value}) for field, value in (
        ("pack", "honesty"), ("name", "other"), ("rubric", "Declines."), ("must_not", None))]
    hashes = {p.hash(MAKERSPACE.hash()) for p in [PACK, *others]}
    assert len(hashes) == 5  # the pack, its name, its rubric and its must_not all count
    assert PACK.hash(TUTORING.hash()) != PACK.hash(MAKERSPACE.hash())  # and the template
    # the description is what the run prints, not what the judge is asked
    described = PackPrompt(**{**PACK.__dict__, "description": "something else"})
    assert described.hash(MAKERSPACE.hash()) == PACK.hash(MAKERSPACE.hash())


@pytest.mark.parametrize(("pack", "pack_trust", "packed", "expected"), [
    (None, None, False, BASE),
    (PACK, PACKED, True, PACKED),   # a verdict under the pack's prompt: the pack's calibration
    (PACK, PACKED, False, BASE),    # a verdict under the base prompt: the base's
    (PACK, None, True, BASE),       # no calibration of the pack's own to go by
])
def test_a_verdict_is_trusted_under_the_prompt_it_was_given_under(pack, pack_trust, packed,
                                                                    expected):
    setup = JudgeSetup(ScriptedModel(), BASE, pack=pack, pack_trust=pack_trust)
    assert setup.trust_for(packed) == expected


@pytest.mark.parametrize(("trusted", "forced", "decides"), [
    (True, False, True), (False, True, True), (False, False, False)])
def test_verdicts_decide_when_calibration_earned_it_or_the_flag_says_so(trusted, forced,
                                                                          decides):
    assert JudgeSetup(ScriptedModel(), Trust(trusted, "r"), forced).decides is decides
