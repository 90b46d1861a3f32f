"""compose_chat: the system prompt, the turn's context and the tool set; the user message."""

from app.capabilities import Photo
from app.chat.compose import compose_chat, user_message
from app.chat.page_context import load_page_context, selection_ids_by_name
from app.identity import demo_identity
from tests.app.images import jpeg


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


def test_user_message_carries_the_attachment_hint_and_image_parts():
    photo = Photo("IMG_2057.jpg", "image/jpeg", jpeg(), attachment_id="att-1")
    msg = user_message("What is this?", (photo,))
    hint = "[Attached photos: attachment_id=att-1 name=IMG_2057.jpg]"
    assert msg["content"][0]["text"].endswith(hint)
    assert msg["content"][1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert user_message("hi") == {"role": "user", "content": "hi"}
