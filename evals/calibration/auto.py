"""A judge's first calibration: the run that first uses a judge model under the base prompt with
no calibration record for it (a new EVAL_JUDGE_MODEL, a provider key) rates the shipped
makerspace set with it before any item is judged, and saves the record. The judge then decides
or not by the one rule (evals/judge/trust.py), instead of leaving every judged item UNDECIDED
for want of a record. A judge that has a record, even a bad one, is not calibrated again: its
figures stand until `python -m evals calibrate --save` replaces them.

An evaluator pack's prompt is never calibrated here: the makerspace set's labels were given
under each case's own rubric, so they say nothing of the pack's. A pack stays untrusted until
people label its verdicts with its rubric in view (`calibrate --labels --pack`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from app.chat.models import ChatModel
from evals.calibration.calibrate import Calibration, calibrate
from evals.calibration.sets import Item, rate
from evals.judge.setup import PackPrompt, prompt_hash_for
from evals.judge.trust import JudgeRecord, Trust, has_record, save_record, today, trust
from evals.load.items import EvalItem

SET = "makerspace"


def prompts_asked(items: Sequence[EvalItem], pack: PackPrompt | None
                  ) -> list[PackPrompt | None]:
    """The prompts a run's judge is asked under: the pack's for judged cases if a pack is
    chosen, the base's (None) for the judged items it does not rate."""
    judged = [i for i in items if i.judged]
    if pack is None:
        return [None] if judged else []
    asked: list[PackPrompt | None] = [pack] if any(i.single_turn for i in judged) else []
    return asked + ([None] if any(not i.single_turn for i in judged) else [])


def unrecorded(model_id: str, prompts: Sequence[PackPrompt | None], path: Path | None = None
               ) -> list[PackPrompt | None]:
    """The prompts this judge model has no calibration record under."""
    return [p for p in prompts if not has_record(model_id, prompt_hash_for(p), path)]


def record_of(model_id: str, result: Calibration, set_name: str = SET) -> JudgeRecord:
    """The trust record of one calibration under the base prompt."""
    return JudgeRecord(model=model_id, prompt_hash=prompt_hash_for(None), set=set_name,
                       n=result.rated, agreement=result.agreement, kappa=result.kappa,
                       date=today())


async def calibrate_first(model: ChatModel, labelled: list[Item], concurrency: int,
                          path: Path | None = None) -> tuple[JudgeRecord, Trust]:
    """Rate the labelled set under the base prompt (each case's own rubric, the one its label
    was given under), save the record, and return it with the trust it earns. A failed model
    call raises ModelCallError and nothing is saved: a judge that cannot answer has not been
    measured."""
    verdicts, labels = await rate(labelled, model, concurrency, strict=True)
    record = record_of(model.model_id, calibrate(verdicts, labels))
    save_record(record, path)
    return record, trust(model.model_id, record.prompt_hash, path)
