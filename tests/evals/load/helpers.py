"""Files written for the loaders' tests: scenario files and the conversation item one makes,
and a YAML bomb."""

import textwrap

from evals.load.conversations import conversations
from evals.load.scenarios import load_scenarios


def write(tmp_path, text, name="s.yaml"):
    (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path


MINIMAL = """\
- id: one
  visitor: {who: a student, wants: to find a printer}
  criteria:
    - statement: The assistant names the Form 4.
"""


def item_of(tmp_path, text, style="calm"):
    scenarios, shared = load_scenarios(write(tmp_path, text))
    [item] = [i for i in conversations(scenarios, shared, full=True) if i.style == style]
    return item


LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True))
