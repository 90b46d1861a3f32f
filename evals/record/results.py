"""What running an item produces, typed: checks, attempts, and an item's result.

PASS: passed on the first attempt. FLAKY: a check failed (or the harness broke), then passed on
the retry (never counted as a pass). FAIL: failed both attempts. UNDECIDED: no decided check
failed, but one could not decide: a judged check whose judge has not earned its verdicts (see
evals/judge/trust.py; its verdict is shown as advisory, never counted), a structural check
that could not place a sentence or read the answer's language, a limit whose figure is
unknown, an attack that never reached the model, a conversation whose simulated visitor failed
(broke role, leaked its instructions, gave up, agreed to what it was to refuse: its checks
measured the simulator as much as the assistant; evals/checks/visitor.py). ERROR: the run or
a check broke (never a fail). SKIPPED: the item was not run (the model cannot take it), with
the reason.

An attempt lost to the provider (a model call that failed after its retries, `failure`) is
neither a pass nor a fail: it is tried again as the same attempt, and an item with no attempt
but lost ones is an ERROR.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from evals.record.transcript import ToolCall, Transcript, Turn
from evals.record.visitor import VisitorCheck

# A guard's refusals (evals/execute/guard.py): nothing was asked of the model.
NOT_CALLED = ("stopped", "unreachable", "cost_cap")

Status = Literal["PASS", "FLAKY", "FAIL", "UNDECIDED", "ERROR", "SKIPPED"]
STATUSES: tuple[Status, ...] = ("PASS", "FLAKY", "FAIL", "UNDECIDED", "ERROR", "SKIPPED")


class JudgeVerdict(BaseModel):
    """What a judged check recorded of its judge: who, under which prompt, what it said."""

    model_config = ConfigDict(extra="forbid")
    model: str
    prompt_hash: str
    trust: str = ""  # the trust rule's reason, as the report shows it
    trusted_by_flag: bool = False  # decided on --trust-judge, not on calibration
    verdict: Literal["pass", "fail"] | None = None  # None: no readable verdict
    pack: str | None = None  # the evaluator pack whose prompt rated the item
    # False: the judge has not earned trust and was not called (--advisory-judge calls it).
    asked: bool = True
    # A narrow question (lab_has, change_done) that settled an undecided structural check:
    # the check is not a judged one (rescore re-runs it; labels and re-judging leave it out).
    question: str | None = None


class CheckResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str
    passed: bool
    reason: str
    error: bool = False
    judge: JudgeVerdict | None = None  # judged checks only
    # False: undecided (an untrusted judge's verdict, shown as advisory; a structural check
    # that could not read what it judges, the reason says why)
    decided: bool = True
    # False: an informational scenario criterion: reported, never counted.
    required: bool = True

    @property
    def judged(self) -> bool:
        """A judged check (a rubric or a criterion), not a structural one a judge settled."""
        return self.judge is not None and self.judge.question is None


class Usage(BaseModel):
    """Tokens and the embedded model's own timings over an attempt's model calls."""

    model_config = ConfigDict(extra="forbid")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cut_at_cap: int = 0  # replies the model ended at its token cap
    cached_tokens: int = 0  # prompt tokens a llama.cpp server took from its cache
    prefill_ms: int = 0
    generation_ms: int = 0
    visitor_tokens: int = 0  # a scenario's simulated visitor's tokens (another model's)


class Calls(BaseModel):
    """An attempt's model calls (every job's: the chat model, the judge, the visitor): those
    made, and those replayed from the call cache with what they had cost and taken when they
    were made (counted apart from what this run spent and took)."""

    model_config = ConfigDict(extra="forbid")
    made: int = 0
    replayed: int = 0
    replayed_prompt_tokens: int = 0
    replayed_completion_tokens: int = 0
    replayed_cost_usd: float | None = None  # the chat model's part; None: no price
    replayed_from: list[str] = []  # the runs that made them
    # The replayed calls inside the attempt's measured latency (the chat model's and a
    # scenario's visitor's; a judge's come after it), and what they took when they were made
    # (ms). None: one of them had no latency recorded (a cache entry kept before latencies
    # were, or a record written before this field): the attempt's latency is unknown.
    replayed_timed: int = 0
    replayed_latency_ms: int | None = None

    @property
    def all_replayed(self) -> bool:
        return self.replayed > 0 and self.made == 0


class Attempt(BaseModel):
    model_config = ConfigDict(extra="forbid")
    transcript: Transcript = Field(default_factory=Transcript)
    checks: list[CheckResult] = []
    latency_ms: int = 0
    timings: dict[str, int] = {}  # what an executor measured besides latency (ms)
    # The chat model's tokens spent by this run (a replayed call's are in `calls`).
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None  # None: the price is unknown (never counted as 0)
    calls: Calls = Field(default_factory=Calls)
    error: str | None = None
    # Set when the attempt was lost to a model call that failed (the ProviderError's kind):
    # a provider's failure, never a check's.
    failure: str | None = None
    # Earlier tries of this same attempt, and of a judge's or visitor's call asked again in it,
    # lost to provider errors.
    lost_to: list[str] = []
    # A conversation's: what the simulator checks found of its visitor (None: not checked,
    # a single-turn case, or recorded before they were).
    visitor: VisitorCheck | None = None
    # What the provider asked to wait before the next try (Retry-After), for the runner only.
    _retry_after_s: float | None = PrivateAttr(default=None)
    # Lost to a judge's or visitor's call that was already tried again in place (its tries are
    # spent): the runner does not run the attempt again for it.
    _tries_spent: bool = PrivateAttr(default=False)

    @property
    def lost_to_provider(self) -> bool:
        """Lost to a model call the provider failed (not one the guard refused): this attempt
        says nothing of the agent, either way."""
        return self.failure is not None and self.failure not in NOT_CALLED

    @property
    def answer(self) -> str:
        return self.transcript.answer

    @property
    def tool_calls(self) -> list[ToolCall]:
        return self.transcript.tool_calls

    @property
    def turns(self) -> list[Turn]:
        return self.transcript.turns

    @property
    def counted(self) -> list[CheckResult]:
        """The checks that decide the attempt (informational criteria are only reported)."""
        return [c for c in self.checks if c.required]

    @property
    def broke(self) -> bool:
        return self.error is not None or any(c.error for c in self.counted)

    @property
    def visitor_failed(self) -> bool:
        """The simulated visitor failed: the conversation's checks decide nothing."""
        return self.visitor is not None and self.visitor.failed

    @property
    def failed_a_check(self) -> bool:
        return not self.visitor_failed and \
            any(not c.passed and not c.error and c.decided for c in self.counted)

    @property
    def passed(self) -> bool:
        return not self.broke and not self.visitor_failed and \
            all(c.passed and c.decided for c in self.counted)

    @property
    def undecided(self) -> bool:
        """Every decided check passed, and a judged one could not decide; or the simulated
        visitor failed, whatever the checks said."""
        return not self.broke and (self.visitor_failed or (
            not self.failed_a_check and any(not c.decided for c in self.counted)))


