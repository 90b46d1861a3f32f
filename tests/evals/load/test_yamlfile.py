"""Every malformed case file is a file:line error, never a traceback or a runaway."""

import pytest

from evals.load.cases import CaseFileError, load_cases
from tests.evals.helpers import cli_environment
from tests.evals.load.helpers import LAUGHS

GOOD = '- id: ok\n  prompt: "p"\n  assert:\n    - kind: no_unknown_tools\n'


@pytest.mark.parametrize(("content", "message"), [
    (b"\xff\xfe- id: x\n", "c.yaml:1: not UTF-8 text (byte 0xff)"),
    (GOOD.encode() + b"- id: y\n  prompt: \"\xe9\"\n", "c.yaml:6: not UTF-8 text"),
    (b"- id: x\n  prompt: \"a\x00b\"\n", "c.yaml:2: control character U+0000"),
    (b"- id: x\n  prompt: \"a\x1bb\"\n", "c.yaml:2: control character U+001B"),
    (b"- id: x\n  prompt: \"a\\0b\"\n",  # written as an escape, as a YAML writer does
     "c.yaml:2: control character U+0000 (written as an escape)"),
    (b"- id: x\n  prompt: p\n  group: \"g\\x07\"\n",
     "c.yaml:3: control character U+0007 (written as an escape)"),
    # half of a UTF-16 pair, which no text holds: refused where it is written, not a
    # traceback when the case is fingerprinted
    (b"- id: x\n  prompt: \"a\\ud800b\"\n",
     "c.yaml:2: lone surrogate U+D800 (written as an escape)"),
    (b"- id: x\n  prompt: p\n  \"k\\udfff\": 1\n",
     "c.yaml:3: lone surrogate U+DFFF (written as an escape)"),
    (b"- id: x\n  prompt: \"ok \\U0000DBFF\"\n",
     "c.yaml:2: lone surrogate U+DBFF (written as an escape)"),
    # an escaped backslash, then "ud800": no surrogate; the bad escape is \q's
    (b"- id: x\n  prompt: \"\\\\ud800 \\q\"\n", "c.yaml:2: YAML: found unknown escape"),
    # values PyYAML cannot build: a plain error from its constructors, never a traceback
    (b"- id: x\n  prompt: 2024-13-45\n", "c.yaml:2: timestamp value that cannot be read"),
    (b"- id: x\n  prompt: !!int abc\n", "c.yaml:2: int value that cannot be read"),
    (b"- id: x\n  prompt: !!bool maybe\n", "c.yaml:2: bool value that cannot be read"),
    (b"- id: x\n  prompt: !!map [a]\n", "c.yaml:2: a mapping tag on something that is not"),
    (b"- id: x\n  __line__: 3\n", "c.yaml:2: '__line__' is not a key a file may use"),
    (b"- id: x\n  prompt: " + b"9" * 5000 + b"\n", "c.yaml:2: int value that cannot be read"),
    (b"- id: x\n  prompt: p\n  photos: [" + b"a" * 300 + b".jpg]\n"
     b"  assert:\n    - kind: no_unknown_tools\n", "photo 'aaaaaaaaaa"),
    (("x: " + "[" * 200 + "]" * 200 + "\n").encode(), "nested deeper than 32 levels"),
    (b"- ? [a, b]\n  : 1\n", "c.yaml:1: a mapping key must be a plain value"),
    (b"- id: a\n  prompt: p\n  assert: &checks\n    - kind: no_unknown_tools\n"
     b"- id: b\n  prompt: p\n  assert: *checks\n", "c.yaml:3: anchors (&checks) are not"),
    (LAUGHS.encode(), "c.yaml:1: anchors (&a) are not supported"),
    (b"- <<: {id: a}\n  prompt: p\n", "c.yaml:1: merge keys (<<) are not supported"),
    (b"- id: x\n  id: y\n", "c.yaml:2: YAML: duplicate key 'id' (first at line 1)"),
    (b"- id: x\n  prompt: [unclosed\n", "c.yaml:3: YAML:"),
    (('- id: x\n  prompt: "' + "p" * 20_001 + '"\n  assert:\n    - kind: no_unknown_tools\n'
      ).encode(), "c.yaml:2: prompt: String should have at most 20000 characters"),
])
def test_malformed_files_are_file_line_errors(tmp_path, content, message):
    (tmp_path / "c.yaml").write_bytes(content)
    with pytest.raises(CaseFileError) as exc:
        load_cases(tmp_path)
    assert message in str(exc.value)
    assert len(str(exc.value)) < 2_000  # a 20,000-character prompt is not echoed back


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path, monkeypatch):
    with cli_environment(monkeypatch, {"EVAL_MAX_CASE_FILE_BYTES": "1000"}):
        (tmp_path / "c.yaml").write_text(GOOD * 20)
        with pytest.raises(CaseFileError,
                           match=r"c.yaml:1: the file is 1,240 bytes; the limit is 1,000"):
            load_cases(tmp_path)


def test_read_items_gives_each_valid_item_its_line_and_every_problem_its_own(tmp_path):
    from pydantic import BaseModel, ConfigDict

    from evals.load.yamlfile import read_items

    class Item(BaseModel):
        model_config = ConfigDict(extra="forbid")
        id: str

    path = tmp_path / "items.yaml"
    path.write_text("- id: a\n- idd: b\n- id: c\n")
    items, errors = read_items(path, Item, "a list of items", "item")
    assert [(i.id, line) for i, line in items] == [("a", 1), ("c", 3)]
    assert len(errors) == 2 and all(e.startswith("items.yaml:2: ") for e in errors)
    path.write_text("id: a\n")
    assert read_items(path, Item, "a list of items", "item") == ([], ["items.yaml:1: a list of"
                                                                      " items"])


def test_a_text_read_again_gives_fresh_objects_and_a_changed_file_is_read_anew(tmp_path):
    from evals.load import yamlfile

    path = tmp_path / "c.yaml"
    path.write_text("- id: a\n  tags: [x]\n")
    first, lines = yamlfile.read_yaml(path)
    first[0]["tags"].append("changed by a caller")
    again, again_lines = yamlfile.read_yaml(path)
    assert again == [{"id": "a", "tags": ["x"]}] and again_lines == lines
    assert again is not first
    path.write_text("- id: b\n")
    assert yamlfile.read_yaml(path)[0] == [{"id": "b"}]
    path.write_text("- id: a\n  id: b\n")  # a bad file is refused every time it is read
    for _ in range(2):
        with pytest.raises(yamlfile.YamlFileError, match="c.yaml:2: YAML: duplicate key 'id'"):
            yamlfile.read_yaml(path)
