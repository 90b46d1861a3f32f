"""The judge against the labels people gave in the workspace (stored in the run store).

Only verdicts of one judge model under one prompt hash are compared (the hash names the
evaluator pack's prompt too, so a pack is calibrated apart from the plain prompt). Per
verdict, people's labels count once: everyone who answered pass or fail agrees, or the verdict
is a disagreement between people, left out and counted (a judge cannot agree with both);
`skip` labels count for neither side, and a verdict only skipped is left out and counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evals.calibration.calibrate import Calibration, CalibrationError, Rated, calibrate
from evals.record.labels import Key, find_check, list_labels, people_say
from evals.record.run import RunRecord
from evals.record.store import RunStore

LABELS_SET = "labels"


@dataclass
class LabelCalibration:
    result: Calibration
    model: str
    prompt_hash: str
    people_disagree: list[str] = field(default_factory=list)
    only_skipped: int = 0
    stale: list[str] = field(default_factory=list)  # the check is no longer as labelled


def _name(key: Key) -> str:
    run, item, repetition, attempt, check = key
    return f"{run}/{item}#r{repetition}a{attempt}c{check}"


async def from_labels(store: RunStore, model: str, prompt_hash: str | None = None,
                      pack: str | None = None) -> LabelCalibration:
    """Compare one judge's stored verdicts with people's stored labels of them."""
    labels = await list_labels(store)
    refs = {label.key: label.ref() for label in labels}
    runs: dict[str, RunRecord] = {}
    for run_id in sorted({label.run for label in labels}):
        runs[run_id] = await store.load_run(run_id)
    said = people_say(labels)
    hashes: dict[str, list[Key]] = {}
    found: dict[Key, Rated] = {}
    stale: list[str] = []
    for key in [*said.agreed, *said.disagreed, *said.only_skipped]:
        check = find_check(runs[key[0]], refs[key])
        if check is None or check.judge is None:
            stale.append(f"{_name(key)} ({refs[key].kind})")
            continue
        if check.judge.model != model or (pack is not None and check.judge.pack != pack):
            continue
        hashes.setdefault(check.judge.prompt_hash, []).append(key)
        found[key] = Rated(_name(key), check.judge.verdict, check.reason)
    if prompt_hash is None:
        if not hashes:
            raise CalibrationError(f"no labelled verdicts of judge {model}"
                                   + (f" with pack {pack}" if pack else "")
                                   + " (label some on the workspace's Labels tab)")
        if len(hashes) > 1:
            counts = ", ".join(f"{h} ({len(k)})" for h, k in sorted(hashes.items()))
            raise CalibrationError(f"labelled verdicts of {model} were given under several"
                                   f" judge prompts: {counts}; choose one with --prompt-hash")
        prompt_hash = next(iter(hashes))
    chosen = set(hashes.get(prompt_hash, []))
    rated = [found[k] for k in sorted(chosen) if k in said.agreed]
    people: dict[str, str] = {_name(k): said.agreed[k] for k in sorted(chosen)
                              if k in said.agreed}
    return LabelCalibration(
        calibrate(rated, people), model, prompt_hash,
        people_disagree=[_name(k) for k in sorted(chosen) if k in said.disagreed],
        only_skipped=sum(k in chosen for k in said.only_skipped), stale=stale)


def render_extra(c: LabelCalibration) -> str:
    """What the labels left out, beside the calibration's own report."""
    lines = [f"judge {c.model} under prompt {c.prompt_hash}"]
    if c.people_disagree:
        lines.append(f"people disagree (left out): {len(c.people_disagree)}: "
                     + ", ".join(c.people_disagree))
    if c.only_skipped:
        lines.append(f"only skipped (left out): {c.only_skipped}")
    if c.stale:
        lines.append("labels whose check is no longer as labelled (left out): "
                     + ", ".join(c.stale))
    return "\n".join(lines)
