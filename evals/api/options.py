"""What an operation that runs items is asked for: which items, which models, how often, with
what limits. The command line builds these from its flags; a script builds them itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evals.record.artifact import ARTIFACT
from evals.record.fingerprint import Selection
from evals.record.repetitions import RepeatRule, parse_repeat
from evals.settings import Policy, eval_settings


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
    max_cost: float | None = None  # USD: the command's model calls, every job's, stay under it
    allow_unpriced: bool = False  # under a cap, call a model with no known price anyway
    vision: bool | None = None
    artifact: Path = ARTIFACT
    junit: Path | None = None
    cache: Policy = "reuse"
    ray: str | None = None  # a Ray cluster's address, or local:N (evals/execute/cluster/)
    endpoint: Endpoint | None = None  # send the cases there instead of through the app

    @classmethod
    def from_env(cls, **fields: object) -> RunOptions:
        """The options `make eval` runs with: every EVAL_ setting (EVAL_CASES, EVAL_GROUPS,
        EVAL_MODEL, EVAL_JUDGE_MODEL, EVAL_REPEAT, EVAL_CACHE, EVAL_VISION, …), then
        `fields` over them. `RunOptions()` itself reads none of them."""
        env = eval_settings()
        repeat = parse_repeat(str(env.repeat))
        rule = repeat if isinstance(repeat, RepeatRule) else None
        values: dict[str, object] = dict(
            selection=Selection.of(env.cases, env.groups), model=env.model,
            judge=JudgeChoice(env.judge_model, None, env.trust_judge, env.advisory_judge,
                              env.auto_calibrate),
            concurrency=env.concurrency, repeat=rule.max if rule else repeat, rule=rule,
            fail_on_skip=env.fail_on_skip, max_cost=env.max_cost,
            allow_unpriced=env.allow_unpriced, vision=env.vision,
            cache=env.cache, ray=env.ray_address)
        return cls(**{**values, **fields})  # type: ignore[arg-type]

    @property
    def fails_on_skip(self) -> bool:
        """A skipped item fails the run; by default only when a model was named."""
        return self.fail_on_skip if self.fail_on_skip is not None else bool(self.model)
