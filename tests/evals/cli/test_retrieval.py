"""`python -m evals retrieval`: a small set searched end to end (hash embedder), as a table
and as JSON; a malformed set is exit 2 naming file:line."""

import json

from evals.cli import main

SET = """\
- id: stir
  question: stir the resin in the tank
  answer: {manual: Form 4 Manual, pages: [2]}
- id: forbidden
  question: which materials are forbidden in the laser
  answer: {manual: Trotec Speedy 400 SOP, pages: [2]}
- id: lens
  question: how often do I clean the lens
  answer: {manual: Trotec Speedy 400 Operator Guide, pages: [2]}
- id: wifi
  question: wifi password please
  answer: none
"""


def test_the_command_measures_a_small_set_and_prints_the_table(cli, tmp_path, capsys):
    path = tmp_path / "small.yaml"
    path.write_text(SET)
    assert main(["retrieval", str(path), "--embedder", "hash"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("manual search · small.yaml: 4 questions · embedder hash-test")
    header, *rows = [line for line in out.splitlines()
                     if line.startswith(("fused", "text", "vector", " "))][:4]
    assert header.split()[:4] == ["recall@1", "recall@5", "MRR", "n"]
    assert [row.split()[0] for row in rows] == ["fused", "text", "vector"]
    assert all(row.split()[4] == "2" for row in rows)  # two answerable questions
    assert "2 answerable, 1 only in an attached manual (1/1 attached" in out
    assert "1 that no manual answers" in out
    assert main(["retrieval", str(path), "--embedder", "hash", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["what"] == "manuals" and report["embedder"] == "hash-test"
    assert [m["mode"] for m in report["modes"]] == ["fused", "text", "vector"]
    assert [o["id"] for o in report["outcomes"]] == ["stir", "forbidden", "lens", "wifi"]
    assert report["outcomes"][0]["modes"]["fused"]["rank"] == 1
    assert main(["retrieval", str(path), "--manuals", "--verbose"]) == 0  # the tests' embedder
    out = capsys.readouterr().out
    assert "small.yaml:7 lens “how often do I clean the lens”" in out


def test_a_malformed_set_is_exit_2_naming_file_and_line(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("- id: x\n  question: where is it\n  answer: {manual: Nope, pages: [1]}\n")
    assert main(["retrieval", str(path), "--embedder", "hash"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("the labelled set has errors:\n  bad.yaml:3: answer.manual: unknown"
                          " manual 'Nope'")
    path.write_text("[]\n")
    assert main(["retrieval", str(path)]) == 2
    assert "bad.yaml: no questions" in capsys.readouterr().err
