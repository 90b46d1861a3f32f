"""What the impact tests share: the agent's settings, a plan of items, a tool's schema."""

from evals.load.plan import plan_info
from evals.record.fingerprint import AgentSettings

SETTINGS = AgentSettings(max_tool_steps=6)
GIT = ("abc", False)


def plan_of(items):
    return plan_info(items, judge_model=None, judge_prompt_hash=None, repeat=1)


def schema(name, description="d", **props):
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": props}}}
