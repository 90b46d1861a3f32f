"""Evaluator packs: prompts (a rubric and a must_not) that rate every judged case instead of
the case's own rubric, kept as data in evals/judge/packs/PACK.yaml and chosen with
`--judge PACK/NAME`. A pack prompt changes what the judge is asked, so it has its own hash:
the plan and the judge's trust (calibration) are keyed by it, and the run record names it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError

from evals.judge.setup import PackPrompt
from evals.load.yamlfile import YamlFileError, field_errors, line_of, read_yaml
from evals.settings import EVALS_DIR

PACKS_DIR = EVALS_DIR / "judge" / "packs"


class PackError(ValueError):
    """An unknown or malformed pack; the message names it and what exists."""


class _Prompt(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: Annotated[str, StringConstraints(strip_whitespace=True, min_length=3)]
    rubric: Annotated[str, StringConstraints(strip_whitespace=True, min_length=3)]
    must_not: str | None = None


def packs(directory: Path = PACKS_DIR) -> list[str]:
    return sorted(p.stem for p in directory.glob("*.yaml"))


def load_pack_prompt(ref: str, directory: Path = PACKS_DIR) -> PackPrompt:
    pack, _, name = ref.partition("/")
    known = packs(directory)
    if not name or pack not in known:
        raise PackError(f"--judge {ref!r}: give PACK/NAME; packs: {', '.join(known)}")
    path = directory / f"{pack}.yaml"
    try:
        data, lines = read_yaml(path)
    except YamlFileError as exc:
        raise PackError(str(exc)) from exc
    if not isinstance(data, dict):
        raise PackError(f"{path.name}:1: a pack maps prompt names to prompts")
    odd = next((k for k in data if not isinstance(k, str)), None)
    if odd is not None:  # `yes:`, `1:` or `~:` as YAML reads them: never a name to ask for
        raise PackError(f"{path.name}:{line_of((odd,), lines)}: prompt name {odd!r} is not"
                        " text; quote it")
    if name not in data:
        names = ", ".join(data)
        raise PackError(f"--judge {ref!r}: pack {pack!r} has no prompt {name!r}; it has:"
                        f" {names}")
    try:
        prompt = _Prompt.model_validate(data[name])
    except ValidationError as exc:
        raise PackError("\n".join(f"{path.name}:{line_of((name, *loc), lines)}: {name}:"
                                  f" {message}" for loc, message in field_errors(exc, "(prompt)"))
                        ) from exc
    return PackPrompt(pack, name, prompt.description, " ".join(prompt.rubric.split()),
                      " ".join(prompt.must_not.split()) if prompt.must_not else None)
