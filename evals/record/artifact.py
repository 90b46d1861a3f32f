"""The JSON artifact of a run (evals/.last-run.json): the one writer and the one reader of a
run record as a file. The run store reads its rows through `read_record` too."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.redact import redact
from evals.record.results import CaseResult, Totals
from evals.record.run import RunRecord
from evals.record.upgrade import UnreadableVersion, upgrade_run
from evals.settings import EVALS_DIR

ARTIFACT = EVALS_DIR / ".last-run.json"


class ArtifactError(ValueError):
    """A run record that cannot be read; the message names the file and the field."""


def read_record(data: Any, where: str) -> RunRecord:
    """A run record from its JSON data, of any readable version; `where` names the source."""
    if not isinstance(data, dict):
        raise ArtifactError(f"{where}: a run artifact is a JSON object, not"
                            f" {type(data).__name__}")
    try:
        return RunRecord.model_validate(upgrade_run(data))
    except UnreadableVersion as exc:
        raise ArtifactError(f"{where}: {exc}") from exc
    except ValidationError as exc:
        e = exc.errors()[0]
        field = ".".join(str(p) for p in e["loc"])
        raise ArtifactError(f"{where}: field {field}: {e['msg']}"
                            + (f" ({len(exc.errors())} errors)" if len(exc.errors()) > 1
                               else "")) from exc


def read_run(path: Path = ARTIFACT) -> RunRecord:
    """The run record in an artifact file."""
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot read the run artifact: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise ArtifactError(f"{path}: not JSON: {exc}") from exc
    return read_record(data, str(path))


def write_run(record: RunRecord, path: Path = ARTIFACT) -> Path:
    """Write a run record as the JSON artifact, redacted; atomically (a temporary file
    renamed over it) when it is a regular file, as it is; a device such as /dev/null is
    written to, never replaced."""
    text = redact(json.dumps(record.model_dump(mode="json"), indent=2, ensure_ascii=False))
    write_atomically(path, text)
    return path


class RunArtifact:
    """The artifact of a run under way, rewritten (atomically) with the items finished so far
    before the run store is given them (the store's writer asks, `CaseWriter.before_write`),
    so it never holds less than the store, whatever becomes of the store or of the process.
    (Rewritten for each finished item, not each batch, it made a run's CPU grow with the
    square of its items.) Each case is serialised and redacted once; a rewrite joins what is
    kept."""

    def __init__(self, record: RunRecord, path: Path = ARTIFACT) -> None:
        self.path = path
        self._head = record.model_copy(update={"cases": []})
        self._cases: dict[tuple[str, int], str] = {}
        self._results: dict[tuple[str, int], CaseResult] = {}
        self.behind = False  # it keeps an item the file does not have yet
        for result in record.cases:
            self._keep(result)

    def _keep(self, result: CaseResult) -> None:
        key = (result.id, result.repetition)
        self._cases[key] = self._text(result)
        self._results[key] = result

    @staticmethod
    def _text(result: CaseResult) -> str:
        return redact(json.dumps(result.model_dump(mode="json"), ensure_ascii=False))

    def add(self, result: CaseResult) -> None:
        """One more finished item, kept: the next `write` has it."""
        self._keep(result)
        self.behind = True

    def write(self) -> None:
        """The file rewritten with every item kept."""
        # The totals are of the cases written so far: an artifact imported into the store
        # mid-run, or after a kill, says what it holds.
        head_record = self._head.model_copy(
            update={"totals": Totals.of(list(self._results.values()))})
        head = redact(json.dumps(head_record.model_dump(mode="json", exclude={"cases"}),
                                 ensure_ascii=False))
        cases = ",\n".join(self._cases.values())
        write_atomically(self.path, f'{head[:-1]}, "cases": [\n{cases}\n]}}\n')
        self.behind = False


def write_atomically(path: Path, text: str) -> None:
    """Replace a regular file (or create one) so that a reader never sees half of it; write
    anything else (a device, a pipe) in place."""
    if path.exists() and not path.is_file():
        with path.open("w") as out:
            out.write(text)
        return
    # A temporary file of its own: two processes rewriting one artifact (two runs on one
    # checkout) must not write into, or move away, each other's.
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes it private (0600); the artifact keeps the mode it had, else 0644.
        os.fchmod(fd, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
