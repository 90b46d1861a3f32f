"""A labels file read for import: a labeller's name in mixed scripts and a time outside the
project's life are refused, each naming file:line, and nothing of the file is taken."""

import pytest

from evals.calibration.label_file import LabelFileError, read_labels

LABEL = """\
- run: lab0001
  item: case-{n}
  repetition: 1
  attempt: 1
  check: 2
  kind: judge
  verdict: pass
  by: {by}
  at: '{at}'
"""


def test_a_name_in_mixed_scripts_and_a_time_outside_the_project_are_refused(tmp_path):
    path = tmp_path / "labels.yaml"
    path.write_text(LABEL.format(n=0, by="ana", at="2026-12-01T10:00:00+00:00")
                    + LABEL.format(n=1, by="\u0430na", at="2026-12-01T10:00:00+00:00")
                    + LABEL.format(n=2, by="ana", at="2099-01-01T00:00:00+00:00")
                    + LABEL.format(n=3, by="ana", at="1970-01-01T00:00:00+00:00"),
                    encoding="utf-8")
    with pytest.raises(LabelFileError) as raised:
        read_labels(path)
    errors = raised.value.errors
    assert len(errors) == 3
    assert errors[0].startswith("labels.yaml:17: by: ") and "mixes scripts" in errors[0]
    assert errors[1].startswith("labels.yaml:27: at: 2099-01-01") and "in the future" in errors[1]
    assert errors[2].startswith("labels.yaml:36: at: 1970-01-01") and \
        "before 2026-11-29, when this project began" in errors[2]


def test_a_good_file_is_read_with_its_names_normalised(tmp_path):
    path = tmp_path / "labels.yaml"
    path.write_text(LABEL.format(n=0, by="Ａｎａ", at="2026-12-01T10:00:00+00:00"),
                    encoding="utf-8")
    labels, starts = read_labels(path)
    assert [(x.by, x.at.isoformat()) for x in labels] == [("Ana", "2026-12-01T10:00:00+00:00")]
    assert starts == [1]
