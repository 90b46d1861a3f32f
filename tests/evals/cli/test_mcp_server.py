"""The eval tools over MCP, through the SDK's in-memory client: inputs validated, a run's
progress reported, answers from the store and the artifacts, no secret returned, a repeated
idempotency key answered with the run it launched."""

import json
import os

import pytest

from app.db import scratch_database
from app.settings import PROJECT_ROOT
from evals.record.store import RunStore
from tests.evals.helpers import cli_environment
from tests.fake_openai import completion, fake_openai_server

pytestmark = pytest.mark.slow  # every test talks MCP (one to a child process)

ROOT = PROJECT_ROOT
TOOLS = {"run_evals", "compare", "draft_cases", "show_prompt", "calibrate_judge", "list_runs",
         "matrix"}


def connected():
    """The SDK's in-memory client of a new server. The SDK is imported here, not with the
    module: 0.4 s of every test worker's collection, where one worker runs these tests."""
    from mcp import Client

    from evals.cli.mcp_server import create_server

    return Client(create_server())


async def test_matrix_tables_stored_runs_of_one_plan(env):
    from tests.evals.workspace.helpers import run

    async with RunStore.open(os.environ["DATABASE_URL"]) as store:
        for record in (run("mx0000base", "PASS", "We have no Glowforge.", True),
                       run("mx0001run", "FAIL", "Use the Glowforge Pro.", False)):
            await store.start_run(record)
            for case in record.cases:
                await store.save_case(record.run_id, case)
            await store.flush()
            await store.finish_run(record)
    async with connected() as client:
        both = data(await client.call_tool("matrix", {"runs": "mx0000base,mx0001run"}))
        one = await client.call_tool("matrix", {"runs": "mx0000base"})
        unknown = await client.call_tool("matrix", {"runs": "mx0000base,nope"})
        outside = await client.call_tool("matrix", {"runs": "mx0000base,mx0001run",
                                                    "baseline": "other"})
    (row,) = both["rows"]
    assert row["cells"]["mx0000base"]["pass_rate"] == 1.0
    assert row["cells"]["mx0001run"]["statuses"] == ["FAIL"]
    (versus,) = both["versus"]
    assert versus["regressed"] == ["no-glowforge"] and versus["p_value"] == 1.0
    assert [c["replayed_share"] for c in both["columns"]] == [None, None]
    assert one.is_error and "at least two versions" in one.content[0].text
    assert unknown.is_error and "nope" in unknown.content[0].text
    assert outside.is_error and "not one of the columns" in outside.content[0].text


SECRET = "sk-test-do-not-show-0123456789"


def answer(body):
    if (body.get("response_format") or {}).get("json_schema", {}).get("name") == "verdict":
        return 200, completion(json.dumps({"verdict": "pass", "reason": "says so"}))
    if body.get("response_format"):
        return 200, completion(json.dumps({"id": "drafted-one", "prompt": "Is a Form 4 free?",
                                           "assert": [{"kind": "called_tool",
                                                       "value": "get_unit_status"}]}))
    text = body["messages"][-1]["content"]
    if "Glowforge" in text:  # a failing answer that quotes the key: its reason will too
        return 200, completion(f"Yes, you can book the Glowforge, key {SECRET}.")
    return 200, completion("We don't have a CNC router here.")


@pytest.fixture
async def env(server_conninfo, store_template, tmp_path, monkeypatch):
    """The process environment a coding assistant would start `python -m evals mcp` with."""
    async with scratch_database(server_conninfo, prefix="test_mcp",
                                template=store_template) as info:
        with fake_openai_server(answer) as (base, received):
            values = {"DATABASE_URL": info, "MODEL_CHAT": "openai/fake",
                      "MODEL_DRAFT": "openai/fake-draft", "MODEL_API_BASE": base,
                      "OPENAI_API_KEY": SECRET, "DATA_DIR": str(tmp_path / "data"),
                      "EVAL_CONCURRENCY": "1", "PYTHONWARNINGS": "ignore"}
            with cli_environment(monkeypatch, values):
                yield received


def data(result):
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


