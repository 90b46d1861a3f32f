"""The essay sets read from files in their published formats (synthetic files here: see
data/README.md): each essay with the line it starts on, its raters' scores per trait and its
task; every problem with a file a `file:line` error; the judge's score of each essay on each
trait beside the raters'."""

import json
from pathlib import Path

import pytest

from app.chat.models import ModelCallError
from app.chat.reply import ModelReply
from evals.calibration.calibrate import CalibrationError
from evals.calibration.essays import ASAP2, ELLIPSE, load_essays, rate_essays
from tests.fakes import ScriptedModel

DATA = Path(__file__).parent / "data"


def test_the_asap2_format_loads():
    essays, traits = load_essays(DATA / "asap2-synthetic.csv", ASAP2, 100)
    assert len(essays) == 12 and [t.column for t in traits] == ["score"]
    first, second = essays[:2]
    assert (first.id, first.line, first.scores) == ("SYNTH001", 2, {"score": 1.0})
    assert first.text == "later start good. i like sleep.\nthe end"
    assert second.line == 4  # the first essay spans two lines
    assert first.task.startswith("Write a letter to your principal")
    assert [e.id for e in load_essays(DATA / "asap2-synthetic.csv", ASAP2, 3)[0]] == [
        "SYNTH001", "SYNTH002", "SYNTH003"]


def test_the_ellipse_corpus_and_the_feedback_prize_headers_load(tmp_path):
    essays, traits = load_essays(DATA / "ellipse-synthetic.csv", ELLIPSE, 100)
    assert len(essays) == 12 and [t.column for t in traits] == [
        "Overall", "Cohesion", "Syntax", "Vocabulary", "Phraseology", "Grammar", "Conventions"]
    assert essays[0].scores["Vocabulary"] == 2.5 and essays[0].task.endswith("(synthetic prompt)")
    kaggle = tmp_path / "train.csv"
    kaggle.write_text("text_id,full_text,cohesion,syntax,vocabulary,phraseology,grammar,"
                      "conventions\nSYNTH-A,A short synthetic essay.,3.5,3.5,3,3,4,3.0\n")
    (essay,), traits = load_essays(kaggle, ELLIPSE, 10)
    assert "Overall" not in essay.scores and essay.scores["Grammar"] == 4.0
    assert essay.task == "(not given)" and len(traits) == 6


@pytest.mark.parametrize("text, says", [
    ("", "x.csv:1: an empty file"),
    ("essay_id,full_text\nA,text\n", "x.csv:1: missing column(s) score for the asap2 set"
                                      " (the header has: essay_id, full_text)"),
    ("id,full_text,score\nA,text,3\n", "x.csv:1: missing column(s) essay_id"),
    ("essay_id,full_text,score\n", "x.csv:1: no essay"),
    ("essay_id,full_text,score\nA,text,three\n", "x.csv:2: score 'three': not a number"),
    ("essay_id,full_text,score\nA,text,7\n", "x.csv:2: score '7': not a score on the scale"
                                             " (1, 2, 3, 4, 5, 6)"),
    ("essay_id,full_text,score\nA,text,3.5\n", "x.csv:2: score '3.5': not a score"),
    ("essay_id,full_text,score\nA,text,\n", "x.csv:2: score '': not a number"),
    ('essay_id,full_text,score\nA,"two\nlines",3\nA,text,4\n',
     "x.csv:4: id 'A' again (first at line 2)"),
    ("essay_id,full_text,score\n,text,3\nB,  ,3\n", "x.csv:2: no id\nx.csv:3: no full_text"),
    ("essay_id,full_text,score\nA,text\n", "x.csv:2: 2 fields, the header has 3"),
    ('essay_id,full_text,score\nA,"never closed,3\n', "x.csv:2: CSV: unexpected end of data"),
    ('essay_id,full_text,score\nA,"quoted"then,3\n', "x.csv:2: CSV: ',' expected after '\"'"),
])
def test_a_bad_asap2_file_is_a_file_line_error(tmp_path, text, says):
    path = tmp_path / "x.csv"
    path.write_text(text)
    with pytest.raises(CalibrationError) as exc:
        load_essays(path, ASAP2, 10)
    assert says in str(exc.value)


def test_bad_ellipse_files_and_unreadable_ones(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("text_id,full_text,prompt\nA,text,p\n")
    with pytest.raises(CalibrationError, match=r"x.csv:1: missing column\(s\) a score column"
                                               r" \(Overall, Cohesion"):
        load_essays(path, ELLIPSE, 10)
    path.write_text("text_id,full_text,Cohesion,Grammar\nA,text,2.25,5.5\n")
    with pytest.raises(CalibrationError) as exc:
        load_essays(path, ELLIPSE, 10)
    assert str(exc.value).splitlines() == [
        "x.csv:2: Cohesion '2.25': not a score on the scale (1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5)",
        "x.csv:2: Grammar '5.5': not a score on the scale (1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5)"]
    path.write_bytes(b"text_id,full_text,Cohesion\nA,fine,3\nB,caf\xe9,3\n")
    with pytest.raises(CalibrationError, match=r"x.csv:3: not UTF-8 text"):
        load_essays(path, ELLIPSE, 10)
    with pytest.raises(CalibrationError, match="nope.csv: No such file"):
        load_essays(tmp_path / "nope.csv", ELLIPSE, 10)
    path.write_text("text_id,full_text,Cohesion\n" + "".join(f"E{n},t,9\n" for n in range(30)))
    with pytest.raises(CalibrationError) as exc:
        load_essays(path, ELLIPSE, 10)
    lines = str(exc.value).splitlines()
    assert len(lines) == 21 and lines[-1] == "… and 10 more"  # every row, reported briefly


async def test_the_judge_scores_every_essay_on_every_trait(tmp_path):
    essays, traits = load_essays(DATA / "ellipse-synthetic.csv", ELLIPSE, 2)
    traits = traits[:2]

    def judge(messages, tools):
        user = messages[-1]["content"]
        if "alone is bored" in user and "How the text holds together" in user:
            return ModelReply(content="no score today")
        return ModelReply(content=json.dumps({"score": 3.5, "reason": "mixed control"}))

    model = ScriptedModel(judge, repeat=True)
    scored = await rate_essays(essays, traits, ELLIPSE, model)
    assert list(scored) == ["Overall", "Cohesion"] and len(model.requests) == 4
    overall = {s.id: (s.raters, s.judge) for s in scored["Overall"]}
    assert overall == {"SYNTH0001": (2.0, 3.5), "SYNTH0002": (3.0, 3.5)}
    unscored = next(s for s in scored["Cohesion"] if s.id == "SYNTH0001")
    assert unscored.judge is None and "not the JSON score" in unscored.reason
    user = model.requests[0]["messages"][1]["content"]
    assert "Is it better to work in a group or alone?" in user  # the task goes with it
    failing = ScriptedModel(ModelCallError("provider down"), repeat=True)
    down = await rate_essays(essays[:1], traits[:1], ELLIPSE, failing)
    assert down["Overall"][0].judge is None and "provider down" in down["Overall"][0].reason
