"""A run, typed to the leaves: what the JSON artifact (evals/.last-run.json) serialises and
what the run store keeps. Report, rescore, calibrate, compare, the gate, the workspace and the
MCP tools all read this one type, through evals/record/artifact.py or the store."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evals.record.fingerprint import AgentInfo, PlanInfo
from evals.record.results import CaseResult, Totals

ARTIFACT_VERSION: Literal[3] = 3
RunStatus = Literal["running", "complete", "interrupted"]


class Models(BaseModel):
    """The models a run called, each once: the chat model under test, its judge, the
    scenarios' simulated visitor, or the endpoint a run sent its cases to."""

    model_config = ConfigDict(extra="forbid")
    chat: str | None = None
    judge: str | None = None
    visitor: str | None = None
    endpoint: str | None = None


class RunSettings(BaseModel):
    """How a run ran (what does not change what is asked or how it is judged: that is the
    plan)."""

    model_config = ConfigDict(extra="forbid")
    concurrency: int | None = None
    order: list[str] = []  # item ids in the order the files give them
    version: str | None = None  # the agent version's label in a comparison (baseline, current)
    launch: str | None = None  # the workspace launch that started it
    pid: int | None = None  # the process that ran it (a running run is resumed only if dead)
    gate: bool = False
    judge_pack: str | None = None  # the evaluator pack that rated its judged cases
    judge_prompt_hash: str | None = None
    suite: str | None = None  # a public rated set run instead of the cases (mrbench)
    suite_file: str | None = None
    limit: int | None = None
    cache: Literal["reuse", "refresh", "off"] | None = None  # the model-call cache's policy
    advisory_judge: bool = False  # an untrusted judge was called for advisory verdicts
    rerun_of: str | None = None  # the run whose items that did not pass this one ran again


class Spent(BaseModel):
    """What the command that made a run spent on model calls (USD, at litellm's prices), each
    job's part apart: the chat model's, the judge's, the simulated visitor's and a first-use
    calibration's of the judge. A comparison's or a gate's runs were made by one command: each
    holds the command's whole spend. A resumed run's adds what its resume spent."""

    model_config = ConfigDict(extra="forbid")
    chat: float = 0.0
    judge: float = 0.0
    visitor: float = 0.0
    calibration: float = 0.0
    max_cost_usd: float | None = None  # the cap it ran under (the last one, when resumed)
    unpriced: list[str] = []  # models it called at no known price: their calls are not counted
    refused: int = 0  # model calls the cap kept from being made

    @property
    def total(self) -> float:
        return self.chat + self.judge + self.visitor + self.calibration

    def parts(self) -> dict[str, float]:
        """Each job's spend, in the order the report names them."""
        return {"chat": self.chat, "judge": self.judge, "visitor": self.visitor,
                "calibration": self.calibration}

    def plus(self, other: Spent | None) -> Spent:
        """This spend and an earlier one's (a resumed run's before)."""
        if other is None:
            return self
        return Spent(chat=self.chat + other.chat, judge=self.judge + other.judge,
                     visitor=self.visitor + other.visitor,
                     calibration=self.calibration + other.calibration,
                     max_cost_usd=self.max_cost_usd,
                     unpriced=sorted({*self.unpriced, *other.unpriced}),
                     refused=self.refused + other.refused)


class RunRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: Literal[3] = ARTIFACT_VERSION
    run_id: str | None = None
    status: RunStatus = "complete"
    started: str | None = None
    ended: str | None = None
    settings: RunSettings = Field(default_factory=RunSettings)
    models: Models = Field(default_factory=Models)
    judge_trusted_by_flag: bool = False
    plan: PlanInfo | None = None
    agent: AgentInfo | None = None
    point: str | None = None  # the comparison point whose frozen agent this run ran
    totals: Totals = Field(default_factory=Totals)
    cases: list[CaseResult] = []
    unfinished: list[str] = []  # "item-id#repetition" not run when the run was interrupted
    # What its command spent on model calls, every job's; None: a record written before it
    # was kept (its report counts its chat model's attempts only).
    spend: Spent | None = None

    @property
    def capped(self) -> list[CaseResult]:
        """The items the cost cap left unrun."""
        return [r for r in self.cases if (r.skipped_reason or "").startswith("cost cap")]
