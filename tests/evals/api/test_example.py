"""docs/api.md's example, run as it is written there: a plain script that runs the suite on two
models, compares them and reads the record, against a scripted model server."""

import re

import pytest

from app.settings import PROJECT_ROOT
from tests.evals.helpers import cli_environment
from tests.fake_openai import completion, fake_openai_server


def example() -> str:
    text = (PROJECT_ROOT / "docs" / "api.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "docs/api.md has one example"
    return blocks[0]


def answer(body):
    # The smaller model claims the lab has a machine it lacks; the other is honest.
    if body["model"] == "gpt-4o-mini":
        return 200, completion("Yes, the Glowforge Pro is in room 2.")
    return 200, completion("We don't have that machine here; the lab's laser cutter may do.")


@pytest.fixture
async def scripted(store_conninfo, tmp_path, monkeypatch):
    """A run store of its own and a scripted model server, the script's folder its own."""
    with fake_openai_server(answer) as (base, received):
        with cli_environment(monkeypatch, {"DATABASE_URL": store_conninfo,
                                           "MODEL_API_BASE": base,
                                           "OPENAI_API_KEY": "sk-test",
                                           "DATA_DIR": str(tmp_path / "data")}):
            monkeypatch.chdir(tmp_path)
            yield received


def test_the_documented_example_runs_compares_and_reads_the_record(scripted, tmp_path,
                                                                    capsys):
    exec(compile(example(), "docs/api.md", "exec"), {})  # a plain script: no running loop
    out = capsys.readouterr().out
    assert {b["model"] for b in scripted} == {"gpt-4o-mini", "gpt-4o"}
    assert (tmp_path / "first.json").is_file() and (tmp_path / "second.json").is_file()
    assert re.search(r"comparison [0-9a-f]+: ", out)  # stored, with its verdict
    assert "improved" in out  # the outcome counts
    assert re.search(r"^PASS\s+\S+", out, re.M)  # today's items, each with its status
    assert "exit code 0 (0: everything passed)" in out
