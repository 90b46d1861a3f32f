"""The inputs of a request besides its context and its item: a photo, a manual, a catalogue
record, a ticket or a person that changed touches exactly the items whose requests may carry
it, and says which one changed; a fixture no request carries touches nothing."""

import shutil

import pytest

import evals.load.fixture_data as fixture_data
import evals.load.plan as plan_module
from app.capabilities import REGISTRY
from app.manuals import demo as manuals
from evals.execute.agent import agent_info
from evals.execute.impact import Baseline, impact
from evals.execute.impact.inputs import READS
from evals.load.cases import Case
from evals.load.context import Context
from evals.load.responses import ToolResponses
from evals.record.fingerprint import FrozenContext
from tests.evals.execute.impact.helpers import GIT, SETTINGS, plan_of

CATALOGUE_TOOLS = ("search_catalog", "list_machines", "get_machine_details", "get_unit_status")
TICKET_TOOLS = ("list_open_tickets", "get_unit_status")


def case(id, *, frozen=(), **fields):
    """A case that answers the named tools from frozen responses instead of the database."""
    responses = {name: ToolResponses(contract="0" * 12, response={"ok": True})
                 for name in frozen}
    return Case(id=id, prompt="Which machine is this?", must_not="Makes one up.",
                tool_responses=responses, **fields)


ITEMS = [
    case("photo-2041", photos=("IMG_2041.jpg",)),
    case("photo-2042", photos=("IMG_2042.jpg",)),
    case("nothing-read", frozen=(*CATALOGUE_TOOLS, "search_manual")),
    case("laser-page", context=Context(page="tool", toolId="trotec-speedy-400"),
         frozen=(*CATALOGUE_TOOLS, "search_manual")),
    case("lab-reads", context=Context(catalog="lab")),
    case("lab-page", context=Context(page="tool", toolId="prusa-mk4", catalog="lab"),
         frozen=CATALOGUE_TOOLS),
    case("lab-frozen", context=Context(catalog="lab"), frozen=CATALOGUE_TOOLS),
    case("staff-queue", context=Context(**{"as": "staff"})),
    case("staff-ticked", frozen=TICKET_TOOLS, context=Context(
        **{"as": "staff", "path": "/staff/tickets", "selection": ("Resin tank film clouded",)})),
    case("student", context=Context(**{"as": "student"}), frozen=TICKET_TOOLS),
]
EVERY = {i.id for i in ITEMS}
# get_unit_status (everyone's) answers with a machine's open tickets, list_open_tickets (staff's)
# with the queue; staff-ticked freezes both but ticks ticket #2 on its page
QUEUE = {"photo-2041", "photo-2042", "lab-reads", "staff-queue", "staff-ticked"}


@pytest.fixture
def baseline():
    """The items' plan and an agent told the same in every context, as they are now."""
    same = FrozenContext(system_prompt="p", tools=[])
    agent = agent_info("m", SETTINGS, {i.context.key: same for i in ITEMS}, GIT)
    return Baseline("run r1", agent, plan_of(ITEMS))


def today(baseline, plan=None):
    return impact(baseline.agent.contexts, ITEMS, plan or plan_of(ITEMS), "m", SETTINGS,
                  baseline)


def test_nothing_changed_touches_nothing(baseline):
    result = today(baseline)
    assert not result.inputs and not result.touched and not result.notes


def test_a_fixture_no_request_carries_touches_nothing_and_stays_a_note(baseline, monkeypatch):
    real = plan_module._file_hash
    monkeypatch.setattr(plan_module, "_file_hash", lambda path: "edited" if
                        path.name in ("make_manuals.py", "form-4-resin-supplier-sheet.pdf")
                        else real(path))
    result = today(baseline)
    assert not result.inputs and not result.touched
    assert set(result.notes) == {
        "fixture changed: evals/fixtures/manuals/form-4-resin-supplier-sheet.pdf",
        "fixture changed: evals/fixtures/manuals/make_manuals.py"}


def test_a_changed_photo_touches_the_items_that_attach_it(baseline, monkeypatch, tmp_path):
    photos = tmp_path / "photos"
    shutil.copytree(plan_module.PHOTOS_DIR, photos)
    (photos / "IMG_2041.jpg").write_bytes(b"another photo")
    monkeypatch.setattr(plan_module, "PHOTOS_DIR", photos)
    result = today(baseline)
    (change,) = result.inputs
    assert change.what == "photo evals/fixtures/photos/IMG_2041.jpg changed"
    assert result.touched == {"photo-2041"} and change.kind == "photo"
    assert not result.notes  # the fixture's change is the photo's


