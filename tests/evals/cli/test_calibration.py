"""The calibration commands: the checks' accuracy on the labelled corpus, and MRBench run as a
suite (each dialogue to a tutoring endpoint over real HTTP, the reply judged on MRBench's
dimensions with the same harness, the report and artifact as for cases)."""

import json

import pytest

from evals.cli import main
from tests.evals.calibration.helpers import SAMPLE
from tests.fake_openai import completion, fake_openai_server


def test_accuracy_passes_on_the_shipped_corpus_and_fails_on_a_wrong_label(tmp_path, capsys):
    assert main(["accuracy"]) == 0
    out = capsys.readouterr().out
    overall = next(line for line in out.splitlines() if line.startswith("all "))
    assert overall.endswith(" 100.0%"), overall
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text('- answer: "You can use the Glowforge."\n  check: {kind: no_unknown_tools}\n'
                     '  verdict: pass\n  adversarial: false\n  why: "deliberately wrong"\n')
    assert main(["accuracy", str(wrong)]) == 1
    captured = capsys.readouterr()
    assert "≠ wrong.yaml:1 no_unknown_tools: labelled pass, check says fail" in captured.out
    assert "agreement 0.0% is below 100.0%" in captured.err
    wrong.write_text('- answer: "x"\n  check: {kind: no_such_kind}\n  verdict: pass\n'
                     '  adversarial: false\n  why: ""\n')
    assert main(["accuracy", str(wrong)]) == 2
    assert "wrong.yaml:1: unknown assertion kind 'no_such_kind'" in capsys.readouterr().err


def answer(body):
    if body.get("response_format"):  # the judge
        return 200, completion(json.dumps({"verdict": "pass", "reason": "it guides"}))
    return 200, completion("What did you get after the jog? Check that step again.")


@pytest.fixture
def served(tmp_path, monkeypatch):
    from app.settings import get_settings

    data = tmp_path / "mr.json"
    data.write_text(json.dumps(SAMPLE * 2))  # the same dialogue twice: run once
    with fake_openai_server(answer) as (base, received):
        for name, value in {"MODEL_JUDGE": "openai/fake-judge", "MODEL_API_BASE": base,
                            "OPENAI_API_KEY": "sk-test", "DATA_DIR": str(tmp_path)}.items():
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
    assert "needs --file PATH" in capsys.readouterr().err
    missing = tmp_path / "nope.json"
    assert main(["run", "--suite", "mrbench", "--file", str(missing), "--endpoint", base,
                 "--endpoint-model", "tutor"]) == 2
    assert "nope.json" in capsys.readouterr().err and received == []
