"""Measuring manual search: the figures of hand-made outcomes, and a few questions searched
for real in the eval's database (hash embedder), rendered as the command prints them."""

import pytest

from evals.calibration.retrieval import load_set, render, report, search_all
from evals.calibration.retrieval.measure import Found, Outcome, Searched, figures

F4 = "Form 4 Manual"


def _outcome(kind, rank, *scores):
    found = [Found(manual=F4, page=i + 1, score=s) for i, s in enumerate(scores)]
    searched = Searched(rank=rank, found=found)
    return Outcome(id=f"q{rank}", where="x.yaml:1", kind=kind, question="?", expected=[],
                   modes={"fused": searched, "text": Searched(rank=None, found=[]),
                          "vector": searched})


def test_figures_of_hand_made_outcomes():
    outcomes = [
        _outcome("searchable", 1, 0.9, 0.1),
        _outcome("searchable", 2, 0.5, 0.4),
        _outcome("searchable", None, 0.3),
        _outcome("none", None, 0.6),  # as sure as a real answer: counts against search
        _outcome("none", None),  # nothing found: an honest no answer
        _outcome("attached", None, 0.4),
    ]
    fused = figures(outcomes, "fused")
    assert (fused.n, fused.threshold) == (3, 0.5)
    assert fused.recall_at_1 == pytest.approx(1 / 3)
    assert fused.recall_at_5 == pytest.approx(2 / 3)
    assert fused.mrr == pytest.approx((1 + 1 / 2 + 0) / 3)
    assert (fused.no_answer.n, fused.no_answer.confident) == (2, 1)
    assert (fused.attached.n, fused.attached.confident) == (1, 0)
    text = figures(outcomes, "text")  # found nothing for anything
    assert (text.recall_at_1, text.mrr, text.threshold) == (0.0, 0.0, None)
    assert text.no_answer.confident == 0


SET = """\
- id: stir
  question: stir the resin in the tank
  answer: {manual: Form 4 Manual, pages: [2]}
- id: lens
  question: how often do I clean the lens
  answer: {manual: Trotec Speedy 400 Operator Guide, pages: [2]}
- id: wifi
  question: wifi password please
  answer: none
"""


async def test_a_few_questions_searched_in_the_eval_database(env, tmp_path):
    path = tmp_path / "few.yaml"
    path.write_text(SET)
    outcomes = await search_all(env.library, load_set(path))
    stir, lens, wifi = outcomes
    assert [o.kind for o in outcomes] == ["searchable", "attached", "none"]
    assert stir.modes["fused"].rank == 1 and stir.modes["text"].rank == 1
    assert stir.modes["text"].found[0].manual == F4 and stir.expected == ["Form 4 Manual p. 2"]
    # The 10 fixture passages, every one ranked by the vector half; none of the guide's.
    assert len(stir.modes["vector"].found) == 10
    assert all(f.manual != "Trotec Speedy 400 Operator Guide"
               for o in outcomes for s in o.modes.values() for f in s.found)
    assert lens.attached is True and lens.modes["fused"].rank is None
    assert wifi.modes["text"].found == [] and wifi.attached is None
    result = report(outcomes, set_name="few.yaml", embedder="hash-test")
    assert result.counts == {"searchable": 1, "attached": 1, "none": 1}
    assert result.attached_on_page == 1
    assert [m.mode for m in result.modes] == ["fused", "text", "vector"]
    text = render(result)
    assert "manual search · few.yaml: 3 questions · embedder hash-test" in text
    assert "fused       1.000    1.000  1.000    1" in text
    assert "1 answerable, 1 only in an attached manual (1/1 attached" in text
    assert "stir" not in text  # misses only with verbose
    verbose = render(result, verbose=True)
    assert "few.yaml:1 stir" not in verbose  # first in every mode
    assert "few.yaml:4 lens “how often do I clean the lens” → Trotec Speedy 400 Operator" \
           " Guide p. 2 (attached only)" in verbose
    assert "few.yaml:7 wifi “wifi password please” → no answer" in verbose
    assert " · text nothing · " in verbose
