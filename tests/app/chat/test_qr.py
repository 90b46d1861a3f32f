"""QR codes in a turn's photos, read and named in what the assistant is told."""

from app.capabilities import Photo
from app.chat.compose import compose_chat
from app.chat.page_context import load_page_context
from app.chat.qr import decode_qr
from tests.app.images import jpeg, photo_with_qr


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


async def test_another_reader_can_say_what_a_photo_holds(db):
    photo = Photo("IMG_2101.jpg", "image/jpeg", photo_with_qr("https://lab/tools/form-4"))
    composed = await compose_chat(db, identity=None, page=await load_page_context(db, "/"),
                                  photos=(photo,), read_qr=lambda p: ["https://lab/tools/nope"])
    assert [(h.photo, h.text, h.slug) for h in composed.qr_hints] == [
        ("IMG_2101.jpg", "https://lab/tools/nope", None)]
    assert "“https://lab/tools/nope”" in composed.turn_context
