"""`run --endpoint`: a case file against any OpenAI-compatible endpoint over real HTTP."""

import textwrap

from evals.cli import main
from tests.fake_openai import completion, fake_openai_server


def test_cli_endpoint_mode_with_a_case_file(tmp_path, capsys):
    cases = tmp_path / "mine.yaml"
    cases.write_text(textwrap.dedent("""
        - id: says-no
          prompt: "Do you have a Glowforge?"
          assert:
            - kind: not_contains_any
              value: ["yes, we have"]
    """))
    with fake_openai_server(lambda b: (200, completion("No, we do not."))) as (base, _):
        code = main(["run", str(cases), "--endpoint", base, "--endpoint-model", "m",
                     "--artifact", str(tmp_path / "run.json")])
    assert code == 0
    assert "1/1 passed" in capsys.readouterr().out
    assert main(["run", str(cases), "--endpoint", "http://127.0.0.1:9"]) == 2
