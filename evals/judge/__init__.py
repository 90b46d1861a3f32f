"""The judge: a model asked one question about a transcript, answering a structured verdict;
whether its verdicts decide (trust, from calibration); what it is asked (templates, packs)."""

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

__all__ = ["MAKERSPACE", "RESPONSE_FORMAT", "TEMPLATES", "TUTORING", "VERDICT_SCHEMA",
           "JudgeInput", "JudgeTemplate", "UnreadableVerdict", "Verdict", "judge",
           "judge_messages", "prompt_hash", "read_verdict"]
