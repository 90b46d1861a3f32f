"""What the workspace's tests share: the token, a stored run, the forms as a browser sends
them, and a launcher that starts nothing."""

import re

from evals.execute.agent import agent_info
from evals.load.plan import plan_info
from evals.record.fingerprint import AgentSettings, FrozenContext
from evals.record.results import Attempt, CaseResult, CheckResult
from evals.record.run import Models, RunRecord
from evals.record.transcript import Transcript
from evals.workspace.launch import Launcher

TOKEN = "the-token"
CONTEXT = "anonymous / demo"


def run(run_id: str, status: str, answer: str, passed: bool,
        prompt: str = "Say what the lab has.") -> RunRecord:
    return RunRecord(
        run_id=run_id, status="complete", models=Models(chat="m"),
        plan=plan_info([], judge_model=None, judge_prompt_hash=None, repeat=1),
        agent=agent_info("m", AgentSettings(max_tool_steps=6),
                         {CONTEXT: FrozenContext(system_prompt=prompt, tools=[])}, ("c", False)),
        cases=[CaseResult(id="no-glowforge", file="honest-absence.yaml", prompt="Glowforge?",
                          status=status, context=CONTEXT, attempts=[Attempt(
                              transcript=Transcript(answer=answer), checks=[CheckResult(
                              kind="no_unknown_tools", passed=passed,
                              reason="ok" if passed else f"offers “{answer}”")])])])


class Recording(Launcher):
    """Records what it is asked to start, and starts nothing."""

    def __init__(self):
        super().__init__(env={})
        self.asked = []

    def start(self, request, title, launch_id=None):
        self.asked.append((request, title))


BASE = "http://127.0.0.1:8010"


def form_of(html: str, action: str) -> dict[str, list[str]]:
    """The named inputs of the form posting to `action` (hidden, text, textarea, checked boxes
    and selected options), as a browser would send them unchanged."""
    start = html.index(f'action="{action}"')
    body = html[start:html.index("</form>", start)]
    fields: dict[str, list[str]] = {}

    def add(name, value):
        fields.setdefault(name, []).append(value)

    for tag in re.findall(r"<input[^>]*>", body):
        name = re.search(r'name="([^"]*)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        kind = re.search(r'type="([^"]*)"', tag)
        if name and (kind is None or kind.group(1) not in ("checkbox", "radio")
                     or " checked" in tag):
            add(name.group(1), unescape(value.group(1) if value else ""))
    for name, value in re.findall(r'<textarea[^>]*name="([^"]*)"[^>]*>(.*?)</textarea>', body,
                                  re.S):
        add(name, unescape(value))
    for name, options in re.findall(r'<select name="([^"]*)"[^>]*>(.*?)</select>', body, re.S):
        chosen = re.search(r"<option[^>]*selected[^>]*>([^<]*)", options) or re.search(
            r"<option[^>]*>([^<]*)", options)
        add(name, unescape(chosen.group(1)))
    return fields


def unescape(text: str) -> str:
    import html

    return html.unescape(text)


def post(client, action, fields):
    return client.post(action, data=fields)