async def test_the_tools_and_their_validated_inputs(env):
    async with connected() as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        bad_repeat = await client.call_tool("run_evals", {"repeat": 0})
        bad_names = await client.call_tool("run_evals", {"cases": "no-such-case"})
        bad_point = await client.call_tool("compare", {"point": "../x"})
        no_point = await client.call_tool("compare", {"point": "never-saved"})
        bad_count = await client.call_tool("draft_cases", {"count": 26})
        bad_role = await client.call_tool("show_prompt", {"role": "janitor"})
        bad_page = await client.call_tool("show_prompt", {"page": "/nope"})
        no_file = await client.call_tool("calibrate_judge", {"set": "mrbench"})
    assert listed == TOOLS
    for result in (bad_repeat, bad_names, bad_point, no_point, bad_count, bad_role, bad_page,
                   no_file):
        assert result.is_error
    assert "unknown 'no-such-case'" in bad_names.content[0].text
    assert "no comparison point 'never-saved'" in no_point.content[0].text
    assert "unknown page '/nope'" in bad_page.content[0].text
    assert env == []  # nothing was asked of any model


async def test_show_prompt_and_draft_cases(env):
    async with connected() as client:
        shown = data(await client.call_tool("show_prompt", {"role": "staff",
                                                            "page": "/tools/form-4"}))
        drafted = data(await client.call_tool("draft_cases", {"page": "/tools/form-4",
                                                              "count": 2}))
    assert shown["role"] == "staff" and "MakerLAB" in shown["system_prompt"]
    assert "update_ticket" in [t["function"]["name"] for t in shown["tools"]]
    assert drafted["valid"] == [{"kind": "ordinary", "id": "drafted-one"}]
    assert drafted["rejected"][0]["kind"] == "unrecorded-spec"  # the same id, taken
    assert drafted["missing"] == ["unrecorded-spec"] and "- id: drafted-one" in drafted["yaml"]


async def test_a_run_reports_progress_and_returns_no_secret(env):
    progress = []

    async def on_progress(done, total, message):
        progress.append((done, total))

    async with connected() as client:
        ran = await client.call_tool("run_evals", {"cases": "no-glowforge,no-cnc-router"},
                                     progress_callback=on_progress)
        runs = data(await client.call_tool("list_runs", {"limit": 5}))["runs"]
    text = ran.content[0].text
    result = data(ran)
    (failed,) = result["failures"]
    assert failed["id"] == "no-glowforge" and failed["status"] == "FAIL"
    assert "[redacted]" in json.dumps(failed["checks"])  # the reason quoted the key...
    assert SECRET not in text and SECRET not in json.dumps(runs)  # ...which never leaves
    assert result["totals"]["cases"] == 2 and result["run_id"] == runs[0]["run_id"]
    assert result["exit_code"] == 1
    assert progress and progress[-1][1] == 2 and all(d <= 2 for d, _ in progress)
    assert runs[0]["status"] == "complete" and runs[0]["totals"]["passed"] == 1


async def test_a_repeated_idempotency_key_returns_the_run_it_launched(env):
    key = "6d1f0a3c-2b9e-4f7a-8c55-91e0d2b7a4f3"
    asked = {"cases": "no-cnc-router", "model": "openai/fake-2", "idempotency_key": key}
    async with connected() as client:
        first = data(await client.call_tool("run_evals", asked))
        calls = len(env)
        again = data(await client.call_tool("run_evals", asked))
        other = await client.call_tool("run_evals", {**asked, "repeat": 2})
        bad = await client.call_tool("run_evals", {**asked, "idempotency_key": "x y"})
        runs = data(await client.call_tool("list_runs", {"limit": 5}))["runs"]
    assert first["model"] == "openai/fake-2"  # the request's model, EVAL_MODEL in the child
    assert not first["repeated"] and again["repeated"]
    assert again["run_id"] == first["run_id"] and again["launch"] == first["launch"]
    assert again["totals"] == first["totals"] and len(env) == calls  # nothing ran again
    assert other.is_error and f"idempotency key '{key}' was used for another request" in \
        other.content[0].text and "repeat: 1 then, 2 now" in other.content[0].text
    assert bad.is_error and len(runs) == 1
    # asked of another server (another process): the run the store holds for that launch
    async with connected() as client:
        elsewhere = data(await client.call_tool("run_evals", asked))
    assert elsewhere["run_id"] == first["run_id"] and elsewhere["repeated"]
    assert elsewhere["exit_code"] is None and elsewhere["totals"] == first["totals"]


