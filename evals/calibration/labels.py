"""The judge against the labels people gave in the workspace (stored in the run store).

Only verdicts of one judge model under one prompt hash are compared (the hash names the
evaluator pack's prompt too, so a pack is calibrated apart from the plain prompt). Per
verdict, people's labels count once: everyone who answered pass or fail agrees, or the verdict
is a disagreement between people, left out and counted (a judge cannot agree with both);
`skip` labels count for neither side, and a verdict only skipped is left out and counted.

A label counts only under the rubric it was given with. For a pack (`pack`), only the verdicts
its prompt gave, and of their labels only those given with that pack's rubric in view (the
label names the pack and the prompt hash shown, which must be the verdict's); its other labels
(stored before the tab showed a pack's rubric, or with the pack's prompt changed since) are
left out and counted. Without a pack, only verdicts given under each case's own rubric: a
pack's verdicts and their labels never count for the plain prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evals.calibration.calibrate import Calibration, CalibrationError, Rated, calibrate
from evals.record.labels import Key, Label, find_check, list_labels, people_say
from evals.record.results import CheckResult, JudgeVerdict
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
    pack: str | None = None
    # labels of the pack's verdicts given without its rubric in view: they do not count
    not_under_rubric: int = 0


def _name(key: Key) -> str:
    run, item, repetition, attempt, check = key
    return f"{run}/{item}#r{repetition}a{attempt}c{check}"


def _counts(label: Label, verdict: JudgeVerdict, pack: str | None) -> bool:
    """Whether a label of this verdict counts for the pack's calibration (or the plain
    prompt's): given under the rubric the verdict was given under."""
    if pack is None:
        return label.rubric_pack is None
    return label.under_pack(pack, verdict.prompt_hash)


def _none_found(model: str, pack: str | None, not_under: int) -> str:
    if pack is None:
        return f"no labelled verdicts of judge {model} (label some on the workspace's Labels tab)"
    left_out = (f"; {not_under} label(s) of its verdicts were given without its rubric in view"
                " and do not count" if not_under else "")
    return (f"no labelled verdicts of judge {model} with pack {pack} labelled with the pack's"
            f" rubric in view (label them on the workspace's Labels tab, which shows it"
            f"{left_out})")


async def from_labels(store: RunStore, model: str, prompt_hash: str | None = None,
                      pack: str | None = None) -> LabelCalibration:
    """Compare one judge's stored verdicts (its pack's, with `pack`; under each case's own
    rubric, without) with people's stored labels of them given under that rubric."""
    labels = await list_labels(store)
    runs: dict[str, RunRecord] = {}
    for run_id in sorted({label.run for label in labels}):
        runs[run_id] = await store.load_run(run_id)
    judged: dict[Key, tuple[CheckResult, JudgeVerdict]] = {}
    stale: list[str] = []
    seen: set[Key] = set()
    for label in labels:
        if label.key in seen:
            continue
        seen.add(label.key)
        check = find_check(runs[label.run], label.ref())
        if check is None or not check.judged or check.judge is None:
            stale.append(f"{_name(label.key)} ({label.kind})")
        else:
            judged[label.key] = check, check.judge
    kept: list[Label] = []
    not_under = 0
    for label in labels:
        if label.key not in judged:
            continue
        verdict = judged[label.key][1]
        if verdict.model != model or verdict.pack != pack:
            continue
        if _counts(label, verdict, pack):
            kept.append(label)
        else:
            not_under += 1
    said = people_say(kept)
    hashes: dict[str, list[Key]] = {}
    found: dict[Key, Rated] = {}
    for key in [*said.agreed, *said.disagreed, *said.only_skipped]:
        check, verdict = judged[key]
        hashes.setdefault(verdict.prompt_hash, []).append(key)
        found[key] = Rated(_name(key), verdict.verdict, check.reason)
    if prompt_hash is None:
        if not hashes:
            raise CalibrationError(_none_found(model, pack, not_under))
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
        only_skipped=sum(k in chosen for k in said.only_skipped), stale=stale, pack=pack,
        not_under_rubric=not_under)


def render_extra(c: LabelCalibration) -> str:
    """What the labels left out, beside the calibration's own report."""
    lines = [f"judge {c.model} under prompt {c.prompt_hash}"
             + (f" (pack {c.pack}: labels given with its rubric in view)" if c.pack else "")]
    if c.people_disagree:
        lines.append(f"people disagree (left out): {len(c.people_disagree)}: "
                     + ", ".join(c.people_disagree))
    if c.only_skipped:
        lines.append(f"only skipped (left out): {c.only_skipped}")
    if c.not_under_rubric:
        lines.append(f"labels given without pack {c.pack}'s rubric in view (left out):"
                     f" {c.not_under_rubric}")
    if c.stale:
        lines.append("labels whose check is no longer as labelled (left out): "
                     + ", ".join(c.stale))
    return "\n".join(lines)
