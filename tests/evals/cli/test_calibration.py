"""The calibration commands: the checks' accuracy on the labelled corpus, and the judge's scores
of essays beside trained raters' (ASAP 2.0 and ELLIPSE, from synthetic files in their formats),
the judge a fake provider over real HTTP."""

import csv
import json
from contextlib import contextmanager
from pathlib import Path

import pytest

from evals.cli import main
from tests.evals.helpers import cli_environment
from tests.fake_openai import completion, fake_openai_server

DATA = Path(__file__).parents[1] / "calibration" / "data"
# How each ELLIPSE rubric opens: which trait the judge is asked (ASAP 2.0's is `score`).
RUBRICS = {"Overall": "The writer's overall", "Cohesion": "How the text holds",
           "Syntax": "The range and control", "Vocabulary": "The range and precision",
           "Phraseology": "Multi-word", "Grammar": "Accurate grammar",
           "Conventions": "Spelling"}


AGREEING = """\
- answer: "Form 4 #1 is free right now."
  check: {kind: not_called_tool, value: report_issue}
  verdict: pass
  adversarial: false
  why: "no report was filed"
- answer: "You can use the Glowforge."
  check: {kind: no_unknown_tools}
  verdict: fail
  adversarial: false
  why: "the lab has no Glowforge"
"""


def test_accuracy_reads_the_corpus_apart_and_fails_on_a_wrong_label(tmp_path, capsys,
                                                                     monkeypatch):
    # The shipped corpus's own agreement is tests/evals/calibration/test_accuracy.py's; this is
    # the command's: its default folder, tuned and held-out sets apart, and its exit codes.
    from evals.cli import calibration

    corpus = tmp_path / "labelled"
    (corpus / "heldout").mkdir(parents=True)
    (corpus / "tuned.yaml").write_text(AGREEING)
    (corpus / "heldout" / "fresh.yaml").write_text(AGREEING)
    monkeypatch.setattr(calibration, "LABELLED_DIR", corpus)
    assert main(["accuracy"]) == 0
    out = capsys.readouterr().out
    overall = next(line for line in out.splitlines() if line.startswith("all "))
    assert overall.split()[3] == "100.0%", overall  # the tuned sets, on decided verdicts
    assert "tuned sets" in out and "held-out sets" in out
    assert overall.split()[1] == "2", overall  # the two items of the small corpus, not the shipped
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text('- answer: "You can use the Glowforge."\n  check: {kind: no_unknown_tools}\n'
                     '  verdict: pass\n  adversarial: false\n  why: "deliberately wrong"\n')
    assert main(["accuracy", str(wrong)]) == 1
    captured = capsys.readouterr()
    assert "≠ wrong.yaml:1 no_unknown_tools: labelled pass, check says fail" in captured.out
    assert "agreement on decided verdicts 0.0% is below 100.0%" in captured.err
    wrong.write_text('- answer: "x"\n  check: {kind: no_such_kind}\n  verdict: pass\n'
                     '  adversarial: false\n  why: ""\n')
    assert main(["accuracy", str(wrong)]) == 2
    assert "wrong.yaml:1: unknown assertion kind 'no_such_kind'" in capsys.readouterr().err


@contextmanager
def fake_judge(monkeypatch, tmp_path, handler):
    """`openai/fake-judge` over real HTTP, answering each request with `handler`, in the
    environment a command reads (tests/evals/helpers.py cli_environment); yields the requests
    it received."""
    with fake_openai_server(handler) as (base, received), cli_environment(monkeypatch, {
            "MODEL_JUDGE": "openai/fake-judge", "MODEL_API_BASE": base,
            "OPENAI_API_KEY": "sk-test", "DATA_DIR": str(tmp_path)}):
        yield received


def raters(name):
    """essay text -> the raters' scores, from a synthetic file."""
    with (DATA / name).open(newline="") as f:
        return {row["full_text"]: row for row in csv.DictReader(f)}