async def test_python_m_evals_mcp_answers_over_stdio(env):
    """The server as a coding assistant starts it: a child process speaking on stdin/stdout
    (anything else it prints must go to stderr, or the protocol breaks)."""
    import os
    import sys

    from mcp import Client, StdioServerParameters

    # a live catalogue setting makes the evals print a note: on stderr, never in the protocol
    child = {**os.environ, "CATALOG_SOURCE": "https://lab.example/catalogue.json"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "evals", "mcp"],
                                   cwd=str(ROOT), env=child)
    async with Client(params) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        runs = data(await client.call_tool("list_runs", {"limit": 3}))
        shown = data(await client.call_tool("show_prompt", {"page": "/tools/form-4"}))
    assert listed == TOOLS and runs == {"runs": []}
    assert shown["role"] == "anonymous" and "report_issue" in [
        t["function"]["name"] for t in shown["tools"]]


async def test_calibrate_judge_reads_only_files_under_the_project(tmp_path, monkeypatch):
    """Any other path (absolute, escaping with .., or a link out) is refused with one message,
    whether or not the file exists, and before anything is read."""
    import evals.cli.mcp_server as mcp_server

    project = tmp_path / "project"
    project.mkdir()
    outside = tmp_path / "outside.json"
    outside.write_text("[]")
    (project / "link.json").symlink_to(outside)
    monkeypatch.setattr(mcp_server, "PROJECT_ROOT", project, raising=False)
    tried = {"absolute": str(outside), "absent": str(tmp_path / "absent.json"),
             "dot-dot": "../outside.json", "dot-dot-absent": "../absent.json",
             "linked": "link.json", "system": "/etc/passwd", "nul": "run\x00.json"}
    async with connected() as client:
        answers = {k: await client.call_tool("calibrate_judge", {"set": "mrbench", "file": f})
                   for k, f in tried.items()}
        missing = await client.call_tool("calibrate_judge", {"set": "mrbench",
                                                             "file": "no-such.json"})
    assert all(result.is_error for result in answers.values())
    said = {r.content[0].text.replace(repr(tried[k]), "PATH") for k, r in answers.items()}
    assert said == {"Error executing tool calibrate_judge: file PATH: only a .json file under"
                    f" the project folder ({project}), outside its hidden folders, is read"}
    assert missing.is_error
    assert "file 'no-such.json': no such file under the project folder" in \
        missing.content[0].text


def test_calibrate_judge_never_reads_a_hidden_or_non_json_file_under_the_project():
    from mcp.server.mcpserver.exceptions import ToolError

    from evals.cli.mcp_server import _project_file

    for file in (".data/session-secret", ".env", ".git/config", "pyproject.toml",
                 ".data/../.git/HEAD"):
        with pytest.raises(ToolError, match="outside its hidden folders, is read"):
            _project_file(file)


def test_the_compare_answer_says_why_the_moved_items_moved():
    import datetime as dt

    from evals.cli.mcp_server import compare_answer
    from evals.record.comparison import Attribution, Change, Comparison, FragmentDiff
    from evals.record.listings import StoredComparison

    change = Change(prompt=(FragmentDiff(capability="maintenance",
                                         diff=("-Confirm first.", "+Never confirm.")),))
    result = Comparison(baseline_run="a", current_run="b", plan_fingerprint="p", pairs=[],
                        counts={"regressed": 2}, recovered={"baseline": 0, "current": 0},
                        p_value=0.5, verdict="v", attribution=[Attribution(
                            change=change, regressed=["t1", "t2"],
                            contexts=["staff /staff/tickets demo"])])
    answer = compare_answer(StoredComparison(id="c1", created_at=dt.datetime.now(dt.UTC),
                                             point="base", baseline_run="a", current_run="b",
                                             result=result))
    assert answer["why_moved"] == [{
        "improved": [], "regressed": ["t1", "t2"], "moved_but_undecided": [],
        "contexts": ["staff /staff/tickets demo"],
        "change": "after the `maintenance` fragment changed",
        "diff": ["maintenance:", "  -Confirm first.", "  +Never confirm."]}]


async def test_calibrate_judge_measures_in_process_and_keeps_its_talk_off_the_stream(
        env, monkeypatch):
    from app.settings import get_settings

    monkeypatch.setenv("MODEL_JUDGE", "openai/fake")  # the scripted server, never the embedded
    get_settings.cache_clear()
    async with connected() as client:
        got = data(await client.call_tool("calibrate_judge", {"set": "makerspace"}))
    assert got["judge"] == "openai/fake"
    assert {"agreement", "kappa"} <= set(got)  # the figures, whatever this judge earned
    assert any(r["messages"][0]["role"] == "system" for r in env)  # the judge was asked
