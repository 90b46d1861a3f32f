"""People's labels as a YAML file, to review in a diff or carry to another store.

    python -m evals labels export FILE      every stored label, in a stable order
    python -m evals labels import FILE      all or nothing; a label stored already is kept once

An import is validated whole first: every problem is a `file:line: message` error (a field, a
label given twice, a run or check the store does not hold, a person's other verdict of a
verdict they labelled already), and on any error nothing is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from evals.load.yamlfile import read_items
from evals.record.labels import Label, LabelError, add_labels, list_labels
from evals.record.store import RunStore

HEADER = ("# Labels of judged verdicts, written by `python -m evals labels export`;"
          " `python -m evals labels import` reads them back.\n")


class LabelFileError(ValueError):
    """A labels file that cannot be imported: one 'file:line: message' per problem."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors))
        self.errors = errors


def dump(labels: list[Label]) -> str:
    rows: list[dict[str, Any]] = []
    for label in labels:
        row = label.model_dump(exclude={"at"})
        row["at"] = label.at.isoformat() if label.at else None
        rows.append(row)
    return HEADER + yaml.safe_dump(rows, sort_keys=False, allow_unicode=True, width=100)


async def export_labels(store: RunStore, path: Path) -> int:
    """Write every stored label to `path` (atomically); returns how many."""
    labels = await list_labels(store)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dump(labels))
    tmp.replace(path)
    return len(labels)


def read_labels(path: Path) -> tuple[list[Label], list[int]]:
    """A labels file's labels and the line each starts on; LabelFileError names every
    problem."""
    read, errors = read_items(path, Label, "a labels file holds a list of labels", "label")
    labels: list[Label] = []
    starts: list[int] = []
    seen: dict[tuple[Any, ...], int] = {}
    for label, start in read:
        twice = (*label.key, label.by)
        if twice in seen:
            errors.append(f"{path.name}:{start}: {label.by}'s label of {label.ref()} is given"
                          f" twice (first at line {seen[twice]})")
            continue
        seen[twice] = start
        labels.append(label)
        starts.append(start)
    if errors:
        raise LabelFileError(errors)
    return labels, starts


async def import_labels(store: RunStore, path: Path) -> tuple[int, int]:
    """Store a labels file's labels, all or none; returns (new, stored already)."""
    labels, starts = read_labels(path)
    try:
        written = await add_labels(store, labels)
    except LabelError as exc:
        raise LabelFileError([f"{path.name}:{starts[i] if starts else 1}: {message}"
                              for i, message in exc.problems]) from exc
    return written, len(labels) - written
