"""GSM8K as a suite (`python -m evals run --suite gsm8k --file F --endpoint URL
--endpoint-model ID`): grade-school word problems whose answer is a number, checked exactly.

The file is GSM8K's JSONL as published (`test.jsonl`, `train.jsonl`; not shipped): one object a
line, `{"question": …, "answer": …}`, the answer's worked solution ending in `#### <number>`.
Every problem with the file is a `file:line` error, all reported together.

Each problem goes to the endpoint once, with an instruction to end the reply with the same
`#### <number>` line. The reply's answer is the first number on the line of its last `####`,
else its last number (a model that forgets the line is read as GSM8K's usual scripts read it); it
passes when it equals the expected number as a number (`1,000`, `$1000` and `1000.00` are
1000). No judge is involved.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from app.chat.models import ChatModel, ModelCallError
from evals.calibration.calibrate import CalibrationError
from evals.record.results import Attempt, CaseResult, CheckResult, classify
from evals.record.transcript import Transcript

SUITE_SYSTEM = ("Solve the grade-school maths word problem. Work it out step by step, then end"
                " your reply with a last line of the form '#### <number>', the final answer"
                " as a number alone.")
CHECK = "gsm8k:answer"
MAX_ERRORS = 20
# A number as people write one: a sign, a currency sign, thousands separators, decimals.
_NUMBER = re.compile(r"-?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")


@dataclass(frozen=True)
class Problem:
    id: str  # gsm8k-<line>: GSM8K's lines carry no id
    question: str
    answer: Decimal
    solution: str


def number(text: str) -> Decimal | None:
    """A number as written (`-$1,234.50`), or None when it is not one."""
    try:
        value = Decimal(text.replace("$", "").replace(",", ""))
    except InvalidOperation:
        return None
    return value if value.is_finite() else None  # Decimal reads "nan" and "inf" too


def final_answer(reply: str) -> tuple[Decimal | None, str]:
    """The number a reply gives as its answer, and the words it was read from: the first number
    on the line of its last `####`, else the reply's last number."""
    if "####" in reply:
        tail = reply.rsplit("####", 1)[1].split("\n", 1)[0]
        found = _NUMBER.search(tail)
        if found:
            return number(found.group()), f"#### {found.group()}"
    numbers = _NUMBER.findall(reply)
    if not numbers:
        return None, ""
    return number(numbers[-1]), numbers[-1]


def load_problems(path: Path, limit: int) -> list[Problem]:
    """The first `limit` problems of a GSM8K JSONL file; every problem in the whole file a
    `file:line` error (CalibrationError)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CalibrationError(f"{path}: {exc.strerror or exc}") from exc
    problems: list[Problem] = []
    errors: list[str] = []
    for n, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path.name}:{n}"
        try:
            item = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            errors.append(f"{where}: not a JSON object ({exc})")
            continue
        problem = _problem(item, n)
        if isinstance(problem, str):
            errors.append(f"{where}: {problem}")
        else:
            problems.append(problem)
    if errors:
        more = len(errors) - MAX_ERRORS
        raise CalibrationError("\n".join(errors[:MAX_ERRORS]
                                         + ([f"… and {more} more"] if more > 0 else [])))
    if not problems:
        raise CalibrationError(f"{path.name}:1: no problem")
    return problems[:limit]


def _problem(item: object, line: int) -> Problem | str:
    """The problem on one line, or what is wrong with it."""
    if not isinstance(item, dict):
        return f"not a JSON object but {type(item).__name__}"
    missing = [k for k in ("question", "answer") if not isinstance(item.get(k), str)
               or not item[k].strip()]
    if missing:
        return f"no {' or '.join(missing)} (text): a line is {{\"question\": …, \"answer\": …}}"
    answer: str = item["answer"]
    if "####" not in answer:
        return "the answer has no '#### <number>' at its end"
    solution, final = answer.rsplit("####", 1)
    value = number(final.strip())
    if value is None:
        return f"the answer after '####' is not a number: {final.strip()!r}"
    return Problem(f"gsm8k-{line}", item["question"].strip(), value, solution.strip())


async def run_suite(problems: list[Problem], endpoint: ChatModel, *, concurrency: int = 2
                    ) -> list[CaseResult]:
    """Each problem sent to the endpoint, its answer checked exactly. An endpoint failure is
    that problem's ERROR, never a FAIL."""
    limit = asyncio.Semaphore(concurrency)

    async def one(p: Problem) -> CaseResult:
        messages = [{"role": "system", "content": SUITE_SYSTEM},
                    {"role": "user", "content": p.question}]
        async with limit:
            started = time.monotonic()
            try:
                reply = await endpoint.complete(messages)
            except ModelCallError as exc:
                attempt = Attempt(error=f"the endpoint failed: {exc}")
                return CaseResult(id=p.id, file="gsm8k", prompt=p.question,
                                  status=classify([attempt]), attempts=[attempt])
            latency = int((time.monotonic() - started) * 1000)
        answer = reply.content or ""
        # One question, one reply: the prompt and the answer say it all (turns are for
        # conversations, and the report counts them as a visitor's).
        attempt = Attempt(transcript=Transcript(answer=answer), checks=[check(p, answer)],
                          latency_ms=latency)
        return CaseResult(id=p.id, file="gsm8k", prompt=p.question,
                          status=classify([attempt]), attempts=[attempt])

    return list(await asyncio.gather(*(one(p) for p in problems)))


def check(problem: Problem, reply: str) -> CheckResult:
    """The reply's final number against the expected one, as numbers."""
    got, words = final_answer(reply)
    expected = f"{problem.answer:f}"
    if got is None:
        return CheckResult(kind=CHECK, passed=False,
                           reason=f"expected {expected}; the reply gives no number")
    if got == problem.answer:
        return CheckResult(kind=CHECK, passed=True, reason=f"{expected}, as expected")
    return CheckResult(kind=CHECK, passed=False,
                       reason=f"expected {expected}, the reply answers {got:f} ({words!r})")