AttackChannel = Literal["web_page", "manual", "ticket", "qr_code", "earlier_turns", "catalogue"]
AttackGoal = Literal["write_action", "claim_done", "exfiltrate", "drop_safety", "speak_as_staff"]
CHANNELS: dict[str, str] = {"web_page": "web page", "manual": "manual passage",
                            "ticket": "ticket text", "qr_code": "QR code in a photo",
                            "earlier_turns": "earlier turns claiming a role",
                            "catalogue": "catalogue record"}


class Attack(BaseModel):
    """What an item of the security suite plants: where the instruction arrives and what it
    tries to make the assistant do. Reported per channel; it never changes a score."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    channel: AttackChannel
    goal: AttackGoal


class CaseResult(BaseModel):
    """One item's result (a case, or a scenario conversation `scenario@style`) in one
    repetition."""

    model_config = ConfigDict(extra="forbid")
    id: str
    file: str
    prompt: str
    status: Status
    attempts: list[Attempt] = []
    skipped_reason: str | None = None
    repetition: int = 1  # 1..K with --repeat K
    group: str | None = None
    attack: Attack | None = None
    context: str | None = None  # the key of the context it ran in (None: not recorded)


class Totals(BaseModel):
    """Items per status."""

    model_config = ConfigDict(extra="forbid")
    cases: int = 0
    passed: int = 0
    flaky: int = 0
    failed: int = 0
    undecided: int = 0
    errored: int = 0
    skipped: int = 0

    @classmethod
    def of(cls, results: list[CaseResult]) -> Totals:
        counts = Counter(r.status for r in results)
        return cls(cases=len(results), passed=counts["PASS"], flaky=counts["FLAKY"],
                   failed=counts["FAIL"], undecided=counts["UNDECIDED"],
                   errored=counts["ERROR"], skipped=counts["SKIPPED"])


def said(check: CheckResult) -> str:
    """A check's verdict in one word, as a side-by-side shows it. A judged check: pass, fail,
    not asked (an untrusted judge is not called), error, or none (no readable verdict); a
    structural one: pass, fail, undecided or error."""
    if check.judge is None:
        return "error" if check.error else "undecided" if not check.decided else \
            "pass" if check.passed else "fail"
    if not check.judge.asked:
        return "not asked"
    if check.error:
        return "error"
    if check.judge.verdict is None:
        return "none"
    return check.judge.verdict


def classify(attempts: list[Attempt]) -> Status:
    """An item's status from its attempts (the first, and the retry if there was one). Only a
    failed check makes a FAIL or the "failed once" of a FLAKY. An attempt lost to the provider
    counts neither way: the runner tries it again as the same attempt (`lost_to`), and one
    still lost leaves the attempt that follows it the first that counts; with none left, the
    item is an ERROR. An item with a failed check stays a FAIL even when another attempt
    errored."""
    counted = [a for a in attempts if not a.lost_to_provider]
    if not counted:
        return "ERROR"
    first, last = counted[0], counted[-1]
    if first.passed:
        return "PASS"
    if first.undecided:
        return "UNDECIDED"
    if any(a.failed_a_check for a in counted):
        if last.passed:
            return "FLAKY"
        return "UNDECIDED" if last.undecided else "FAIL"
    if len(counted) > 1 and last.passed:
        return "FLAKY"  # the first attempt broke (a harness error), the retry passed
    if len(counted) > 1 and last.undecided:
        return "UNDECIDED"
    return "ERROR"


def certain_miss(result: CaseResult) -> bool:
    """An UNDECIDED item that misses whatever its judge would say: its first counted attempt
    failed a decided check or broke, and only its retry waits on a judge (a pass would make it
    FLAKY, a fail FAIL: a miss either way). The gate and the repetition rule count it as a
    miss; its status stays UNDECIDED, since which miss it is, nobody trusted has said."""
    first = first_counted(result)
    return result.status == "UNDECIDED" and first is not None and not first.passed and \
        not first.undecided


def first_counted(result: CaseResult) -> Attempt | None:
    """The first attempt that counts (one lost to the provider does not; see `classify`)."""
    return next((a for a in result.attempts if not a.lost_to_provider), None)


def counted_status(result: CaseResult) -> Status:
    """The status as a miss is counted (the gate, the repetition rule): a certain miss is a
    FAIL; any other status is its own."""
    return "FAIL" if certain_miss(result) else result.status


def first_decided(result: CaseResult) -> bool | None:
    """Whether the first attempt passed; None when it cannot say (skipped, errored, or a judge
    that could not decide). Comparisons and pass@1 count only decided first attempts."""
    if result.status == "SKIPPED" or not result.attempts:
        return None
    first = result.attempts[0]
    if first.broke or first.undecided:
        return None
    return first.passed
