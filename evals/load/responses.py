"""Frozen tool responses, as a case or a scenario writes them (`tool_responses:`, with the item's
`response_state:`); their one validation, which both loaders use, is in response_validation.py.

    response_state: {states: [open, resolved], initial: open}
    tool_responses:
      list_open_tickets:
        contract: 3f2a…                    # the tool's contract when the responses were written
        branches:                          # tried in order; the first that fits answers
          - state: open                    # only in this state (optional)
            arguments: {slug_in: [trotec-speedy-400, form-4]}   # the checks' selectors
            response: {tickets: [{id: 7, title: Smoke, status: open, machine: Trotec,
                                  slug: "{{ args.slug }}"}], count: 1}
            delay_s: 3                     # waits before it answers (at most 60 s)
        response: {tickets: [], count: 0}  # the default, when no branch fits
      update_ticket:
        contract: 9c41…
        response: {proposed: true, proposal_id: p-1, summary: Resolve 7, note: Confirm it}
        on_confirm: resolved               # confirming this card moves the state

One answer (`response:`) or a sequence (`responses:`, in order, then `exhausted: error` or
`repeat_last`), with an optional `delay_s`, `set_state` (when it answers) and `on_confirm` (when
the card it proposed is confirmed), is written the same way as a tool's default and as each of its
branches. A branch fits a call when every argument selector fits (evals/checks/selectors.py) and
the item is in its `state`; no branch fitting and no default is the tool's error. A response fits
the tool's result model, or is `{error: text}` (the tool's error); its text may hold expressions
over the arguments (evals/load/expressions.py).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    field_validator,
    model_validator,
)

from evals.load.yamlfile import no_flag

# A frozen answer may wait this long at most: longer is a typo, and would stall a run.
MAX_DELAY_S = 60
StateName = Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")]
Response = dict[str, JsonValue]


class ResponseState(BaseModel):
    """The item's small state machine, shared by its frozen tools: named states and the one it
    starts in (every conversation and every attempt starts there again)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    states: tuple[StateName, ...] = Field(min_length=2)
    initial: StateName

    @model_validator(mode="after")
    def _known(self) -> ResponseState:
        twice = sorted({s for s in self.states if self.states.count(s) > 1})
        if twice:
            raise ValueError(f"states: {', '.join(twice)} listed twice")
        if self.initial not in self.states:
            raise ValueError(f"initial: {self.initial!r} is not one of the states"
                             f" ({', '.join(self.states)})")
        return self


class Answers(BaseModel):
    """What a tool answers, by default or in one branch: one response or a sequence, and what
    answering does besides (wait, move the state)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    response: Response | None = None
    responses: tuple[Response, ...] = ()
    exhausted: Literal["error", "repeat_last"] = "error"
    delay_s: Annotated[float, BeforeValidator(no_flag)] | None = None  # `true` is no delay
    set_state: StateName | None = None
    on_confirm: StateName | None = None

    @field_validator("delay_s")
    @classmethod
    def _bounded(cls, value: float | None) -> float | None:
        if value is not None and not 0 <= value <= MAX_DELAY_S:
            raise ValueError(f"{value:g} s is not a delay from 0 to {MAX_DELAY_S} s")
        return value

    @property
    def sequence(self) -> list[Response]:
        """The responses in the order they are given (one, for a static response)."""
        return [self.response] if self.response is not None else list(self.responses)

    def answers(self) -> bool:
        return self.response is not None or bool(self.responses)

    def states(self) -> dict[str, str]:
        """The state names this writes, by key."""
        return {k: v for k, v in (("set_state", self.set_state),
                                  ("on_confirm", self.on_confirm)) if v is not None}

    def _extras(self) -> dict[str, Any]:
        return {k: v for k, v in (("delay_s", self.delay_s), ("set_state", self.set_state),
                                  ("on_confirm", self.on_confirm)) if v is not None}


class Branch(Answers):
    """Answers for the calls whose arguments fit the selectors, in the given state."""

    arguments: dict[str, JsonValue] = {}
    state: StateName | None = None

    @model_validator(mode="after")
    def _whole(self) -> Branch:
        if self.response is not None and self.responses:
            raise ValueError("give either response: or responses:, not both")
        if not self.answers():
            raise ValueError("a branch answers with response: (static) or responses: (a"
                             " sequence)")
        if not self.arguments and self.state is None:
            raise ValueError("a branch selects by arguments:, state: or both (what every call"
                             " gets is the tool's own response: or responses:)")
        return self

    def content(self) -> dict[str, Any]:
        selects: dict[str, Any] = {"arguments": self.arguments}
        if self.state is not None:
            selects["state"] = self.state
        return {**selects, "response": self.response, "responses": list(self.responses),
                "exhausted": self.exhausted, **self._extras()}


class ToolResponses(Answers):
    """What a tool answers instead of running: its branches, tried in order, and the default
    (one response, or a sequence), written against the tool's contract (its hash then)."""

    contract: str = Field(pattern=r"^[0-9a-f]{12}$")
    branches: tuple[Branch, ...] = ()

    @model_validator(mode="after")
    def _one(self) -> ToolResponses:
        if self.response is not None and self.responses:
            raise ValueError("give either response: (static) or responses: (a sequence), not"
                             " both")
        if not self.branches and not self.answers():
            raise ValueError("give either response: (static) or responses: (a sequence), or"
                             " branches:")
        return self

    def orphans(self) -> list[str]:
        """The keys that belong to a default set with no default (they would do nothing)."""
        if self.answers():
            return []
        return (["exhausted"] if self.exhausted != "error" else []) + list(self._extras())

    def content(self) -> dict[str, Any]:
        """What the plan fingerprint hashes. Responses written before branches, delays and
        states existed hash as they did (the four keys they had), so their plan is unchanged."""
        content: dict[str, Any] = {"contract": self.contract, "response": self.response,
                                   "responses": list(self.responses),
                                   "exhausted": self.exhausted, **self._extras()}
        if self.branches:
            content["branches"] = [b.content() for b in self.branches]
        return content
