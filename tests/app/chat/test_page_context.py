"""The page a person is on, resolved against the database; staff rows only for staff."""

import pytest

from app.chat.page_context import PageContextError, load_page_context, selection_ids_by_name


@pytest.mark.parametrize(
    ("path", "selection", "message"),
    [
        ("/tools/glowforge-pro", [], "no machine with slug 'glowforge-pro'"),
        ("/nowhere", [], "unknown page '/nowhere'"),
        ("/staff/tickets", [99999], r"no ticket with id \[99999\]"),
        ("/tools/form-4", [1], "has no rows to select"),
    ],
)
async def test_bad_page_contexts_are_clear_errors(db, path, selection, message):
    with pytest.raises(PageContextError, match=message):
        await load_page_context(db, path, selection, role="staff")


@pytest.mark.parametrize("role", ["anonymous", "student"])
@pytest.mark.parametrize("path", ["/staff/tickets", "/people"])
async def test_a_visitor_cannot_select_staff_rows_or_probe_ids(db, role, path):
    table = "tickets" if path == "/staff/tickets" else "people"
    real = (await db.fetchone(f"SELECT min(id) AS id FROM {table}"))["id"]
    with pytest.raises(PageContextError) as exists:
        await load_page_context(db, path, [real], role=role)
    with pytest.raises(PageContextError) as unknown:
        await load_page_context(db, path, [99999], role=role)
    # an id that exists and one that does not are answered alike, with nothing of the row
    assert str(exists.value) == str(unknown.value).replace("99999", str(real))
    staff = await load_page_context(db, path, [real], role="staff")
    assert [r.id for r in staff.selection] == [real]


async def test_selection_by_unknown_name_is_an_error(db):
    with pytest.raises(PageContextError, match="shows no row named 'Nope'"):
        await selection_ids_by_name(db, "/staff/tickets", ["Nope"])