def edit_manual(monkeypatch, tmp_path, name):
    """The fixture manual `name` with other bytes (its text layer, or none, kept)."""
    folder = tmp_path / "manuals"
    shutil.copytree(manuals.FIXTURE_DIR, folder)
    (folder / name).write_bytes((folder / name).read_bytes() + b"\n% edited\n")
    monkeypatch.setattr(manuals, "FIXTURE_DIR", folder)


def test_a_scanned_manual_touches_the_items_on_its_machine_s_page(baseline, monkeypatch,
                                                                   tmp_path):
    edit_manual(monkeypatch, tmp_path, "trotec-speedy-400-operator-guide.pdf")
    result = today(baseline)
    (change,) = result.inputs
    assert change.what == \
        "manual evals/fixtures/manuals/trotec-speedy-400-operator-guide.pdf changed"
    assert result.touched == {"laser-page"}  # attached whole, whatever it searches


def test_a_searched_manual_touches_the_items_that_may_search_it(baseline, monkeypatch,
                                                                 tmp_path):
    edit_manual(monkeypatch, tmp_path, "form-4-manual.pdf")
    result = today(baseline)
    (change,) = result.inputs
    assert change.what == "manual evals/fixtures/manuals/form-4-manual.pdf changed"
    assert result.touched == EVERY - {"nothing-read", "laser-page"}


def test_a_catalogue_record_touches_its_catalogue_s_readers_and_its_page(baseline,
                                                                        monkeypatch):
    real = fixture_data.catalog_machines

    def edited(catalog):
        return tuple(m.model_copy(update={"location": "Room 2"}) if m.slug == "prusa-mk4"
                     else m for m in real(catalog))

    monkeypatch.setattr(fixture_data, "catalog_machines", edited)
    result = today(baseline)
    (change,) = result.inputs
    assert (change.kind, change.what) == ("catalogue record", "catalogue record prusa-mk4 changed")
    assert change.sources == ("evals/fixtures/catalogs/large-lab.yaml",)
    # the demo's items are not served the lab's machines; a frozen catalogue reads none
    assert result.touched == {"lab-reads", "lab-page"}


def test_a_ticket_touches_the_items_that_read_the_queue_or_tick_it(baseline, monkeypatch):
    monkeypatch.setattr(fixture_data, "EVAL_TICKETS", [
        ("form-4", "Resin tank film clouded", "Tank 2 is milky.")])
    result = today(baseline)
    (change,) = result.inputs
    assert change.what == "ticket #2 changed" and change.sources == ("evals/fixtures/tickets.py",)
    assert result.touched == QUEUE
    monkeypatch.setattr(fixture_data, "EVAL_TICKETS", [*fixture_data.EVAL_TICKETS,
                                                      ("form-4", "Loud fan", "It rattles.")])
    changes = {c.what: c.items for c in today(baseline).inputs}
    assert set(changes) == {"ticket #2 changed", "ticket #3 added"}
    assert set(changes["ticket #3 added"]) == QUEUE - {"staff-ticked"}  # it ticks another


def test_a_person_touches_the_items_signed_in_as_them(baseline, monkeypatch):
    people = [(h, n, r, "Head Technician" if h == "supermaker" else t)
              for h, n, r, t in fixture_data.DEMO_PEOPLE]
    monkeypatch.setattr(fixture_data, "DEMO_PEOPLE", people)
    result = today(baseline)
    (change,) = result.inputs
    assert change.what == "person supermaker changed"
    assert result.touched == {"staff-queue", "staff-ticked"}


def test_a_baseline_without_its_records_is_compared_by_their_files(baseline, monkeypatch):
    old = Baseline(baseline.label, baseline.agent, baseline.plan.model_copy(update={"inputs": {}}))
    assert not today(old).inputs  # the files are as they were
    real = plan_module._file_hash
    monkeypatch.setattr(plan_module, "_file_hash", lambda path: "edited" if
                        path.name == "tickets.py" else real(path))
    result = today(old)
    (change,) = result.inputs
    assert change.what == "tickets in evals/fixtures/tickets.py: the file changed (the" \
        " baseline kept no digest of each)"
    assert result.touched == QUEUE and not result.notes


def test_every_tool_said_to_read_records_is_one_the_app_registers():
    assert set(READS) <= set(REGISTRY.all_tools())


def test_a_catalogue_the_baseline_did_not_run_against_is_not_compared(baseline):
    demo = [i for i in ITEMS if i.context.catalog == "demo"]
    result = today(Baseline(baseline.label, baseline.agent, plan_of(demo)))
    assert not result.inputs  # the lab's records are not new: its items are
    assert dict(result.reasons) == {"new since the baseline": ("lab-reads", "lab-page",
                                                               "lab-frozen")}
