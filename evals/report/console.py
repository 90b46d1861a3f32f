"""The console report of a run: a line per item, a detail block for every non-pass, totals."""

from __future__ import annotations

import sys
from collections import Counter
from typing import TextIO

from app.chat.models import LOCAL_MAX_TOKENS, PREFIX_CACHES
from app.redact import redact
from evals.record.results import NOT_CALLED, CaseResult, Totals
from evals.record.run import RunRecord, Spent
from evals.record.visitor import KINDS, WORDS
from evals.report.attacks import attack_lines
from evals.report.stats import stats_lines

ANSWER_PREVIEW = 400


def totals_line(results: list[CaseResult]) -> str:
    t = Totals.of(results)
    return (f"{t.passed}/{t.cases} passed · {t.flaky} flaky · {t.failed} failed"
            f" · {t.undecided} undecided · {t.errored} errored · {t.skipped} skipped")


def skip_lines(results: list[CaseResult]) -> list[str]:
    """One line per reason a case was skipped, with how many: a skip is never silent."""
    reasons = Counter(r.skipped_reason or "no reason given" for r in results
                      if r.status == "SKIPPED")
    return [f"  skipped {n}: {reason}" for reason, n in reasons.most_common()]


def case_line(result: CaseResult) -> str:
    """One line a case; a scenario conversation (id@style) also says how many visitor turns
    it ran."""
    line = f"  {result.status:<9} {result.id}"
    turns = result.attempts[0].turns if result.attempts else []
    if turns:
        line += f"  ({sum(1 for t in turns if t.role == 'user')} visitor turns)"
    return line


def detail_block(result: CaseResult) -> str:
    lines = [f"{result.status}  {result.id}  ({result.file})", f"  prompt: {result.prompt}"]
    if result.status == "SKIPPED":
        lines.append(f"  skipped: {result.skipped_reason}")
        return "\n".join(lines)
    for n, attempt in enumerate(result.attempts, start=1):
        if len(result.attempts) > 1:
            lines.append(f"  attempt {n}:")
        if attempt.error:
            lines.append(f"  ! error: {attempt.error.splitlines()[0]}")
        if attempt.visitor_failed and attempt.visitor is not None:
            lines.append(f"  ? undecided: {attempt.visitor.describe()} (the checks below"
                         " measured the simulator as much as the assistant)")
        for check in attempt.checks:
            who = f" ({check.judge.model})" if check.judge else ""
            if not check.decided and check.judge and not check.judge.asked:
                lines.append(f"  ? {check.kind}{who} undecided: {check.reason}")
                lines.append(f"      the judge is not trusted: {check.judge.trust}")
            elif not check.decided and (check.judge is None or (
                    check.judge.question and check.judge.asked)):
                # could not see or read it; or a question the judge left unclear
                lines.append(f"  ? {check.kind}{who} undecided: {check.reason}")
            elif not check.decided:
                verdict = check.judge.verdict if check.judge else None
                lines.append(f"  ? {check.kind}{who} undecided, advisory verdict {verdict}:"
                             f" {check.reason}")
                if check.judge:
                    lines.append(f"      the judge is not trusted: {check.judge.trust}")
            elif not check.passed:
                lines.append(f"  x {check.kind}{who} — {check.reason}")
            elif check.judge and check.judge.trusted_by_flag:
                lines.append(f"  ✓ {check.kind}{who} passed on --trust-judge, not on"
                             " calibration")
        if attempt.answer or not attempt.error:
            answer = " ".join(attempt.answer.split())
            if len(answer) > ANSWER_PREVIEW:
                answer = answer[:ANSWER_PREVIEW] + "…"
            lines.append(f"      answer: \"{answer}\"")
    return "\n".join(lines)


def print_report(results: list[CaseResult], out: TextIO, *, trusted_by_flag: bool = False
                 ) -> None:
    """The console report, redacted like the artifact."""
    lines = [case_line(r) for r in results]
    for r in results:
        if r.status != "PASS":
            lines += ["", detail_block(r)]
    lines += ["", totals_line(results), *skip_lines(results)]
    if trusted_by_flag:
        lines.append("  judge: --trust-judge: judged verdicts decide cases although the judge"
                     " has not earned it by calibration")
    print(redact("\n".join(lines)), file=out)


