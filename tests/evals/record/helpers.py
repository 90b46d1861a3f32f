"""A version-2 run artifact as 37bb7c5 wrote it (tests/evals/record/data/README.md says how it
was made), with the report, page and JUnit XML that harness gave for it; and a run of judged
verdicts for the label tests."""

import gzip
import json
from pathlib import Path

from evals.execute.agent import agent_info
from evals.load.plan import plan_info
from evals.record.fingerprint import AgentSettings
from evals.record.results import Attempt, CaseResult, CheckResult, JudgeVerdict
from evals.record.run import Models, RunRecord
from evals.record.transcript import Transcript

DATA = Path(__file__).parent / "data"


def v2_data() -> dict:
    return json.loads(gzip.decompress((DATA / "v2-run.json.gz").read_bytes()))


def judged_run(run_id: str, verdicts: list[str], *, model: str = "judge-m",
               prompt_hash: str = "h1", pack: str | None = None,
               asked: bool = True) -> RunRecord:
    """A stored-run record of one judged case per verdict (`case-0`, `case-1`, …): a
    structural check first, then the judge's verdict (check 2, kind `judge`), given under
    `pack`'s prompt if any; with `asked` false, the judge was not called (not trusted, no
    --advisory-judge) and the check holds no verdict."""
    cases = [CaseResult(
        id=f"case-{i}", file="safety-and-care.yaml", prompt=f"Question {i}?",
        status="UNDECIDED", attempts=[Attempt(
            transcript=Transcript(answer=f"Answer {i}."), checks=[
                CheckResult(kind="no_unknown_tools", passed=True, reason="ok"),
                CheckResult(kind="judge", passed=v == "pass", decided=False,
                            reason=f"the judge's reason {i}",
                            judge=JudgeVerdict(model=model, prompt_hash=prompt_hash,
                                               verdict=v if asked else None, pack=pack,
                                               asked=asked))])])
        for i, v in enumerate(verdicts)]
    return RunRecord(run_id=run_id, status="complete", models=Models(chat="m", judge=model),
                     plan=plan_info([], judge_model=model, judge_prompt_hash=prompt_hash,
                                    repeat=1),
                     agent=agent_info("m", AgentSettings(max_tool_steps=6), {}, ("c", False)),
                     cases=cases)


async def stored(store, record) -> None:
    """Put a run record into the store, as a run writes it."""
    await store.start_run(record)
    for case in record.cases:
        await store.save_case(record.run_id, case)
    await store.flush()
    await store.finish_run(record)
