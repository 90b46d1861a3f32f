"""`run --suite`: a public set against an endpoint over real HTTP, with the report, exit code and
artifact of a run. MRBench: each dialogue once, the reply judged on MRBench's dimensions;
GSM8K (a synthetic file in its format): each problem once, its number checked, no judge."""

import json
from pathlib import Path

import pytest

from evals.cli import main
from tests.evals.calibration.helpers import SAMPLE
from tests.fake_openai import completion, fake_openai_server

GSM8K = Path(__file__).parents[1] / "calibration" / "data" / "gsm8k-synthetic.jsonl"


def answer(body):
    if body.get("response_format"):  # the judge
        return 200, completion(json.dumps({"verdict": "pass", "reason": "it guides"}))
    question = body["messages"][-1]["content"]
    if question.startswith("A bakery"):
        return 200, completion("14 + 28 = 42 muffins, 42 * 3 = 126.\n#### $126")
    if question.startswith("Lena"):
        return 200, completion("#### 12")
    if question.startswith("A school trip"):
        return 500, {"error": {"message": "the tutor fell over"}}
    return 200, completion("What did you get after the jog? Check that step again.")


@pytest.fixture
def served(tmp_path, monkeypatch):
    from app.settings import get_settings

    data = tmp_path / "mr.json"
    data.write_text(json.dumps(SAMPLE * 2))  # the same dialogue twice: run once
    with fake_openai_server(answer) as (base, received):
        for name, value in {"MODEL_JUDGE": "openai/fake-judge", "MODEL_API_BASE": base,
                            "OPENAI_API_KEY": "sk-test", "DATA_DIR": str(tmp_path),
                            "MODEL_RETRIES": "0"}.items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()
        try:
            yield base, received, data
        finally:
            get_settings.cache_clear()


def test_each_dialogue_is_sent_and_judged_on_every_dimension(served, tmp_path, capsys):
    base, received, data = served
    artifact = tmp_path / "run.json"
    args = ["run", "--suite", "mrbench", "--file", str(data), "--limit", "5",
            "--endpoint", base, "--endpoint-model", "tutor", "--artifact", str(artifact)]
    assert main(args) == 1  # an uncalibrated judge: UNDECIDED, not a pass
    out = capsys.readouterr().out
    sent = [b for b in received if not b.get("response_format")]
    judged = [b for b in received if b.get("response_format")]
    assert len(sent) == 1 and sent[0]["model"] == "tutor"
    assert sent[0]["messages"][1:] == [{"role": "assistant", "content": "..."},
                                       {"role": "user", "content": "4000"}]
    assert len(judged) == 4 and "1 undecided" in out
    record = json.loads(artifact.read_text())
    (case,) = record["cases"]
    kinds = [c["kind"] for c in case["attempts"][0]["checks"]]
    assert kinds == ["mrbench:Mistake_Identification", "mrbench:Revealing_of_the_Answer",
                     "mrbench:Providing_Guidance", "mrbench:Actionability"]
    assert record["settings"]["suite"] == "mrbench"
    assert record["models"]["endpoint"] == f"tutor at {base}"
    assert main([*args, "--trust-judge"]) == 0
    assert "1/1 passed" in capsys.readouterr().out


def test_the_suite_needs_its_file_and_endpoint(served, tmp_path, capsys):
    base, received, data = served
    assert main(["run", "--suite", "mrbench", "--endpoint", base,
                 "--endpoint-model", "tutor"]) == 2
    assert "--suite mrbench needs --file PATH (MRBench_V2.json)" in capsys.readouterr().err
    missing = tmp_path / "nope.json"
    assert main(["run", "--suite", "mrbench", "--file", str(missing), "--endpoint", base,
                 "--endpoint-model", "tutor"]) == 2
    assert "nope.json" in capsys.readouterr().err and received == []


def test_gsm8k_problems_are_answered_and_checked_exactly(served, tmp_path, capsys):
    base, received, _ = served
    artifact = tmp_path / "run.json"
    junit = tmp_path / "junit.xml"
    args = ["run", "--suite", "gsm8k", "--file", str(GSM8K), "--limit", "4",
            "--endpoint", base, "--endpoint-model", "solver", "--artifact", str(artifact)]
    assert main([*args, "--junit", str(junit)]) == 1
    out = capsys.readouterr().out
    assert f"junit: {junit}" in out and 'failures="' in junit.read_text()
    assert "4 GSM8K problems, answers checked exactly" in out
    assert all(not b.get("response_format") for b in received)  # no judge
    assert len(received) == 4 and {b["model"] for b in received} == {"solver"}
    record = json.loads(artifact.read_text())
    status = {c["id"]: c["status"] for c in record["cases"]}
    assert status == {"gsm8k-1": "PASS", "gsm8k-2": "FAIL", "gsm8k-3": "FAIL",
                      "gsm8k-4": "ERROR"}
    assert "expected 10, the reply answers 12" in out
    assert record["settings"]["suite"] == "gsm8k"
    assert record["settings"]["suite_file"] == "gsm8k-synthetic.jsonl"
    assert record["settings"]["judge_prompt_hash"] is None and record["models"]["judge"] is None
    assert record["cases"][0]["attempts"][0]["checks"][0]["kind"] == "gsm8k:answer"


def test_a_bad_gsm8k_file_stops_before_any_call(served, tmp_path, capsys):
    base, received, _ = served
    bad = tmp_path / "g.jsonl"
    bad.write_text('{"question": "How many?", "answer": "3"}\n')
    args = ["run", "--suite", "gsm8k", "--endpoint", base, "--endpoint-model", "solver"]
    assert main([*args, "--file", str(bad)]) == 2
    assert "g.jsonl:1: the answer has no '#### <number>' at its end" in capsys.readouterr().err
    assert main(args) == 2
    assert "--suite gsm8k needs --file PATH (GSM8K's test.jsonl)" in capsys.readouterr().err
    assert main([*args, "--file", str(GSM8K), "--limit", "0"]) == 2
    assert "--limit must be at least 1" in capsys.readouterr().err
    assert received == []


@pytest.mark.parametrize("flags", [["--repeat", "2"], ["--max-cost", "1"], ["--ray"],
                                   ["--model", "openai/x"], ["--cases", "honest-absence"]])
def test_a_flag_a_suite_run_cannot_honour_is_refused(flags, served, capsys):
    base, received, _ = served
    assert main(["run", "--suite", "gsm8k", "--file", str(GSM8K), "--endpoint", base,
                 "--endpoint-model", "solver", *flags]) == 2
    assert f"leave out {flags[0]}" in capsys.readouterr().err
    assert received == []
