"""The judge against stored labels: one judge model and prompt, people's disagreements and
skips left out and counted, a choice of prompt when the labels span several, and a pack's
verdicts calibrated only on labels given with the pack's rubric in view."""

import pytest

from evals.calibration.calibrate import CalibrationError
from evals.calibration.labels import from_labels, render_extra
from evals.record.labels import Label, add_labels
from tests.evals.record.helpers import judged_run, stored

JUDGE = ["pass"] * 6 + ["fail"] * 6


def labels(run: str, verdicts: list[str], by: str, under: tuple[str, str] | None = None
           ) -> list[Label]:
    """Labels of a run's verdicts, given under a pack's rubric (`under`: its ref and the
    prompt hash shown) or the case's own."""
    rubric = {"rubric_pack": under[0], "rubric_hash": under[1]} if under else {}
    return [Label(run=run, item=f"case-{i}", repetition=1, attempt=1, check=2, kind="judge",
                  verdict=v, by=by, **rubric) for i, v in enumerate(verdicts)]


async def test_agreement_and_kappa_from_stored_labels(store):
    await stored(store, judged_run("lab0001", [*JUDGE, "pass", "pass"]))
    people = ["pass"] * 5 + ["fail"] * 7 + ["pass", "skip"]  # one disagreement with the judge
    await add_labels(store, labels("lab0001", people, "ana"))
    await add_labels(store, [Label(run="lab0001", item="case-12", repetition=1, attempt=1,
                                   check=2, kind="judge", verdict="fail", by="ben")])
    found = await from_labels(store, "judge-m")
    assert found.prompt_hash == "h1" and found.result.rated == 12
    assert found.result.agreement == pytest.approx(11 / 12)
    assert found.result.kappa == pytest.approx(0.8333, abs=1e-3)
    assert [d["id"] for d in found.result.disagreements] == ["lab0001/case-5#r1a1c2"]
    assert found.people_disagree == ["lab0001/case-12#r1a1c2"] and found.only_skipped == 1
    extra = render_extra(found)
    assert "people disagree (left out): 1" in extra and "only skipped (left out): 1" in extra


async def test_another_judge_model_or_prompt_is_kept_apart(store):
    await stored(store, judged_run("lab0001", JUDGE))
    await stored(store, judged_run("lab0002", JUDGE, prompt_hash="h2"))
    await add_labels(store, labels("lab0001", JUDGE, "ana") + labels("lab0002", JUDGE, "ana"))
    with pytest.raises(CalibrationError, match=r"several judge prompts: h1 \(12\), h2 \(12\)"):
        await from_labels(store, "judge-m")
    assert (await from_labels(store, "judge-m", "h2")).result.rated == 12
    with pytest.raises(CalibrationError, match="no labelled verdicts of judge other-m"):
        await from_labels(store, "other-m")


async def test_a_pack_s_verdicts_are_calibrated_apart(store):
    await stored(store, judged_run("lab0001", JUDGE))
    await stored(store, judged_run("lab0002", JUDGE, prompt_hash="hp", pack="safety/kind"))
    people = ["pass"] * 6 + ["fail"] * 5 + ["pass"]  # one disagreement with the pack's verdicts
    await add_labels(store, labels("lab0001", JUDGE, "ana")
                     + labels("lab0002", people, "ana", ("safety/kind", "hp")))
    found = await from_labels(store, "judge-m", pack="safety/kind")
    assert found.prompt_hash == "hp" and found.result.rated == 12
    assert found.result.agreement == pytest.approx(11 / 12)
    assert [d["id"] for d in found.result.disagreements] == ["lab0002/case-11#r1a1c2"]
    assert found.not_under_rubric == 0
    plain = await from_labels(store, "judge-m")  # the plain prompt's, apart: the pack's
    assert plain.prompt_hash == "h1"            # verdicts never count for it
    assert plain.result.rated == 12 and plain.result.agreement == 1.0
    with pytest.raises(CalibrationError, match="no labelled verdicts of judge judge-m with pack"
                                               " safety/other"):
        await from_labels(store, "judge-m", pack="safety/other")


async def test_labels_given_under_the_cases_rubric_are_not_used_for_a_pack(store):
    # ana labelled the pack's verdicts before the tab showed a pack's rubric (as every label
    # stored before it was recorded): under the case's own rubric, which says nothing of the
    # pack's. Only ben's, given with the pack's rubric in view, count for the pack.
    await stored(store, judged_run("lab0002", JUDGE, prompt_hash="hp", pack="safety/kind"))
    await add_labels(store, labels("lab0002", JUDGE, "ana"))
    with pytest.raises(CalibrationError, match="no labelled verdicts of judge judge-m with pack"
                                               " safety/kind labelled with the pack's rubric in"
                                               r" view .*12 label\(s\) of its verdicts were"
                                               " given without its rubric in view"):
        await from_labels(store, "judge-m", pack="safety/kind")
    people = ["fail"] * 12  # ben, with the pack's rubric in view, disagrees on half
    await add_labels(store, labels("lab0002", people, "ben", ("safety/kind", "hp")))
    found = await from_labels(store, "judge-m", pack="safety/kind")
    assert found.result.rated == 12 and found.result.agreement == pytest.approx(0.5)
    assert found.people_disagree == [] and found.not_under_rubric == 12  # ana's left out
    assert "labels given without pack safety/kind's rubric in view (left out): 12" in \
        render_extra(found)
    with pytest.raises(CalibrationError, match="no labelled verdicts of judge judge-m"):
        await from_labels(store, "judge-m")  # nor do the pack's verdicts count for the plain


async def test_a_label_under_a_pack_s_rubric_counts_only_for_the_prompt_shown(store):
    # ben saw the pack's rubric as it was under another prompt hash (the pack changed): the
    # verdict was not given under the rubric he saw, so the store does not keep it.
    from evals.record.labels import LabelError

    await stored(store, judged_run("lab0002", JUDGE, prompt_hash="hp", pack="safety/kind"))
    with pytest.raises(LabelError, match="was not given under pack safety/kind's prompt old"):
        await add_labels(store, labels("lab0002", JUDGE, "ben", ("safety/kind", "old")))
    with pytest.raises(LabelError, match="was not given under pack safety/other's prompt hp"):
        await add_labels(store, labels("lab0002", JUDGE, "ben", ("safety/other", "hp")))
    await stored(store, judged_run("lab0001", JUDGE))  # a case's verdict: no pack's rubric
    with pytest.raises(LabelError, match="was not given under pack safety/kind's prompt"):
        await add_labels(store, labels("lab0001", JUDGE, "ben", ("safety/kind", "h1")))
