"""The judge: a model asked one question about a transcript, answering a structured verdict
(or a score on a rubric's scale, for the essay sets); whether its verdicts decide (trust, from
calibration); what it is asked (templates, packs)."""

from evals.judge._ask import (
    MAKERSPACE,
    RESPONSE_FORMAT,
    TEMPLATES,
    TUTORING,
    VERDICT_SCHEMA,
    JudgeInput,
    JudgeTemplate,
    UnreadableVerdict,
    Verdict,
    judge,
    judge_messages,
    prompt_hash,
    read_verdict,
)
from evals.judge._score import (
    ESSAY,
    Score,
    ScoreInput,
    ScoreTemplate,
    UnreadableScore,
    read_score,
    score,
    score_messages,
)

__all__ = ["ESSAY", "MAKERSPACE", "RESPONSE_FORMAT", "TEMPLATES", "TUTORING", "VERDICT_SCHEMA",
           "JudgeInput", "JudgeTemplate", "Score", "ScoreInput", "ScoreTemplate",
           "UnreadableScore", "UnreadableVerdict", "Verdict", "judge", "judge_messages",
           "prompt_hash", "read_score", "read_verdict", "score", "score_messages"]
