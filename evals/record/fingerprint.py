"""Fingerprints, typed: what a run asked and how it judged (the plan), and what the assistant
was (the agent). Two runs compare only under one plan; an agent's fingerprint changes exactly
when what the model is told changes (the composed system prompt or a tool schema, for some
audience and page the plan uses), or its model, settings or commit.

The plan is computed from the loaded items (evals/load/plan.py), the agent from the composed
contexts (evals/execute/agent.py); here are the types and the hash they share.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from evals.record.repetitions import RepeatRule


def digest(value: Any) -> str:
    """A short, stable hash of JSON-able data."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Selection(BaseModel):
    """Which items a run ran: what `--cases`/EVAL_CASES, `--group`, a case file, `--cases-only`,
    `--scenarios-only` and `--full` asked for."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    file: str | None = None  # a case file or folder run instead of evals/cases/
    names: tuple[str, ...] = ()  # case or scenario files (without .yaml) and ids
    groups: tuple[str, ...] = ()
    only: Literal["cases", "scenarios"] | None = None
    full: bool = False  # scenarios in every visitor style they allow, not the calm one only

    @classmethod
    def of(cls, names: str | None = None, groups: str | None = None, *,
           file: str | None = None, only: Literal["cases", "scenarios"] | None = None,
           full: bool = False) -> Selection:
        """From comma lists as a person types them (EVAL_CASES, EVAL_GROUPS)."""
        return cls(file=file, names=_names(names), groups=_names(groups), only=only, full=full)

    def describe(self) -> str | None:
        """One line for a person ("cases=a,b; groups=g"), None when everything was selected."""
        parts = [f"file={self.file}" if self.file else "",
                 f"cases={','.join(self.names)}" if self.names else "",
                 f"groups={','.join(self.groups)}" if self.groups else "",
                 f"only={self.only}" if self.only else "",
                 "styles=full" if self.full else ""]
        return "; ".join(p for p in parts if p) or None


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(n.strip() for n in (text or "").split(",") if n.strip())


class JudgePlan(BaseModel):
    """The judge a plan is judged by (all None when the plan has no judged item): its model,
    the hash of its full prompt template (an evaluator pack's prompt in it), and the pack."""

    model_config = ConfigDict(extra="forbid")
    model: str | None = None
    prompt_hash: str | None = None
    pack: str | None = None  # "PACK/NAME" when an evaluator pack rates the judged cases

    def material(self) -> dict[str, str | None]:
        """What the plan hashes (a judge without a pack hashes as it did before packs were
        named)."""
        return self.model_dump(exclude={"pack"} if self.pack is None else None)


class VisitorPlan(BaseModel):
    """The other side of a plan's conversations: the simulated visitor's model as resolved, the
    hash of its full instruction template (styles and stop word included), and the hash of
    what else decides its replies (its transport's identity: the endpoint, temperature, token
    cap, a local model file's sha256; never a key)."""

    model_config = ConfigDict(extra="forbid")
    model: str | None
    prompt_hash: str
    settings: str | None = None  # None: a plan recorded before the settings were in it


class PlanInfo(BaseModel):
    """The plan of a run: its fingerprint and the parts it was made of, for a readable diff."""

    model_config = ConfigDict(extra="forbid")
    fingerprint: str
    cases: dict[str, str]  # item id -> content hash
    fixtures: dict[str, str]  # fixture name -> content hash
    judge: JudgePlan
    # The simulated visitor of the plan's conversations (None: the plan has none).
    visitor: VisitorPlan | None = None
    repeat: int  # K fixed repetitions, or the most an auto rule may run
    harness: str
    selection: Selection | None = None  # how the items were chosen: not part of the hash
    # `--repeat auto[:MAX]`: the rule that stopped each case (None: every case ran `repeat`).
    repeat_rule: RepeatRule | None = None
    # The fixture data a request may carry, record by record (a manual, a catalogue record, a
    # ticket, a person: evals/load/fixture_data.py) -> its digest; not part of the hash, as
    # the files they are written in are. Empty: a plan recorded before they were kept.
    inputs: dict[str, str] = {}

    @property
    def repeats(self) -> str:
        """The repetitions for a person: "5 fixed" or the auto rule."""
        return self.repeat_rule.describe() if self.repeat_rule else f"{self.repeat} fixed"

    def changes_since(self, old: PlanInfo) -> list[str]:
        """What differs from an older plan, one line each."""
        out = [f"case added: {cid}" for cid in sorted(set(self.cases) - set(old.cases))]
        out += [f"case removed: {cid}" for cid in sorted(set(old.cases) - set(self.cases))]
        out += [f"case edited: {cid}" for cid in sorted(set(old.cases) & set(self.cases))
                if old.cases[cid] != self.cases[cid]]
        out += [f"now a fixture of this plan: {name}"
                for name in sorted(set(self.fixtures) - set(old.fixtures))]
        out += [f"no longer a fixture of this plan: {name}"
                for name in sorted(set(old.fixtures) - set(self.fixtures))]
        out += [f"fixture changed: {name}"
                for name in sorted(set(old.fixtures) & set(self.fixtures))
                if old.fixtures[name] != self.fixtures[name]]
        if old.judge != self.judge:
            out.append(f"judge changed: {old.judge.material()} -> {self.judge.material()}")
        if old.visitor != self.visitor:
            out += _visitor_changes(old.visitor, self.visitor)
        if old.repeat != self.repeat:
            out.append(f"repetitions changed: {old.repeat} -> {self.repeat}")
        if old.repeat_rule != self.repeat_rule:
            out.append(f"repetition rule changed: {old.repeats} -> {self.repeats}")
        if old.harness != self.harness:
            out.append("harness changed (the checks, the catalogue pins or the judge code)")
        return out


def _visitor_changes(old: VisitorPlan | None, new: VisitorPlan | None) -> list[str]:
    if old is None:
        return [f"simulated visitor added: {new.model if new else '?'}"]
    if new is None:
        return [f"simulated visitor removed: {old.model}"]
    out = []
    if old.model != new.model:
        out.append(f"simulated visitor's model changed: {old.model} -> {new.model}")
    if old.prompt_hash != new.prompt_hash:
        out.append(f"simulated visitor's instructions changed: {old.prompt_hash} ->"
                   f" {new.prompt_hash}")
    if old.settings != new.settings:
        out.append(f"simulated visitor's settings changed (endpoint, temperature, token cap or"
                   f" model file): {old.settings or 'not recorded'} -> {new.settings}")
    return out


class FrozenContext(BaseModel):
    """What the assistant is told for one audience and page: system prompt and tool schemas
    (each an OpenAI function schema, JSON)."""

    model_config = ConfigDict(extra="forbid")
    system_prompt: str
    tools: list[dict[str, JsonValue]]


class AgentSettings(BaseModel):
    """The app settings that change what the agent does with what it is told."""

    model_config = ConfigDict(extra="forbid")
    max_tool_steps: int
    # The chat model's temperature (MODEL_TEMPERATURE); None: the provider's default, and an
    # agent recorded before it was kept.
    temperature: float | None = None


class AgentInfo(BaseModel):
    """An agent version: model, settings, what it is told per context, and the commit."""

    model_config = ConfigDict(extra="forbid")
    fingerprint: str
    model: str
    settings: AgentSettings
    contexts: dict[str, FrozenContext]  # context key -> what the model is told there
    git_commit: str | None
    git_dirty: bool
    # How the model was asked for ("local", or the id given): what runs it again. The
    # resolved id above can name a server that only exists while this harness runs it.
    model_ref: str | None = None
    # Per context key, its capability fragments in prompt order and the lines each has in the
    # system prompt (where a changed line is put down to a capability); not in the hash.
    fragments: dict[str, dict[str, int]] = {}

    @property
    def ref(self) -> str:
        """How to ask for this agent's model again."""
        return self.model_ref or self.model

    def fragments_in(self, key: str) -> dict[str, str] | None:
        """A context's capability fragments by name, cut from its system prompt (None: not
        recorded, or they do not add up to the prompt)."""
        spans, context = self.fragments.get(key), self.contexts.get(key)
        if not spans or context is None:
            return None
        lines = context.system_prompt.splitlines()
        out, at = {}, 0
        for name, count in spans.items():
            out[name] = "\n".join(lines[at:at + count])
            at += count + 1  # the blank line between two fragments
        return out if at - 1 == len(lines) else None


class Point(BaseModel):
    """A comparison point: a frozen agent version and the plan it is compared under."""

    model_config = ConfigDict(extra="forbid")
    name: str
    created: str
    plan: PlanInfo
    agent: AgentInfo
    from_run: str | None = None
