"""What an operation that runs items is asked for: which items, which models, how often, with
what limits. The command line builds these from its flags; a script builds them itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evals.record.artifact import ARTIFACT
from evals.record.fingerprint import Selection
from evals.record.repetitions import RepeatRule
from evals.settings import Policy


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible endpoint the run sends each case to directly, nothing composed
    (the key: EVAL_ENDPOINT_API_KEY)."""

    url: str
    model: str  # the model id the endpoint serves


@dataclass(frozen=True)
class JudgeChoice:
    """How the run's judge is chosen: its model, an evaluator pack, and --trust-judge."""

    model: str | None = None
    pack: str | None = None
    trust: bool = False
    advisory: bool = False  # call an untrusted judge anyway, its verdicts advisory
    auto_calibrate: bool = True  # calibrate a judge with no record first (calibrate_new_judge)


@dataclass(frozen=True)
class RunOptions:
    """What an operation that runs items was asked for. Left at its defaults, a run is every
    case and scenario of evals/ against the configured chat model."""

    selection: Selection = field(default_factory=Selection)
    model: str | None = None
    judge: JudgeChoice = JudgeChoice()
    concurrency: int | None = None  # None: DEFAULT_CONCURRENCY, or one per local model slot
    repeat: int = 1  # with `rule`, the most repetitions it may run
    rule: RepeatRule | None = None  # `--repeat auto[:MAX]`
    fail_on_skip: bool | None = None
    max_cost: float | None = None
    vision: bool | None = None
    artifact: Path = ARTIFACT
    junit: Path | None = None
    cache: Policy = "reuse"
    ray: str | None = None  # a Ray cluster's address, or local:N (evals/execute/cluster/)
    endpoint: Endpoint | None = None  # send the cases there instead of through the app

    @property
    def fails_on_skip(self) -> bool:
        """A skipped item fails the run; by default only when a model was named."""
        return self.fail_on_skip if self.fail_on_skip is not None else bool(self.model)
