"""One spending guard for every command that calls a model (run, compare, gate, rejudge,
calibrate, draft, prepare): the command's budget is one Spend (evals/execute/guard.py), and
every model call it makes draws on it through a CallGuard, a first-use calibration's before
the run included. With a cap, no call is sent whose worst case could pass it; a model with no
known price cannot be held to a cap, so it is refused before any call, unless the command is
told to call it anyway (`allow_unpriced`), its calls then outside the cap."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from app.chat.model_info import price_per_token
from app.chat.models import ChatModel
from evals.api.errors import ApiError
from evals.execute.guard import CallGuard, Spend

# (what the model does for the command, its id): ("judge", "openai/gpt-4o")
Called = tuple[str, str]


def budget(cap: float | None, called: Sequence[Called], *,
           allow_unpriced: bool = False) -> Spend:
    """The command's budget, before any model is called. With a cap, every model the command
    calls must have a known price; one without is refused here (ApiError), or, with
    `allow_unpriced`, called with a note on stderr that the cap does not hold for its calls.
    Without a cap nothing is checked."""
    spend = Spend(cap)
    if cap is None:
        return spend
    unpriced = list(dict.fromkeys((role, model) for role, model in called
                                  if price_per_token(model) is None))
    if not unpriced:
        return spend
    named = ", ".join(f"{model} (the {role})" for role, model in unpriced)
    if not allow_unpriced:
        raise ApiError(f"cannot start: --max-cost: the price of {named} is unknown in"
                       " litellm's table, so a cost cap cannot be kept; nothing was called."
                       " --allow-unpriced (EVAL_ALLOW_UNPRICED=1) calls it anyway, its calls"
                       " not counted, or leave --max-cost out")
    print(f"note: --allow-unpriced: {named} has no known price: its calls are made and not"
          f" counted, so the ${cap:.4f} cap does not hold for them", file=sys.stderr)
    spend.unpriced.update(model for _, model in unpriced)
    return spend


def guarded(model: ChatModel, spend: Spend, job: str, concurrency: int) -> CallGuard:
    """`model`, each of its calls drawn on `spend` under `job` (chat, judge, visitor,
    calibration, draft): refused once the cap would be passed, its cost counted."""
    return CallGuard(model, concurrency, spend=spend, job=job)


def capped_line(spend: Spend) -> str | None:
    """What the command says when its cap refused calls: what was spent of what."""
    if spend.max_cost_usd is None or not spend.calls_refused:
        return None
    return (f"cost cap reached: {spend.calls_refused} model call(s) not made; spent"
            f" {spend.said()} of ${spend.max_cost_usd:.4f}")


def say_spent(spend: Spend) -> None:
    """On stderr, what a command that keeps no run record spent, and whether its cap cut it
    short (stdout may be YAML)."""
    line = capped_line(spend)
    if line is not None:
        print(line, file=sys.stderr)
    elif spend.cost_usd or spend.max_cost_usd is not None:
        cap = f" of ${spend.max_cost_usd:.4f}" if spend.max_cost_usd is not None else ""
        print(f"cost: {spend.said()}{cap}", file=sys.stderr)
