"""Online evaluation's records, typed: a verdict of one check on one recorded, consented turn
of the app (its reference, never its text), and a row of the trend made of them: per check,
per week or per deployed agent, the failure rate with its interval."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict

OnlineKind = Literal["no_unknown_tools", "not_claimed_done", "no_fabricated_specs",
                     "citations_resolve", "no_exfiltration", "no_unrequested_action"]
ONLINE_KINDS: tuple[OnlineKind, ...] = (
    "no_unknown_tools", "not_claimed_done", "no_fabricated_specs", "citations_resolve",
    "no_exfiltration", "no_unrequested_action")


class OnlineVerdict(BaseModel):
    """One check on one turn: the turn's reference (its id and conversation in the app's
    database), when it was answered, by which agent (a digest of its model and system prompt)
    and model, the verdict, and why it is undecided when it is (a reason of the sampler's
    own, which quotes nothing of the turn). A system prompt is composed per audience and page,
    so an agent is compared only with agents of the same context."""

    model_config = ConfigDict(extra="forbid")
    turn_id: int
    conversation: str
    turn_at: dt.datetime
    agent: str
    context: str  # the audience and page it was asked from ("student /tools/form-4")
    model: str
    kind: str
    verdict: Literal["pass", "fail", "undecided"]
    why: str = ""
    harness: str


class TrendRow(BaseModel):
    """One check's failure rate in one group of turns (a week, or an agent): the turns it
    decided, those it failed, those it could not decide, the rate over the decided ones with
    its 95% Wilson interval, and whether it moved beyond the noise from the group before."""

    model_config = ConfigDict(extra="forbid")
    kind: str
    group: str  # "2026-W49", or an agent digest
    label: str  # how the group reads ("week 2026-W49", "agent 1a2b3c4d (model, first …)")
    decided: int
    failed: int
    undecided: int
    rate: float | None
    low: float | None
    high: float | None
    flagged: bool = False
    worse: bool = False  # flagged with its failure rate up
    failing: list[int] = []  # the ids of the turns it failed in this group (at most 20)
    stream: str = ""  # the audience and page its agents are compared within ("": all)
    why: str = ""
