"""What a run produces, typed: checks, attempts, cases, and the artifact that holds them.

PASS: passed on the first attempt. FLAKY: a check failed, then passed on the retry (never
counted as a pass). FAIL: failed both attempts. UNDECIDED: every structural check passed but a
judged check's judge has not earned its verdicts (see evals/trust.py): its verdict is shown as
advisory, never counted. ERROR: the run or a check broke (never a fail). SKIPPED: the case
was not run (the model cannot take it), with the reason.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evals.record.fingerprint import AgentInfo, PlanInfo

Status = Literal["PASS", "FLAKY", "FAIL", "UNDECIDED", "ERROR", "SKIPPED"]
STATUSES: tuple[Status, ...] = ("PASS", "FLAKY", "FAIL", "UNDECIDED", "ERROR", "SKIPPED")
ARTIFACT_VERSION = 2


class CheckResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str
    passed: bool
    reason: str
    error: bool = False
    # Judged checks only: the judge's model, prompt hash, verdict and whether it decides.
    judge: dict[str, Any] | None = None
    decided: bool = True  # False: an untrusted judge's verdict, shown as advisory
    # False: an informational scenario criterion: reported, never counted.
    required: bool = True


class Attempt(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: str = ""
    tool_calls: list[dict[str, Any]] = []
    checks: list[CheckResult] = []
    qr_hints: list[str] = []
    attached_manuals: list[dict[str, Any]] = []
    evidence: dict[str, Any] = {}
    turns: list[dict[str, str]] = []  # the whole conversation, when it was more than one turn
    latency_ms: int = 0
    timings: dict[str, int] = {}  # what an executor measured besides latency (ms)
    usage: dict[str, int] = {}
    cost_usd: float | None = None  # None: the price is unknown (never counted as 0)
    error: str | None = None
    # Set when the attempt was lost to a model call that failed (the ProviderError's kind):
    # a provider's failure, never a check's.
    failure: str | None = None
    lost_to: list[str] = []  # earlier tries of this same attempt, lost to provider errors

    @property
    def counted(self) -> list[CheckResult]:
        """The checks that decide the attempt (informational criteria are only reported)."""
        return [c for c in self.checks if c.required]

    @property
    def broke(self) -> bool:
        return self.error is not None or any(c.error for c in self.counted)

    @property
    def failed_a_check(self) -> bool:
        return any(not c.passed and not c.error and c.decided for c in self.counted)

    @property
    def passed(self) -> bool:
        return not self.broke and all(c.passed and c.decided for c in self.counted)

    @property
    def undecided(self) -> bool:
        """Every decided check passed, and a judged one could not decide."""
        return not self.broke and not self.failed_a_check and \
            any(not c.decided for c in self.counted)


class CaseResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    file: str
    prompt: str
    status: Status
    attempts: list[Attempt] = []
    skipped_reason: str | None = None
    repetition: int = 1  # 1..K with --repeat K
    group: str | None = None


class RunRecord(BaseModel):
    """A run, typed: what the JSON artifact (evals/.last-run.json) serialises and what the run
    store keeps. Report, rescore, calibrate, compare and the gate all read this one type."""

    model_config = ConfigDict(extra="allow")  # version 1 artifacts carried a few loose keys
    version: int = ARTIFACT_VERSION
    run_id: str | None = None
    status: Literal["running", "complete", "interrupted"] = "complete"
    started: str | None = None
    ended: str | None = None
    settings: dict[str, Any] = {}
    models: dict[str, Any] = {}
    judge_model: str | None = None
    judge_trusted_by_flag: bool = False
    plan: PlanInfo | None = None
    agent: AgentInfo | None = None
    point: str | None = None  # the comparison point whose frozen agent this run ran
    totals: dict[str, int] = {}
    cases: list[CaseResult] = Field(default_factory=list)
    unfinished: list[str] = []  # "case-id#repetition" not run when the run was interrupted


def classify(attempts: list[Attempt]) -> Status:
    """A case's status from its attempts (the first, and the retry if there was one). Only a
    failed check makes a FAIL or the "failed once" of a FLAKY; a provider's failure is retried
    as the same attempt (`lost_to`), and a case with a failed check stays a FAIL even when
    another attempt errored."""
    first, last = attempts[0], attempts[-1]
    if first.passed:
        return "PASS"
    if first.undecided:
        return "UNDECIDED"
    if any(a.failed_a_check for a in attempts):
        if last.passed:
            return "FLAKY"
        return "UNDECIDED" if last.undecided else "FAIL"
    if len(attempts) > 1 and last.passed:
        return "FLAKY"  # the first attempt broke (a harness error), the retry passed
    if len(attempts) > 1 and last.undecided:
        return "UNDECIDED"
    return "ERROR"


def first_decided(result: CaseResult) -> bool | None:
    """Whether the first attempt passed; None when it cannot say (skipped, errored, or a judge
    that could not decide). Comparisons and pass@1 count only decided first attempts."""
    if result.status == "SKIPPED" or not result.attempts:
        return None
    first = result.attempts[0]
    if first.broke or first.undecided:
        return None
    return first.passed
