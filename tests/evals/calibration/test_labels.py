"""The judge against stored labels: one judge model and prompt, people's disagreements and
skips left out and counted, and a choice of prompt when the labels span several."""

import pytest

from evals.calibration.calibrate import CalibrationError
from evals.calibration.labels import from_labels, render_extra
from evals.record.labels import Label, add_labels
from tests.evals.record.helpers import judged_run, stored

JUDGE = ["pass"] * 6 + ["fail"] * 6


def labels(run: str, verdicts: list[str], by: str) -> list[Label]:
    return [Label(run=run, item=f"case-{i}", repetition=1, attempt=1, check=2, kind="judge",
                  verdict=v, by=by) for i, v in enumerate(verdicts)]


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
    await add_labels(store, labels("lab0001", JUDGE, "ana") + labels("lab0002", people, "ana"))
    found = await from_labels(store, "judge-m", pack="safety/kind")
    assert found.prompt_hash == "hp" and found.result.rated == 12
    assert found.result.agreement == pytest.approx(11 / 12)
    assert [d["id"] for d in found.result.disagreements] == ["lab0002/case-11#r1a1c2"]
    plain = await from_labels(store, "judge-m", "h1")  # the plain prompt's, apart
    assert plain.result.rated == 12 and plain.result.agreement == 1.0
    with pytest.raises(CalibrationError, match="no labelled verdicts of judge judge-m with pack"
                                               " safety/other"):
        await from_labels(store, "judge-m", pack="safety/other")
