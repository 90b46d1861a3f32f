"""Versions of the suite run through the session into a run store, as the store's and the
session's tests run them."""

from evals.execute.session import run_versions
from evals.load.cases import load_cases
from evals.load.plan import plan_info
from evals.record.fingerprint import AgentSettings
from evals.record.run import Models, RunSettings
from tests.evals.helpers import select

SETTINGS = AgentSettings(max_tool_steps=6)


def cases(spec="no-glowforge,no-cnc-router"):
    return select(load_cases(), spec)


def plan(cs, repeat=1):
    return plan_info(cs, judge_model=None, judge_prompt_hash=None, repeat=repeat)


async def run(prep, cs, versions, p, concurrency=1):
    return await run_versions(prep, cs, versions, p, settings=RunSettings(
        concurrency=concurrency), models=Models(), vision=None, judge=None)