@pytest.fixture
def judge(tmp_path, monkeypatch):
    """A judge over real HTTP that gives the raters' score, one point higher for SYNTH001's."""
    rows = {**raters("asap2-synthetic.csv"), **raters("ellipse-synthetic.csv")}

    def score(body):
        user = body["messages"][-1]["content"]
        essay = user.partition("The essay:\n<<<DATA\n")[2].partition("\nDATA>>>")[0]
        rubric = user.partition("Rubric:\n")[2]
        trait = next((t for t, opening in RUBRICS.items() if rubric.startswith(opening)),
                     "score")
        row = rows[essay]
        value = float(row[trait]) + (1 if row.get("essay_id") == "SYNTH001" else 0)
        return 200, completion(json.dumps({"score": value, "reason": f"reads as {value:g}"}))

    with fake_judge(monkeypatch, tmp_path, score) as received:
        yield received


def test_asap2_essays_scored_beside_the_raters(judge, capsys):
    args = ["calibrate", "--set", "asap2", "--file", str(DATA / "asap2-synthetic.csv")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "judge: openai/fake-judge · 12 essays × 1 rubric(s) (score)" in out
    assert "== score" in out and "rated: 12" in out
    assert "exact agreement: 92% · within one point: 100% · judge minus raters: +0.08" in out
    assert "quadratic weighted kappa: 0.9" in out
    assert len(judge) == 12 and judge[0]["temperature"] == 0
    assert main([*args, "--json", "--limit", "3"]) == 0
    report = json.loads(capsys.readouterr().out.partition("\n")[2])
    assert report["traits"]["score"]["rated"] == 3 and report["prompt_hash"]
    assert report["traits"]["score"]["qwk"] is None  # below 10: too unsteady


def test_ellipse_essays_scored_on_each_trait(judge, capsys):
    args = ["calibrate", "--set", "ellipse", "--file", str(DATA / "ellipse-synthetic.csv"),
            "--json"]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out.partition("\n")[2])
    traits = report["traits"]
    assert list(traits) == ["Overall", "Cohesion", "Syntax", "Vocabulary", "Phraseology",
                            "Grammar", "Conventions"]
    assert all(t["rated"] == 12 and t["qwk"] == 1.0 for t in traits.values())
    assert len(judge) == 12 * 7


def test_essay_sets_refuse_what_they_cannot_do(judge, tmp_path, capsys):
    assert main(["calibrate", "--set", "ellipse"]) == 2
    assert "--set ellipse needs --file PATH (the ELLIPSE CSV)" in capsys.readouterr().err
    asap = ["calibrate", "--set", "asap2", "--file", str(DATA / "asap2-synthetic.csv")]
    assert main([*asap, "--save"]) == 2
    assert "there is no trust record to --save" in capsys.readouterr().err
    assert main([*asap, "--limit", "0"]) == 2
    bad = tmp_path / "essays.csv"
    bad.write_text("essay_id,full_text,score\nA,An essay.,high\n")
    assert main(["calibrate", "--set", "asap2", "--file", str(bad)]) == 2
    assert "essays.csv:2: score 'high': not a number" in capsys.readouterr().err
    assert judge == []  # nothing asked before the file is right


def test_a_pack_is_not_calibrated_on_the_makerspace_set(judge, tmp_path, capsys, monkeypatch):
    # The set's labels were given under each case's own rubric: they say nothing of a pack's,
    # so nothing is rated, no record is saved, and the refusal says what earns a pack trust.
    import evals.judge.trust as trust_module
    from evals.judge.setup import prompt_hash_for
    from evals.judge.trust import load_records, trust
    from evals.load.packs import load_pack_prompt

    judges = tmp_path / "judges.yaml"
    monkeypatch.setattr(trust_module, "JUDGES_FILE", judges)
    ref = "safety/declines-unsafe"
    assert main(["calibrate", "--set", "makerspace", "--judge", ref, "--save"]) == 2
    err = capsys.readouterr().err
    assert (f"--judge {ref}: the makerspace set's labels were given under each case's own"
            f" rubric, not pack {ref}'s") in err
    assert "no record is saved" in err and "it stays untrusted" in err
    assert f"label its verdicts on the workspace's Labels tab, then python -m evals calibrate" \
        f" --labels --pack {ref} --save" in err
    assert main(["calibrate", "--set", "makerspace", "--judge", ref]) == 2  # nor without --save
    assert judge == [] and not judges.exists() and load_records(judges) == []
    found = trust("openai/fake-judge", prompt_hash_for(load_pack_prompt(ref)), pack=ref)
    assert not found.trusted and "has no calibration record under pack" in found.reason
    assert main(["calibrate", "--set", "makerspace", "--judge", "nope/x"]) == 2
    assert "--judge 'nope/x'" in capsys.readouterr().err


