"""The language detector's bench: per language, what a check that reads English still reads,
as shipped and with the full models alone; a malformed set is file:line, exit 2."""

from evals.bench.languages import main

SET = """\
- text: "The Trotec Speedy 400 is free until 16:00, and the Form 4 is being cleaned."
  sentences:
  - {text: "The Trotec Speedy 400 is free until 16:00, and the Form 4 is being cleaned.", lang: en}
- text: "He cerrado el ticket y la cortadora láser ya está disponible."
  sentences:
  - {text: "He cerrado el ticket y la cortadora láser ya está disponible.", lang: es}
"""


def test_each_language_is_counted_and_the_two_ways_compared(tmp_path, capsys):
    path = tmp_path / "set.yaml"
    path.write_text(SET)
    assert main(["--set", str(path), "--show"]) == 0
    out = capsys.readouterr().out
    assert "set.yaml: 2 answers; the quick models decided 1 alone" in out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:4]}
    assert rows == {"en": ["only", "1", "1", "1"], "es": ["1", "0", "0"]}
    assert "answers decided otherwise than by the full models alone: 0" in out


def test_a_malformed_set_is_refused_with_its_line(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text('- text: "Hola."\n  sentences:\n  - {text: "Hola.", lang: xx}\n')
    assert main(["--set", str(path)]) == 2
    assert "bad.yaml:3: sentences.0.lang:" in capsys.readouterr().err
