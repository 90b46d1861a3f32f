"""What a storm of 429s at the judge or at the simulated visitor does to verdicts.

    python -m evals.bench.storms [--items 10] [--retry-after 0.3] [--retries 1]

Three fake model servers (evals/bench/fake_model.py) in this process: the chat model (always
answers), the judge (a verdict of pass) and the visitor (a last word, then STOP). N judged
cases and N scenario conversations (the visitor speaks once, after the assistant's first
answer; a judged criterion) run through the runner against them, first with no fault, then
with one server in a storm: every request it gets in the storm's first S seconds is answered
429 with Retry-After, which the client (`--retries` tries after the first) and the runner
honour. Storms: the judge's (a deciding judge, then an advisory one) and the visitor's, each
short (it ends within the tries), then one that outlasts every try.

It prints, per storm, the statuses against the fault-free run's, the flips (a verdict that
changed; in a storm that outlasts the tries, ERROR is what is expected and is not a flip) and
the chat model's requests against the fault-free run's (a judge's or visitor's lost call must
not make the chat model answer again).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import textwrap
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.chat.openai_wire import OpenAICompatModel, close_clients
from app.embed import HashEmbedder
from app.settings import get_settings
from evals.bench.fake_model import Handler, completion, serve
from evals.execute.env import eval_env
from evals.execute.runner import Variant, run_variants
from evals.judge.setup import JudgeSetup
from evals.judge.trust import Trust
from evals.load.cases import load_cases
from evals.load.conversations import conversations
from evals.load.items import EvalItem
from evals.load.scenarios import load_scenarios
from evals.record.results import Attempt
from evals.settings import conninfo

CASE = """\
- id: judged-{n}
  prompt: "Which printer prints resin? ({n})"
  rubric: Names the Form 4.
"""
SCENARIO = """\
- id: talk-{n}
  visitor: {{who: a student, wants: a resin printer ({n})}}
  opening: which printer prints resin? ({n})
  max_turns: 2
  criteria:
    - statement: Names the Form 4.
