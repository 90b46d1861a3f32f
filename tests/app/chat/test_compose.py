import pytest

from app.capabilities import Photo
from app.chat.compose import compose_chat, user_message
from app.chat.page_context import PageContextError, load_page_context, selection_ids_by_name
from app.chat.qr import decode_qr
from app.identity import demo_identity
from tests.app.images import jpeg, photo_with_qr


async def test_tool_page_composes_the_machine_record_and_no_staff_tools(db):
    student = await demo_identity(db, "student")
    page = await load_page_context(db, "/tools/form-4")
    composed = await compose_chat(db, identity=student, page=page)
    prompt = composed.system_prompt + "\n" + composed.turn_context
    assert "on the tool page of Form 4 (/tools/form-4)" in prompt
    assert '"build_volume": null' in prompt
    assert "You are talking with Alex Kim (student)" in prompt
    assert "Trotec Speedy 400" in prompt  # the catalogue section
    assert "list_open_tickets" not in composed.tool_names
    assert "search_catalog" in composed.tool_names


async def test_staff_queue_page_with_a_selection(db):
    staff = await demo_identity(db, "staff")
    ids = await selection_ids_by_name(db, "/staff/tickets", ["Cuts not going through 3 mm plywood"])
    page = await load_page_context(db, "/staff/tickets", ids, role="staff")
    composed = await compose_chat(db, identity=staff, page=page)
    assert f"ticket #{ids[0]} “Cuts not going through 3 mm plywood” (Trotec Speedy 400, open)" \
        in composed.turn_context
    assert {"list_open_tickets", "update_ticket"} <= set(composed.tool_names)


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


def test_qr_reader_decodes_a_label_in_a_photo():
    assert decode_qr(photo_with_qr("https://makerlab.example/tools/form-4")) == [
        "https://makerlab.example/tools/form-4"
    ]
    assert decode_qr(jpeg()) == []
    assert decode_qr(b"not an image") == []


async def test_qr_section_names_the_catalogue_machine(db):
    photo = Photo("IMG_2101.jpg", "image/jpeg", photo_with_qr("https://lab/tools/form-4"))
    composed = await compose_chat(db, identity=None, page=await load_page_context(db, "/"),
                                  photos=(photo,))
    assert "## QR codes in this message's photos" in composed.turn_context
    assert "→ catalogue machine Form 4 (form-4)" in composed.turn_context
    assert [h.slug for h in composed.qr_hints] == ["form-4"]


def test_user_message_carries_the_attachment_hint_and_image_parts():
    photo = Photo("IMG_2057.jpg", "image/jpeg", jpeg(), attachment_id="att-1")
    msg = user_message("What is this?", (photo,))
    hint = "[Attached photos: attachment_id=att-1 name=IMG_2057.jpg]"
    assert msg["content"][0]["text"].endswith(hint)
    assert msg["content"][1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert user_message("hi") == {"role": "user", "content": "hi"}
