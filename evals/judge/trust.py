"""Which judges have earned their verdicts: calibration results per judge model.

`python -m evals calibrate … --save` records, in evals/judge/judges.yaml, the judge model, the hash
of the judge prompt it was calibrated under (the template's, or an evaluator pack's: then the
pack is named too), the labelled set, how many items it rated, its agreement with people and
Cohen's kappa. A judged check decides a case only when its judge model has a record under the
same prompt hash with kappa ≥ MIN_KAPPA on at least MIN_ITEMS items; otherwise its verdict is
advisory and the case is UNDECIDED.

An evaluator pack's prompt earns trust only from labels people gave with the pack's rubric in
view (set PACK_SET, written by `calibrate --labels --pack PACK/NAME --save`). Labels given
under each case's own rubric (the makerspace set; a label of a case's verdict) say nothing of
the pack's: a record under a pack's prompt measured against them is kept but never counts.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError

JUDGES_FILE = Path(__file__).parent / "judges.yaml"
MIN_KAPPA = 0.6
MIN_ITEMS = 30
# The one labelled set a pack's prompt is calibrated on: the labels people gave on the
# workspace's Labels tab with the pack's rubric and must_not in view.
PACK_SET = "pack-labels"


def _as_text(value: Any) -> Any:
    """A date as YAML reads an unquoted one (2026-12-01), as the text it was written as."""
    return value.isoformat() if isinstance(value, dt.date) else value


# A figure a calibration can give: finite, in its range (a typo of `.inf` decides nothing).
Kappa = Annotated[float, Field(ge=-1, le=1, allow_inf_nan=False)]
Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


class JudgeRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str
    prompt_hash: str
    set: str
    n: int = Field(ge=0)
    agreement: Share | None
    kappa: Kappa | None
    date: Annotated[str, BeforeValidator(_as_text)]
    pack: str | None = None  # the evaluator pack prompt (PACK/NAME) rated under; None: none


_RECORDS = TypeAdapter(list[JudgeRecord])


class JudgesFileError(ValueError):
    """evals/judge/judges.yaml cannot be read; the message names the file and the field."""


def _file(path: Path | None) -> Path:
    # JUDGES_FILE is read when called, not bound at definition, so it can be pointed elsewhere.
    return JUDGES_FILE if path is None else path


def load_records(path: Path | None = None) -> list[JudgeRecord]:
    path = _file(path)
    if not path.exists():
        return []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        return _RECORDS.validate_python(data)
    except ValidationError as exc:
        where = "; ".join(f"record {'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                          for e in exc.errors())
        raise JudgesFileError(f"{path}: {where}") from exc
    except (yaml.YAMLError, OSError, ValueError, TypeError, KeyError, RecursionError) as exc:
        # unreadable bytes, a folder, a date or a number PyYAML cannot build, deep nesting
        raise JudgesFileError(f"{path}: cannot be read ({type(exc).__name__}:"
                              f" {str(exc)[:200]})") from exc


@dataclass(frozen=True)
class Trust:
    trusted: bool
    reason: str


def has_record(model: str, prompt_hash: str, path: Path | None = None) -> bool:
    """Whether this judge model was ever calibrated under this prompt, well or badly."""
    return any(r.model == model and r.prompt_hash == prompt_hash for r in load_records(path))


def pack_labels_needed(pack: str) -> str:
    """How a pack's prompt earns trust: what to do, said in one sentence."""
    return (f"a pack earns trust only from labels people gave with its rubric in view: run with"
            f" --judge {pack} --advisory-judge, label its verdicts on the workspace's Labels"
            f" tab, then python -m evals calibrate --labels --pack {pack} --save")


def trust(model: str, prompt_hash: str, path: Path | None = None, pack: str | None = None
          ) -> Trust:
    """Whether a judge model's verdicts under this prompt (with this pack's, if any) decide
    cases. A pack's prompt counts only its records on labels given under its rubric."""
    records = [r for r in load_records(path) if r.model == model]
    same = [r for r in records if r.prompt_hash == prompt_hash]
    if pack is not None:
        counted = [r for r in same if r.set == PACK_SET]
        if not counted and same:
            sets = ", ".join(sorted({r.set for r in same}))
            return Trust(False, f"{model}'s calibration under pack {pack}'s prompt (on {sets})"
                                " was measured against labels people gave without the pack's"
                                " rubric in view (under each case's own), so it does not"
                                f" count; {pack_labels_needed(pack)}")
        if not counted:
            return Trust(False, f"{model} has no calibration record under pack {pack}'s"
                                f" prompt: {pack_labels_needed(pack)}")
        same = counted
    if not records:
        return Trust(False, f"{model} has no calibration record (python -m evals calibrate"
                            " --set makerspace --save)")
    if not same:
        return Trust(False, f"{model} was calibrated under another judge prompt"
                            f" ({', '.join(sorted({r.prompt_hash for r in records}))});"
                            f" this one is {prompt_hash}")
    good = [r for r in same if r.n >= MIN_ITEMS and r.kappa is not None
            and r.kappa >= MIN_KAPPA]
    if good:
        best = max(good, key=lambda r: (r.kappa or 0, r.n))
        return Trust(True, f"kappa {best.kappa:.2f} on {best.n} items of {best.set}"
                           f" ({best.date})")
    best = max(same, key=lambda r: (r.n, r.kappa or -1))
    kappa = "undefined" if best.kappa is None else f"{best.kappa:.2f}"
    return Trust(False, f"{model} has kappa {kappa} on {best.n} items of {best.set}; a judge"
                        f" decides with kappa ≥ {MIN_KAPPA} on ≥ {MIN_ITEMS} items")


def save_record(record: JudgeRecord, path: Path | None = None) -> None:
    """Add a record, replacing one for the same model, prompt, pack and set; written
    atomically. A pack's record is only ever one on labels given under its rubric (PACK_SET):
    any other would say nothing of the pack."""
    if record.pack is not None and record.set != PACK_SET:
        raise ValueError(f"a record of pack {record.pack} on {record.set!r} is not kept: "
                         + pack_labels_needed(record.pack))
    path = _file(path)
    records = [r for r in load_records(path) if _key(r) != _key(record)]
    records.append(record)
    # A base prompt's record is written without `pack`, as it always was.
    text = ("# Judge calibration records, written by `python -m evals calibrate --save`.\n"
            + yaml.safe_dump([r.model_dump(exclude={"pack"} if r.pack is None else None)
                              for r in records], sort_keys=False, allow_unicode=True))
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _key(record: JudgeRecord) -> tuple[str, str, str | None, str]:
    return record.model, record.prompt_hash, record.pack, record.set


def today() -> str:
    return dt.date.today().isoformat()