def exit_code(results: list[CaseResult], *, fail_on_skip: bool = False) -> int:
    """0 only when nothing failed, errored or stayed undecided (a flaky case does not fail the
    run); with fail_on_skip, a skipped case fails it too."""
    t = Totals.of(results)
    if t.failed or t.errored or t.undecided:
        return 1
    return 1 if fail_on_skip and t.skipped else 0


def conversation_lines(results: list[CaseResult]) -> list[str]:
    """What the scenario conversations took: visitor turns, the assistant's tokens, time, and
    what cloning a database for each cost."""
    runs = [a for r in results for a in r.attempts[:1] if a.turns or "database_clone_ms" in
            a.timings]
    if not runs:
        return []
    turns = [sum(1 for t in a.turns if t.role == "user") for a in runs]
    tokens = [a.usage.prompt_tokens + a.usage.completion_tokens for a in runs]
    clones = sorted(a.timings["database_clone_ms"] for a in runs
                    if "database_clone_ms" in a.timings)
    seconds = [a.latency_ms / 1000 for a in runs]
    visitor = sum(a.usage.visitor_tokens for a in runs)
    line = (f"conversations: {len(runs)} · visitor turns {sum(turns)} (mean"
            f" {sum(turns) / len(runs):.1f}, max {max(turns)}) · assistant tokens {sum(tokens):,}"
            f" · visitor tokens {visitor:,}"
            f" · {sum(seconds):.0f} s in conversation (mean {sum(seconds) / len(runs):.0f} s)")
    if clones:
        line += (f" · database clone median {clones[len(clones) // 2]} ms, max {clones[-1]}"
                 " ms")
    return [line]


def cut_lines(results: list[CaseResult]) -> list[str]:
    """The replies a model ended at its token cap: a looping model is cut, and said so."""
    cut = [(r.id, a.usage.cut_at_cap) for r in results for a in r.attempts
           if a.usage.cut_at_cap]
    if not cut:
        return []
    ids = sorted({i for i, _ in cut})
    return [f"cut at the token cap: {sum(n for _, n in cut)} model repl(ies) in {len(cut)}"
            f" attempt(s) ended at the cap (the embedded model's is {LOCAL_MAX_TOKENS}"
            f" tokens): {', '.join(ids[:8])}{' …' if len(ids) > 8 else ''}"]


def cost_lines(results: list[CaseResult], model: str | None,
               spend: Spent | None = None) -> list[str]:
    """The run's known cost: with `spend` (the record's), every job's, each part named; a
    record written before spend was kept has its chat model's attempts only. An attempt whose
    price is unknown is counted apart (never as 0); one a guard refused (the cost cap, a
    stop, a dead endpoint) called no model and cost nothing, so it is not one of them: it is
    counted as refused."""
    if spend is not None:
        return [spend_line(results, spend)]
    attempts = [a for r in results for a in r.attempts]
    refused = [a for a in attempts if a.failure in NOT_CALLED and not a.cost_usd]
    priced = [a for a in attempts if a not in refused]
    known = [a.cost_usd for a in priced if a.cost_usd is not None]
    unknown = len(priced) - len(known)
    capped = sum(1 for a in refused if a.failure == "cost_cap")
    notes = ([f"{unknown} attempt(s) at an unknown price"] if unknown and known else []) + \
        ([f"{capped} attempt(s) refused by the cost cap"] if capped else [])
    if known:
        line = f"cost: ${sum(known):.4f}"
    elif unknown:
        line = f"cost: unknown ({model} has no price in litellm's table)"
    elif capped:
        line = "cost: $0.0000"
    else:
        return []
    return [line + (f" ({'; '.join(notes)})" if notes else "")]


