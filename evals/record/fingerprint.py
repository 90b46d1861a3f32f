"""Fingerprints: what a run asked and how it judged (the plan), and what the assistant was
(the agent). Two runs compare only under one plan; an agent's fingerprint changes exactly
when what the model is told changes (the composed system prompt or a tool schema, for some
audience and page the plan uses), or its model, settings or commit.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from evals.load.cases import PHOTOS_DIR, Case
from evals.settings import PROJECT_ROOT

# Bump when the harness's meaning changes in a way the files below do not show.
HARNESS_VERSION = "3"
_ROOT = PROJECT_ROOT
# The code that decides how an answer is judged: the checks, the catalogue pins, the judge,
# what a check reads of a turn, the statuses, and the citation check the app shares.
_JUDGING_CODE = ("evals/checks/*.py", "evals/fixtures/catalog.py", "evals/judge/_ask.py",
                 "evals/record/turn.py", "evals/record/results.py", "app/manuals/citations.py",
                 "app/catalog.py")
# The fixtures a case runs against: catalogue, tickets, manuals (and their PDFs where made).
_FIXTURE_FILES = ("evals/fixtures/lab_catalog.py", "evals/fixtures/tickets.py",
                  "evals/fixtures/manuals/make_manuals.py", "evals/fixtures/manuals/*.pdf",
                  "app/seed.py", "app/manuals/demo.py")
# Arguments whose order means nothing: a set of literals or of items.
_UNORDERED = {"contains_all", "not_contains_any", "identified_items"}


def digest(value: Any) -> str:
    """A short, stable hash of JSON-able data."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def case_content(case: Case) -> dict[str, Any]:
    """What a case asks and how it is judged, independent of its file, line and group."""
    return {
        "prompt": case.prompt,
        "context": case.context.model_dump(by_alias=True, mode="json"),
        "history": [h.model_dump(exclude_none=True) for h in case.history],
        "photos": list(case.photos),
        "checks": sorted((_check(c.kind, c.args.model_dump(mode="json")) for c in case.checks),
                         key=lambda c: json.dumps(c, sort_keys=True)),
        "rubric": case.rubric,
        "must_not": case.must_not,
    }


def _check(kind: str, args: dict[str, Any]) -> dict[str, Any]:
    if kind in _UNORDERED and isinstance(args.get("value"), list):
        args = {**args, "value": sorted(args["value"])}
    return {"kind": kind, "args": args}


class PlanInfo(BaseModel):
    """The plan of a run: its fingerprint and the parts it was made of, for a readable diff."""

    model_config = ConfigDict(extra="forbid")
    fingerprint: str
    cases: dict[str, str]  # case id -> content hash
    fixtures: dict[str, str]  # fixture name -> content hash
    judge: dict[str, str | None]  # model, prompt_hash
    repeat: int
    harness: str
    selection: str | None = None  # how the cases were chosen (EVAL_CASES, groups)


def plan_info(cases: list[Case], *, judge_model: str | None, judge_prompt_hash: str | None,
              repeat: int, selection: str | None = None) -> PlanInfo:
    """The plan fingerprint: the selected cases (normalised, in id order), their fixtures, the
    judge model and its full prompt template, the repetitions and the harness."""
    by_id = {c.id: digest(c.content() if hasattr(c, "content") else case_content(c))
             for c in sorted(cases, key=lambda c: c.id)}
    fixtures = {f"photos/{name}": _file_hash(PHOTOS_DIR / name)
                for name in sorted({p for c in cases for p in c.photos})}
    for pattern in _FIXTURE_FILES:
        for path in sorted(_ROOT.glob(pattern)):
            fixtures[str(path.relative_to(_ROOT))] = _file_hash(path)
    judged = any(c.judged for c in cases)
    judge = {"model": judge_model if judged else None,
             "prompt_hash": judge_prompt_hash if judged else None}
    harness = digest([HARNESS_VERSION, *[
        _file_hash(p) for pattern in _JUDGING_CODE for p in sorted(_ROOT.glob(pattern))]])
    material = {"cases": by_id, "fixtures": fixtures, "judge": judge, "repeat": repeat,
                "harness": harness}
    return PlanInfo(fingerprint=digest(material), cases=by_id, fixtures=fixtures, judge=judge,
                    repeat=repeat, harness=harness, selection=selection)


def plan_changes(old: PlanInfo, new: PlanInfo) -> list[str]:
    """What differs between two plans, one line each."""
    out = []
    for cid in sorted(set(new.cases) - set(old.cases)):
        out.append(f"case added: {cid}")
    for cid in sorted(set(old.cases) - set(new.cases)):
        out.append(f"case removed: {cid}")
    for cid in sorted(set(old.cases) & set(new.cases)):
        if old.cases[cid] != new.cases[cid]:
            out.append(f"case edited: {cid}")
    for name in sorted(set(old.fixtures) | set(new.fixtures)):
        if old.fixtures.get(name) != new.fixtures.get(name):
            out.append(f"fixture changed: {name}")
    if old.judge != new.judge:
        out.append(f"judge changed: {old.judge} -> {new.judge}")
    if old.repeat != new.repeat:
        out.append(f"repetitions changed: {old.repeat} -> {new.repeat}")
    if old.harness != new.harness:
        out.append("harness changed (the checks, the catalogue pins or the judge code)")
    return out


class FrozenContext(BaseModel):
    """What the assistant is told for one audience and page: system prompt and tool schemas."""

    model_config = ConfigDict(extra="forbid")
    system_prompt: str
    tools: list[dict[str, Any]]


class AgentInfo(BaseModel):
    """An agent version: model, settings, what it is told per context, and the commit."""

    model_config = ConfigDict(extra="forbid")
    fingerprint: str
    model: str
    settings: dict[str, Any]
    contexts: dict[str, FrozenContext]  # context key -> what the model is told there
    git_commit: str | None
    git_dirty: bool
    # How the model was asked for ("local", or the id given): what runs it again. The
    # resolved id above can name a server that only exists while this harness runs it.
    model_ref: str | None = None


def context_key(case: Case) -> str:
    """The audience, page and catalogue a case is composed for."""
    ctx = case.context
    return f"{ctx.as_ or 'anonymous'} {ctx.page_path} {ctx.catalog}"


def agent_info(model: str, settings: dict[str, Any], contexts: dict[str, FrozenContext],
               git: tuple[str | None, bool] | None = None, *,
               model_ref: str | None = None) -> AgentInfo:
    commit, dirty = git if git is not None else git_state()
    material = {"model": model, "settings": settings,
                "contexts": {k: v.model_dump() for k, v in sorted(contexts.items())},
                "commit": commit, "dirty": dirty}
    return AgentInfo(fingerprint=digest(material), model=model, settings=settings,
                     contexts=contexts, git_commit=commit, git_dirty=dirty, model_ref=model_ref)


def git_state(root: Path = _ROOT) -> tuple[str | None, bool]:
    """The checkout's commit and whether tracked files differ from it (None outside git)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                                text=True, timeout=5, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                cwd=root, capture_output=True, text=True, timeout=5,
                                check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None, False
    return commit or None, bool(status.strip())
