"""The workspace's writes to the case and scenario files: all-or-nothing, revision-checked,
validated by the loaders, and leaving every entry it did not touch byte for byte as it was.

An edit changes only the entries it names (evals/workspace/entries.py), so the change reads
as a small diff.

A save (`Writer.commit`) names the revision (a hash of the content) of each file the form was
rendered from. Under a lock (a thread lock and an flock on `.workspace.lock`, for a second
workspace on the same checkout) it re-reads those files, refuses a stale revision (`Stale`,
409), applies the edits, runs the case and scenario loaders on the resulting tree (`Invalid`,
422, with the loader's message), then writes each file to a temporary beside it and renames
them into place; if any step fails the files already renamed are put back as they were.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from evals.load.cases import CASES_DIR, PHOTOS_DIR, load_cases_by_file
from evals.load.scenarios import SCENARIOS_DIR, load_scenarios
from evals.load.yamlfile import YamlFileError
from evals.workspace.entries import Edit, diff, edit_entries
from evals.workspace.refusals import Invalid, Stale, WriteFailed, WriteRefused

LOCK_FILE = ".workspace.lock"


def revision(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Sources:
    """Where the case and scenario files are (the evals' own by default; a copy in tests)."""

    cases: Path = CASES_DIR
    scenarios: Path = SCENARIOS_DIR
    photos: Path = PHOTOS_DIR

    def files(self) -> list[str]:
        """Every file the workspace may write, as `cases/x.yaml` or `scenarios/y.yaml`."""
        return ([f"cases/{p.name}" for p in sorted(self.cases.glob("*.yaml"))]
                + [f"scenarios/{p.name}" for p in sorted(self.scenarios.glob("*.yaml"))])

    def path(self, name: str) -> Path:
        if name not in self.files():
            raise WriteRefused(f"{name}: not a case or scenario file")
        folder, _, file = name.partition("/")
        return (self.cases if folder == "cases" else self.scenarios) / file

    def read(self, name: str) -> str:
        """The file's text exactly, line endings included."""
        with open(self.path(name), encoding="utf-8", newline="") as f:
            return f.read()

    def revisions(self) -> dict[str, str]:
        return {name: revision(self.read(name)) for name in self.files()}


# the write ------------------------------------------------------------------------------------

def check_tree(sources: Sources, changed: dict[str, str]) -> None:
    """Load the cases and scenarios as they would be after the change; Invalid if they fail."""
    with tempfile.TemporaryDirectory(prefix="workspace-check-") as tmp:
        root = Path(tmp)
        shutil.copytree(sources.cases, root / "cases")
        shutil.copytree(sources.scenarios, root / "scenarios")
        for name, text in changed.items():
            (root / name).write_text(text, encoding="utf-8")
        cases, errors = load_cases_by_file(root / "cases", sources.photos)
        if errors:
            raise Invalid("\n".join(line for lines in errors.values() for line in lines))
        try:
            # the loader refuses a scenario that takes a case's id, with its file:line
            load_scenarios(root / "scenarios", case_ids={c.id: c.where for c in cases},
                           photos_dir=sources.photos)
        except YamlFileError as exc:
            raise Invalid(str(exc)) from exc


class Writer:
    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with self._lock, open(self.sources.cases.parent / LOCK_FILE, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def commit(self, revisions: dict[str, str], edits: dict[str, Edit]) -> dict[str, str]:
        """Apply `edits` (file -> entries edit) if every file the form names (each edited file
        at least) is still at the revision given; returns each changed file's diff. Writes
        every file or none."""
        with self._locked():
            missing = sorted(set(edits) - set(revisions))
            if missing:
                raise WriteRefused(f"{missing[0]}: the form did not say which revision it"
                                   " edits")
            before: dict[str, str] = {}
            for name, given in sorted(revisions.items()):  # every file the form relied on
                text = self.sources.read(name)
                if given != revision(text):
                    raise Stale(f"{name} changed since this form was opened (someone saved"
                                " it, or it was edited on disk); reload and make the change"
                                " again. Nothing was written.")
                before[name] = text
            after = {name: edit_entries(before[name], name, edit)
                     for name, edit in edits.items()}
            changed = {n: t for n, t in after.items() if t != before[n]}
            if not changed:
                return {}
            check_tree(self.sources, changed)
            self._write_all(changed, before)
            return {n: diff(n, before[n], t) for n, t in changed.items()}

    def _write_all(self, changed: dict[str, str], before: dict[str, str]) -> None:
        targets = {name: self.sources.path(name) for name in changed}
        temps: dict[str, Path] = {}
        done: list[str] = []
        try:
            for name, text in changed.items():
                temps[name] = _temporary(targets[name], text)
            for name in changed:
                os.replace(temps[name], targets[name])
                done.append(name)
        except BaseException as exc:
            for name in done:  # put back, the same way, what was already renamed
                os.replace(_temporary(targets[name], before[name]), targets[name])
            if isinstance(exc, OSError):
                raise WriteFailed(f"could not write {', '.join(changed)}: {exc}; every file"
                                  " was left as it was") from exc
            raise
        finally:
            for left in temps.values():
                left.unlink(missing_ok=True)


def _temporary(target: Path, text: str) -> Path:
    """`text` in a new file beside `target`, flushed to disk, with target's permissions."""
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, target.stat().st_mode & 0o777)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return Path(temp)