def spend_line(results: list[CaseResult], spend: Spent) -> str:
    """`cost: $0.8200 (chat $0.4500, judge $0.3000, visitor $0.0500, calibration $0.0200)`,
    then what the cap did and which models were called at no known price."""
    parts = ", ".join(f"{job} ${usd:.4f}" for job, usd in spend.parts().items() if usd)
    capped = sum(1 for r in results for a in r.attempts
                 if a.failure == "cost_cap" and not a.cost_usd) + \
        sum(1 for r in results if (r.skipped_reason or "").startswith("cost cap"))
    notes = ([f"of a ${spend.max_cost_usd:.4f} cap"] if spend.max_cost_usd is not None
             else []) + \
        ([f"{capped} item(s) or attempt(s) refused by the cost cap"] if capped else []) + \
        ([f"not counted: {', '.join(spend.unpriced)}, at no known price"]
         if spend.unpriced else [])
    return f"cost: ${spend.total:.4f}" + (f" ({parts})" if parts else "") + \
        (f"; {'; '.join(notes)}" if notes else "")


def replay_lines(results: list[CaseResult]) -> list[str]:
    """What the call cache gave: how many of the run's model calls were replayed, from which
    runs, and what they had cost when they were made (not spent by this run)."""
    calls = [a.calls for r in results for a in r.attempts]
    made = sum(c.made for c in calls)
    replayed = sum(c.replayed for c in calls)
    if not replayed:
        return []
    runs = sorted({run for c in calls for run in c.replayed_from})
    tokens = sum(c.replayed_prompt_tokens + c.replayed_completion_tokens for c in calls)
    generated = sum(c.replayed_completion_tokens for c in calls)
    costs = [c.replayed_cost_usd for c in calls if c.replayed_cost_usd is not None]
    shown = ", ".join(runs[:4]) + (f" and {len(runs) - 4} more" if len(runs) > 4 else "")
    plural = "s" if len(runs) != 1 else ""
    return [f"{replayed} of {made + replayed} model calls replayed (run{plural}"
            f" {shown or 'unknown'}): {tokens:,} tokens, {generated:,} of them generated,"
            " not spent again" + (f", ${sum(costs):.4f} of chat model cost" if costs else "")]


def prefix_lines() -> list[str]:
    """What the embedded model's saved prompt prefixes did in this process."""
    lines = []
    for cache in PREFIX_CACHES.values():
        lines.append(f"prefix cache: {cache.hits} restored from disk, {cache.saves} computed"
                     f" and saved ({cache.folder})")
        lines += [f"prefix cache: {failure}" for failure in cache.failures[:3]]
    return lines


def visitor_lines(results: list[CaseResult]) -> list[str]:
    """The simulated visitor's failures, counted apart from the assistant's: conversation
    attempts whose visitor failed (UNDECIDED, whatever their checks said), by kind (each
    attempt once per kind); and, per kind, the attempts it was not checked in."""
    checked = [a.visitor for r in results for a in r.attempts if a.visitor is not None]
    if not checked:
        return []
    failed = [v for v in checked if v.failed]
    kinds = Counter(k for v in failed for k in dict.fromkeys(f.kind for f in v.failures))
    unread = sum(1 for v in checked if v.unread)
    left = {k: n for k in KINDS if (n := sum(k not in v.kinds for v in checked))}
    line = (f"simulated visitor: {len(failed)} of {len(checked)} conversation attempts failed"
            + (" (" + ", ".join(f"{WORDS[k]} {n}" for k, n in kinds.items()) + ")"
               if kinds else "")
            + (f" · {unread} with a message in another language, not read" if unread else "")
            + (" · not checked: " + ", ".join(
                f"{WORDS[k]}" + ("" if n == len(checked) else f" in {n}")
                for k, n in left.items()) if left else ""))
    return [line]


def report_run(record: RunRecord, out: TextIO | None = None) -> None:
    """A finished run on the console: every item, then the run's figures."""
    out = out or sys.stdout
    print_report(record.cases, out, trusted_by_flag=record.judge_trusted_by_flag)
    for line in [*stats_lines(record.cases), *attack_lines(record.cases),
                 *conversation_lines(record.cases), *visitor_lines(record.cases),
                 *cut_lines(record.cases), *prefix_lines(),
                 *cost_lines(record.cases, record.models.chat, record.spend),
                 *replay_lines(record.cases)]:
        print(line, file=out)