"""


def items(n: int, folder: Path) -> tuple[list[EvalItem], list[EvalItem]]:
    """N judged cases and N calm-style scenario conversations, written to `folder`."""
    (folder / "cases").mkdir()
    (folder / "scenarios").mkdir()
    (folder / "cases" / "c.yaml").write_text(
        "".join(textwrap.dedent(CASE.format(n=i)) for i in range(n)))
    (folder / "scenarios" / "s.yaml").write_text(
        "".join(textwrap.dedent(SCENARIO.format(n=i)) for i in range(n)))
    scenarios, shared = load_scenarios(folder / "scenarios")
    talks = [i for i in conversations(scenarios, shared, full=True) if i.style == "calm"]
    return list(load_cases(folder / "cases")), list(talks)


@dataclass
class Storm:
    """429 with Retry-After to every request in the first `seconds` after the first one."""

    seconds: float
    retry_after_s: float
    began: float | None = None
    refused: int = 0

    def around(self, handler: Handler) -> Handler:
        def answer(body: dict[str, Any]) -> tuple[Any, ...]:
            now = time.monotonic()
            self.began = self.began if self.began is not None else now
            if now - self.began < self.seconds:
                self.refused += 1
                return 429, {"error": {"message": "rate limited"}}, \
                    {"Retry-After": f"{self.retry_after_s:g}"}
            return handler(body)
        return answer


def chat(body: dict[str, Any]) -> tuple[Any, ...]:
    return 200, completion("The Form 4 prints resin.")


def judge(body: dict[str, Any]) -> tuple[Any, ...]:
    return 200, completion(json.dumps({"verdict": "pass", "reason": "it names the Form 4"}))


def visitor(body: dict[str, Any]) -> tuple[Any, ...]:
    return 200, completion("Thanks, that is all. STOP")


async def one_run(cases: list[EvalItem], talks: list[EvalItem], *, role: str | None,
                  storm: Storm | None, trusted: bool, retries: int) -> dict[str, Any]:
    """Every item once, with `role`'s server in `storm`: statuses by item id, the chat
    model's requests, the wall time and the ERRORs' reasons."""
    handlers: dict[str, Handler] = {"chat": chat, "judge": judge, "visitor": visitor}
    if role is not None and storm is not None:
        handlers[role] = storm.around(handlers[role])
    settings = get_settings()
    with serve(handlers["chat"]) as c, serve(handlers["judge"]) as j, \
            serve(handlers["visitor"]) as v:
        def model(base: str) -> OpenAICompatModel:
            return OpenAICompatModel("openai/fake", api_base=base, api_key="bench",
                                     timeout_s=10, retries=retries)

        setup = JudgeSetup(model(j.base), Trust(trusted, "bench"), advisory=not trusted)
        async with eval_env(conninfo(settings), settings, HashEmbedder()) as env:
            started = time.perf_counter()
            results = await run_variants(env, [*cases, *talks], [Variant("run", model(c.base))],
                                         concurrency=len(cases) + len(talks), judge=setup,
                                         visitor=model(v.base))
            wall = time.perf_counter() - started
        await close_clients()
        return {"status": {r.id: r.status for r in results["run"]},
                "chat_requests": len(c.received), "wall_s": wall,
                "errors": {r.id: _why(r.attempts[-1]) for r in results["run"]
                           if r.status == "ERROR" and r.attempts}}


def _why(attempt: Attempt) -> str:
    """An errored attempt's error, or its first broken check's."""
    return attempt.error or next((f"{c.kind}: {c.reason}" for c in attempt.checks if c.error),
                                 "")


def flips(before: dict[str, str], after: dict[str, str], outlasts: bool) -> Counter[str]:
    """Verdicts that changed: `before → after` per pair, ERROR left out when the storm
    outlasts every try (an ERROR is what it should make)."""
    out: Counter[str] = Counter()
    for item, was in before.items():
        now = after.get(item, "missing")
        if now != was and not (outlasts and now == "ERROR"):
            out[f"{was}→{now}"] += 1
    return out


async def bench(n: int, retry_after_s: float, retries: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cases, talks = items(n, Path(tmp))
    # Short storms: the client's own tries lose the call (they span `retries` Retry-Afters),
    # and a try that follows one or two Retry-Afters more wins it. A long one outlasts all.
    storms = [("short", retry_after_s * (retries + 0.5)),
              ("longer", retry_after_s * (retries + 1.5)), ("outlasting", 120.0)]
    plans = [("judge (deciding)", "judge", True), ("judge (advisory)", "judge", False),
             ("visitor", "visitor", True)]
    for label, role, trusted in plans:
        calm = await one_run(cases, talks, role=None, storm=None, trusted=trusted,
                             retries=retries)
        for name, seconds in storms:
            storm = Storm(seconds, retry_after_s)
            got = await one_run(cases, talks, role=role, storm=storm, trusted=trusted,
                                retries=retries)
            changed = flips(calm["status"], got["status"], name == "outlasting")
            n_items = len(cases) + len(talks)
            print(f"{label}, {name} storm ({seconds:g} s, Retry-After {retry_after_s:g} s,"
                  f" {retries} client retries): {storm.refused} requests refused ·"
                  f" statuses {dict(Counter(calm['status'].values()))} →"
                  f" {dict(Counter(got['status'].values()))} · flips"
                  f" {sum(changed.values())} {dict(changed)} · chat requests"
                  f" {calm['chat_requests']} → {got['chat_requests']} for {n_items} items ·"
                  f" wall {got['wall_s']:.1f} s")
            if got["errors"]:
                print(f"  an ERROR: {next(iter(got['errors'].values()))}")


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m evals.bench.storms")
    p.add_argument("--items", type=int, default=10, help="cases, and as many conversations")
    p.add_argument("--retry-after", type=float, default=0.3)
    p.add_argument("--retries", type=int, default=1, help="the client's tries after the first")
    args = p.parse_args()
    asyncio.run(bench(args.items, args.retry_after, args.retries))


if __name__ == "__main__":
    main()
