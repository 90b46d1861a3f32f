"""Endpoint mode: send each case's conversation to any OpenAI-compatible endpoint (no app
composition) and check the reply with the text assertions and the judge.

Cases that need the app's context (a tool page, an identity, a page path, the look-alike lab,
photos) or that check tool calls and citations, which an endpoint does not expose, are
SKIPPED with the reason.
"""

from __future__ import annotations

import asyncio
from typing import Any

from app.chat.models import ChatModel, ModelCallError
from evals.cases import Case
from evals.harness import history_messages
from evals.record import RecordedTurn
from evals.results import Attempt, CaseResult, classify
from evals.runner import JudgeSetup, judged_check, run_checks, with_one_retry

NEEDS_TOOL_CALLS = {"called_tool", "not_called_tool", "proposed_action", "identified_items",
                    "identified_count", "cites_page", "citations_resolve"}


def skip_reason(case: Case) -> str | None:
    ctx = case.context
    needs = [name for name, used in (
        ("a tool page", ctx.page == "tool"), ("an identity", ctx.as_ is not None),
        ("a page path", ctx.path is not None), ("the look-alike lab", ctx.catalog == "lab"),
        ("photos", bool(case.photos)),
    ) if used]
    if needs:
        return f"needs app context ({', '.join(needs)}), which endpoint mode does not have"
    tools = sorted({c.kind for c in case.checks} & NEEDS_TOOL_CALLS)
    if tools:
        return f"checks {', '.join(tools)}: an endpoint does not expose its tool calls"
    return None


def conversation(case: Case) -> list[dict[str, Any]]:
    return [*history_messages(case), {"role": "user", "content": case.prompt}]


async def _attempt(case: Case, model: ChatModel, judge: JudgeSetup | None) -> Attempt:
    messages = conversation(case)
    try:
        reply = await model.complete(messages)
    except ModelCallError as exc:
        return Attempt(error=f"endpoint call failed: {exc}")
    turn = RecordedTurn(reply.content or "", [])
    checks = run_checks(case, turn)
    if case.judged:
        checks.append(await judged_check(case, turn, messages, judge))
    return Attempt(answer=turn.answer, checks=checks,
                   usage={"prompt_tokens": reply.usage.prompt_tokens,
                          "completion_tokens": reply.usage.completion_tokens})


async def run_endpoint(cases: list[Case], model: ChatModel, judge: JudgeSetup | None, *,
                       concurrency: int) -> list[CaseResult]:
    limit = asyncio.Semaphore(concurrency)

    async def one(case: Case) -> CaseResult:
        reason = skip_reason(case)
        if reason:
            return CaseResult(id=case.id, file=case.file, prompt=case.prompt,
                              status="SKIPPED", skipped_reason=reason)
        async with limit:
            attempts = await with_one_retry(lambda: _attempt(case, model, judge))
        return CaseResult(id=case.id, file=case.file, prompt=case.prompt,
                          status=classify(attempts), attempts=attempts)

    return list(await asyncio.gather(*(one(c) for c in cases)))
