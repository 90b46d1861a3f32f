"""What the runner's, the retries' and the attempt's tests share: two cases (the second needs a
photo), and the first run through the runner against a scripted model."""

import textwrap

from evals.execute.runner import run_suite
from evals.load.cases import load_cases
from evals.settings import PHOTOS_DIR
from tests.fakes import ScriptedModel, say

CASES = """
- id: wants-trotec
  prompt: "What cuts acrylic?"
  assert:
    - kind: mentions_tool
      value: "Trotec Speedy 400"
- id: looks-at-photo
  prompt: "What is this?"
  photos: [IMG_2041.jpg]
  context: { catalog: lab }
  assert:
    - kind: identified_tool
      value: form-4
"""

GOOD, BAD = say("Use the Trotec Speedy 400."), say("Use the Form 4.")


def two_cases(folder):
    """CASES, written to a file in `folder` and loaded."""
    (folder / "c.yaml").write_text(textwrap.dedent(CASES))
    return load_cases(folder, PHOTOS_DIR)


async def run(env, cases, *steps, **kw):
    """The first case run once against a model that answers `steps` in turn."""
    model = ScriptedModel(*steps)
    results = await run_suite(env, cases[:1], model, **kw)
    return results[0], model
