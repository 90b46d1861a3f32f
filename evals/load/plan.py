"""The plan fingerprint: a hash of everything that decides what is asked and how it is judged
(the selected items, normalised; their fixtures; the judge model and its full prompt; the
repetitions; the harness code that judges). Two runs compare only under one plan."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals.checks import CheckSpec
from evals.fixtures.lab_catalog import Catalog
from evals.load.fixture_data import data_digests
from evals.load.items import EvalItem
from evals.record.fingerprint import JudgePlan, PlanInfo, Selection, VisitorPlan, digest
from evals.record.repetitions import RepeatRule
from evals.settings import PHOTOS_DIR, PROJECT_ROOT

# Bump when the harness's meaning changes in a way the files below do not show.
HARNESS_VERSION = "3"
# The code that decides how an answer is judged: the checks, the catalogue pins, the judge,
# what a check reads of a turn, the statuses, and the citation check the app shares.
_JUDGING_CODE = ("evals/checks/*.py", "evals/fixtures/catalog.py", "evals/judge/_ask.py",
                 "evals/judge/questions.py",
                 "evals/record/transcript.py", "evals/record/results.py",
                 "app/manuals/citations.py", "app/catalog/records.py")
# The fixtures every item runs against: the demo catalogue (the app's seed) and how the others
# are seeded, tickets, manuals (and their PDFs where made).
_FIXTURE_FILES = ("evals/fixtures/lab_catalog.py", "evals/fixtures/tickets.py",
                  "evals/fixtures/manuals/make_manuals.py", "evals/fixtures/manuals/*.pdf",
                  "app/seed.py", "app/manuals/demo.py")
# And the files of the catalogues beyond the demo's, only when an item runs against one: the
# look-alikes of `lab` and the whole `large` lab are read from the large lab's file, so
# editing it leaves a plan of demo items as it was.
_CATALOG_FILES: dict[Catalog, tuple[str, ...]] = {
    "demo": (), "lab": ("evals/fixtures/catalogs/*.yaml",),
    "large": ("evals/fixtures/catalogs/*.yaml",)}
# Arguments whose order means nothing: a set of literals or of items.
_UNORDERED = {"contains_all", "not_contains_any", "identified_items"}


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def check_content(specs: Sequence[CheckSpec]) -> list[dict[str, Any]]:
    """Checks as the plan hashes them: order-free, and order-free inside a set argument."""
    out = []
    for spec in specs:
        args = spec.args.model_dump(mode="json")
        if spec.kind in _UNORDERED and isinstance(args.get("value"), list):
            args = {**args, "value": sorted(args["value"])}
        out.append({"kind": spec.kind, "args": args})
    return sorted(out, key=lambda c: json.dumps(c, sort_keys=True))


def harness_hash() -> str:
    """The harness as a plan records it: its version and the hash of the code that judges
    (a rescore and a re-judging record the one they assessed with)."""
    return digest([HARNESS_VERSION, *[
        _file_hash(p) for pattern in _JUDGING_CODE for p in sorted(PROJECT_ROOT.glob(pattern))]])


def plan_info(items: Sequence[EvalItem], *, judge_model: str | None,
              judge_prompt_hash: str | None, repeat: int,
              selection: Selection | None = None,
              repeat_rule: RepeatRule | None = None, judge_pack: str | None = None,
              visitor: VisitorPlan | None = None,
              settling: dict[str, str] | None = None) -> PlanInfo:
    """The plan fingerprint: the selected items (normalised, in id order; a conversation's
    scenario, style, turns, frozen responses and criteria), their fixtures, the judge model,
    its full prompt template and pack, the simulated visitor (its model and instructions, when
    the plan has conversations), the repetitions (and the rule that stops them, whose MAX is
    `repeat`) and the harness. `settling`: the narrow questions (kind -> prompt hash) a trusted
    judge settles undecided checks with, and so the judge's model too. Beside it, outside the
    hash, the digest of each fixture record a request may carry (fixture_data.py)."""
    if repeat_rule is not None and repeat_rule.max != repeat:
        raise ValueError(f"the repeat rule's MAX {repeat_rule.max} is not repeat {repeat}")
    by_id = {i.id: digest(i.content()) for i in sorted(items, key=lambda i: i.id)}
    fixtures = {f"photos/{name}": _file_hash(PHOTOS_DIR / name)
                for name in sorted({p for i in items for p in i.photos})}
    catalogs = {i.context.catalog for i in items}
    patterns = [*_FIXTURE_FILES, *sorted({f for c in catalogs for f in _CATALOG_FILES[c]})]
    for pattern in patterns:
        for path in sorted(PROJECT_ROOT.glob(pattern)):
            fixtures[str(path.relative_to(PROJECT_ROOT))] = _file_hash(path)
    judged = any(i.judged for i in items)
    judge = JudgePlan(model=judge_model if judged else None,
                      prompt_hash=judge_prompt_hash if judged else None,
                      pack=judge_pack if judged else None)
    talks = any(not i.single_turn for i in items)
    if talks and visitor is None:
        raise ValueError("a plan with conversations needs its simulated visitor")
    harness = harness_hash()
    material: dict[str, Any] = {"cases": by_id, "fixtures": fixtures,
                                "judge": judge.material(), "repeat": repeat,
                                "harness": harness}
    if talks and visitor is not None:  # only then: a plan of cases keeps its fingerprint
        material["visitor"] = visitor.model_dump()
    if repeat_rule is not None:  # only then: a fixed plan keeps the fingerprint it had
        material["repeat_rule"] = repeat_rule.model_dump()
    if settling:  # only then: a plan no judge settles keeps the fingerprint it had
        material["settling"] = {"model": judge_model, "questions": dict(sorted(settling.items()))}
    return PlanInfo(fingerprint=digest(material), cases=by_id, fixtures=fixtures, judge=judge,
                    visitor=visitor if talks else None, repeat=repeat, harness=harness,
                    selection=selection, repeat_rule=repeat_rule,
                    inputs=data_digests(catalogs))