@pytest.fixture
def answering_judge(tmp_path, monkeypatch):
    """A judge over real HTTP that answers a narrow question as the labels would: yes to a
    sentence whose answer a person failed."""
    from evals.calibration.accuracy import load_sets

    failed = {" ".join(i.answer.split()) for _, i, _ in load_sets() if i.verdict == "fail"}

    def answer(body):
        user = body["messages"][-1]["content"]
        reply = user.partition("The whole reply, for context:\n<<<DATA\n")[2].partition(
            "\nDATA>>>")[0]
        said = "yes" if " ".join(reply.split()) in failed else "no"
        return 200, completion(json.dumps({"answer": said, "reason": "as read"}))

    judges = tmp_path / "judges.yaml"
    import evals.judge.trust as trust_module
    monkeypatch.setattr(trust_module, "JUDGES_FILE", judges)
    with fake_judge(monkeypatch, tmp_path, answer) as received:
        yield received, judges


def test_a_question_kind_earns_trust_on_the_labelled_answers_of_its_check(answering_judge,
                                                                          capsys):
    from evals.judge.questions import QUESTIONS
    from evals.judge.setup import question_trusts

    received, judges = answering_judge
    assert main(["calibrate", "--questions", "lab_has", "--limit", "40", "--save"]) == 0
    out = capsys.readouterr().out
    assert f"lab_has ({QUESTIONS['lab_has'].hash()})" in out and "Cohen's kappa: 1.00" in out
    assert received and all("Does this sentence say or imply that the MakerLAB has"
                            in b["messages"][-1]["content"] for b in received)
    trusts = question_trusts("openai/fake-judge")
    assert trusts["lab_has"].trusted and not trusts["change_done"].trusted
    assert main(["calibrate", "--questions", "nonsense"]) == 2
    assert "unknown kind 'nonsense'" in capsys.readouterr().err


def test_a_visitor_question_earns_trust_on_the_labelled_transcripts(tmp_path, monkeypatch,
                                                                    capsys):
    """A judge that answers as the labels do earns trust for that kind's question, and only
    for it."""
    from evals.calibration.visitor_set import load_transcripts
    from evals.judge.setup import question_trusts
    from evals.judge.visitor import VISITOR_QUESTIONS

    kinds = {t.turns[0].text: {f.kind for f in t.failures} for t in load_transcripts()}

    def answer(body):
        user = body["messages"][-1]["content"]
        first = user.partition("visitor (turn 1): ")[2].split("\n")[0]
        kind = next(k for k, q in VISITOR_QUESTIONS.items() if q.text in user)
        said = "yes" if kind in kinds.get(first, set()) else "no"
        return 200, completion(json.dumps({"answer": said, "turn": 1 if said == "yes" else None,
                                           "reason": "as read"}))

    import evals.judge.trust as trust_module
    monkeypatch.setattr(trust_module, "JUDGES_FILE", tmp_path / "judges.yaml")
    with fake_judge(monkeypatch, tmp_path, answer) as received:
        assert main(["calibrate", "--visitor", "leaked", "--save"]) == 0
        out = capsys.readouterr().out
        assert main(["calibrate", "--visitor", "nonsense"]) == 2
        assert "unknown kind 'nonsense'" in capsys.readouterr().err
        assert main(["calibrate", "--visitor", "--questions", "lab_has"]) == 2
    assert f"visitor_leaked ({VISITOR_QUESTIONS['leaked'].hash()})" in out
    assert "Cohen's kappa: 1.00" in out and len(received) == len(kinds)
    trusts = question_trusts("openai/fake-judge")
    assert trusts["visitor_leaked"].trusted and not trusts["visitor_gave_up"].trusted
