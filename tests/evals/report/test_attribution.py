"""Why moved items moved: the capability fragment, tool schema, model or settings that differ
for each item's context, and the items that share a change said once."""

from evals.record.comparison import Comparison
from evals.record.fingerprint import AgentInfo, AgentSettings, FrozenContext
from evals.record.run import RunRecord
from evals.report import attribution
from evals.report.attribution import attribute, change_for
from evals.report.compare import compare_runs, render
from tests.evals.report.helpers import result

STAFF = "staff /staff/tickets demo"
HOME = "anonymous / demo"
FRAGMENTS = {"lab_identity": "You are the lab's assistant.\nBe brief.",
             "maintenance": "List open tickets when asked.\nConfirm before changing one."}


def tool(name, description="d", **properties):
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties}}}


def context(fragments, tools=()):
    return FrozenContext(system_prompt="\n\n".join(fragments.values()), tools=list(tools))


def agent(model="m1", staff=None, tools=(), home=None, steps=6):
    contexts = {STAFF: context(staff or FRAGMENTS, tools),
                HOME: context(home or {"lab_identity": FRAGMENTS["lab_identity"]})}
    spans = {key: {name: len(text.splitlines()) for name, text in f.items()}
             for key, f in ((STAFF, staff or FRAGMENTS),
                            (HOME, home or {"lab_identity": FRAGMENTS["lab_identity"]}))}
    return AgentInfo(fingerprint="f", model=model, settings=AgentSettings(max_tool_steps=steps),
                     contexts=contexts, git_commit=None, git_dirty=False, fragments=spans)


def run(agent_info, statuses, contexts=None):
    cases = [result(cid, status).model_copy(update={"context": (contexts or {}).get(cid)})
             for cid, status in statuses.items()]
    return RunRecord(run_id="r", cases=cases, agent=agent_info)


WHERE = {"t1": STAFF, "t2": STAFF, "t3": STAFF, "h1": HOME}


def test_a_changed_fragment_is_put_down_to_its_capability():
    changed = FRAGMENTS | {"maintenance": "List open tickets when asked.\nNever confirm."}
    groups = attribute(run(agent(), {"t1": "PASS"}, WHERE),
                       run(agent(staff=changed), {"t1": "FAIL"}, WHERE), {"t1": "regressed"})
    [group] = groups
    assert group.regressed == ["t1"] and group.contexts == [STAFF]
    [fragment] = group.change.prompt
    assert fragment.capability == "maintenance"
    assert fragment.diff == ("-Confirm before changing one.", "+Never confirm.")
    assert attribution.headline(group) == (
        "1 regressed (t1) · staff on /staff/tickets: after the `maintenance` fragment changed")


def test_a_changed_tool_schema_names_the_tool_and_the_field():
    before = agent(tools=[tool("list_open_tickets", status={"type": "string"})])
    now = agent(tools=[tool("list_open_tickets", status={"type": "integer"})])
    [group] = attribute(run(before, {"t1": "FAIL"}, WHERE), run(now, {"t1": "PASS"}, WHERE),
                        {"t1": "improved"})
    [change] = group.change.tools
    assert (change.name, change.capability, change.what) == (
        "list_open_tickets", "maintenance", "parameters changed: status")
    assert not group.change.prompt
    assert attribution.render([group]) == [
        "", "why they moved:",
        "  1 improved (t1) · staff on /staff/tickets: after the `list_open_tickets` tool's"
        " schema changed (parameters changed: status)",
        "    tool list_open_tickets (maintenance): parameters changed: status"]


def test_an_added_tool_is_named():
    now = agent(tools=[tool("update_ticket")])
    assert change_for(agent(), now, STAFF).describe() == "after the `update_ticket` tool was added"


def test_a_model_only_change_says_so():
    change = change_for(agent("m1"), agent("m2"), STAFF)
    assert change.describe() == "only the model changed: m1 → m2"


def test_settings_and_model_are_both_said():
    change = change_for(agent("m1"), agent("m2", steps=8), STAFF)
    assert change.describe() == ("after the model changed (m1 → m2); the settings changed"
                                 " (max_tool_steps 6 → max_tool_steps 8)")


def test_items_sharing_a_change_are_one_line_and_its_diff_is_shown_once():
    changed = FRAGMENTS | {"maintenance": "List open tickets when asked.\nNever confirm."}
    base = run(agent(), {"t1": "PASS", "t2": "PASS", "t3": "FAIL", "h1": "FAIL"}, WHERE)
    cur = run(agent(staff=changed), {"t1": "FAIL", "t2": "FAIL", "t3": "PASS", "h1": "PASS"},
              WHERE)
    comparison = compare_runs(base, cur)
    staff, home = comparison.attribution
    assert (staff.regressed, staff.improved) == (["t1", "t2"], ["t3"])
    assert home.improved == ["h1"] and home.change.nothing
    text = render(comparison, "before", "now")
    lines = text.splitlines()
    at = lines.index("why they moved:")
    assert lines[at + 1:] == [
        "  2 regressed (t1, t2), 1 improved (t3) · staff on /staff/tickets: after the"
        " `maintenance` fragment changed",
        "    maintenance:",
        "      -Confirm before changing one.",
        "      +Never confirm.",
        "  1 improved (h1) · anonymous on /: nothing differs for its context (same prompt,"
        " tools, model and settings): noise, or a cause outside the agent"]
    assert text.count("+Never confirm.") == 1
    # stored and read back as it was
    assert Comparison.model_validate_json(comparison.model_dump_json()) == comparison


def test_nothing_differs():
    [group] = attribute(run(agent(), {"h1": "PASS"}, WHERE), run(agent(), {"h1": "FAIL"}, WHERE),
                        {"h1": "regressed"})
    assert group.change.nothing
    assert group.change.describe().startswith("nothing differs for its context")


def test_unchanged_and_uncertain_items_are_not_attributed():
    assert attribute(run(agent(), {}, WHERE), run(agent("m2"), {}, WHERE),
                     {"t1": "unchanged", "h1": "uncertain"}) == []
    assert render(compare_runs(run(agent(), {"t1": "PASS"}), run(agent(), {"t1": "PASS"})),
                  "a", "b").count("why they moved") == 0


def test_a_context_the_baseline_lacks_is_new():
    before = agent().model_copy(update={"contexts": {HOME: agent().contexts[HOME]}})
    change = change_for(before, agent(), STAFF)
    assert change.new_context and not change.prompt
    assert change.describe() == "after its context is new (the baseline's agent has none)"


def test_what_cannot_be_known_is_said():
    # Runs stored before results recorded their context: the model change is still known.
    [group] = attribute(run(agent("m1"), {"t1": "PASS"}), run(agent("m2"), {"t1": "FAIL"}),
                        {"t1": "regressed"})
    assert group.change.describe() == ("after the model changed (m1 → m2); what changed in its"
                                       " context is not known: the runs do not record the"
                                       " item's context")
    assert change_for(None, agent(), STAFF).describe() == (
        "what changed in its context is not known: a run records no agent")
    assert "has no context" in change_for(agent(), agent(), "staff /nowhere demo").describe()


def test_fragments_that_do_not_add_up_to_the_prompt_fall_back_to_the_whole_prompt():
    before = agent()
    now = agent(staff=FRAGMENTS | {"maintenance": "Changed."})
    now = now.model_copy(update={"fragments": {STAFF: {"maintenance": 40}}})
    assert now.fragments_in(STAFF) is None
    [fragment] = change_for(before, now, STAFF).prompt
    assert fragment.capability == "system prompt"
    assert change_for(before, now, STAFF).describe() == "after the system prompt changed"


def test_an_old_comparison_without_attribution_still_loads():
    stored = compare_runs(RunRecord(), RunRecord()).model_dump(exclude={"attribution"})
    assert Comparison.model_validate(stored).attribution == []


def test_an_uncertain_item_whose_status_changed_is_put_down_too():
    changed = FRAGMENTS | {"maintenance": "List open tickets when asked.\nNever confirm."}
    comparison = compare_runs(run(agent(), {"t1": "UNDECIDED", "t2": "UNDECIDED"}, WHERE),
                              run(agent(staff=changed), {"t1": "FAIL", "t2": "UNDECIDED"},
                                  WHERE))
    assert comparison.cases == {"t1": "uncertain", "t2": "uncertain"}  # counted as neither
    [group] = comparison.attribution
    assert group.unsettled == ["t1"] and not group.regressed  # t2 did not move
    assert attribution.headline(group) == (
        "1 moved but undecided (t1) · staff on /staff/tickets: after the `maintenance`"
        " fragment changed")
