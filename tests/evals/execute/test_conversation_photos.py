"""A scenario's photos: sent with one visitor message through the route's own path (the
attachment hint and image parts, the QR reader or the scenario's codes, the stored attachment
its tools refer to), the visitor told which message carries them, the photo checks on the
conversation, and the skip where the chat model takes no images."""

from app.chat.declared import Declared
from evals.execute.compose import load_photo
from evals.execute.conversation import STOP, visitor_says
from evals.execute.runner import run_suite, skip_reason
from tests.evals.load.helpers import MINIMAL, item_of
from tests.fakes import ScriptedModel, call, say

LABEL = "https://makerlab.example/tools/form-4"  # the real QR code in IMG_2101.jpg

PHOTO = """\
- id: label
  visitor: {who: a student, wants: to know which machine this is}
  opening: what is this machine?
  photos: [IMG_2101.jpg]
  max_turns: 2
  assert:
    - kind: identified_tool
      value: form-4
"""


def parts(message):
    """A user message's text and how many image parts it carries."""
    content = message["content"]
    if isinstance(content, str):
        return content, 0
    text = " ".join(p["text"] for p in content if p["type"] == "text")
    return text, sum(p["type"] == "image_url" for p in content)


async def test_the_photo_message_takes_the_routes_path_and_only_that_message(env, tmp_path):
    model = ScriptedModel(say("That's the Form 4, our resin printer."), say("You're welcome."))
    [result] = await run_suite(env, [item_of(tmp_path, PHOTO)], model, vision=True,
                               visitor=ScriptedModel(say("thanks"), say(STOP)))
    first, second = (r["messages"] for r in model.requests)
    text, images = parts(first[-1])
    photo_id = load_photo("IMG_2101.jpg").attachment_id
    assert text == f"what is this machine?\n\n[Attached photos: attachment_id={photo_id}" \
                   " name=IMG_2101.jpg]"
    assert images == 1
    assert f"“{LABEL}” → catalogue machine Form 4 (form-4)" in first[1]["content"]  # QR reader
    # the next turn is the route's too: its history is text, and no photo is sent again
    assert [parts(m) for m in second[2:]] == [("what is this machine?", 0),
                                              ("That's the Form 4, our resin printer.", 0),
                                              ("thanks", 0)]
    assert "QR codes" not in second[1]["content"]
    a = result.attempts[0]
    assert [t.photos for t in a.transcript.turns] == [["IMG_2101.jpg"], [], [], []]
    assert a.transcript.qr_hints == [LABEL]
    # identified_tool reads the answer to the photo, not the goodbye after it
    assert result.status == "PASS", [c.reason for c in a.checks]


LATER = """\
- id: later
  visitor: {who: a student, wants: to know if the resin printer is free}
  opening: is the resin printer free today?
  photos: [IMG_2101.jpg]
  photo_turn: 2
  qr_codes:
    IMG_2101.jpg: [https://makerlab.example/tools/trotec-speedy-400]
  max_turns: 2
  assert:
    - kind: identified_tool
      value: trotec-speedy-400
"""


async def test_photos_go_with_the_message_given_and_the_scenarios_codes_are_read(
        env, tmp_path, monkeypatch):
    import app.chat.qr as qr

    def no_decoding(data):
        raise AssertionError("the photo was decoded")

    monkeypatch.setattr(qr, "decode_qr", no_decoding)
    model = ScriptedModel(say("Which printer do you mean?"), say("That is the Trotec Speedy 400."))
    visitor = ScriptedModel(say("this one"))
    [result] = await run_suite(env, [item_of(tmp_path, LATER)], model, vision=True,
                               visitor=visitor)
    first, second = (r["messages"] for r in model.requests)
    assert parts(first[-1]) == ("is the resin printer free today?", 0)
    text, images = parts(second[-1])
    assert text.startswith("this one\n\n[Attached photos: ") and images == 1
    assert "trotec-speedy-400” → catalogue machine Trotec Speedy 400" in second[1]["content"]
    a = result.attempts[0]
    assert a.transcript.qr_hints == ["https://makerlab.example/tools/trotec-speedy-400"]
    assert [t.photos for t in a.transcript.turns] == [[], [], ["IMG_2101.jpg"], []]
    assert result.status == "PASS", [c.reason for c in a.checks]
    # the visitor was told, while writing it, that this message carries the photo
    assert "This message of yours goes with a photo" in visitor.requests[0]["messages"][0][
        "content"]


async def test_the_visitor_is_told_which_message_carries_the_photos_never_what_they_show(
        tmp_path):
    async def system(text, conversation):
        visitor = ScriptedModel(say("hi"))
        await visitor_says(visitor, item_of(tmp_path, text), conversation)
        return visitor.requests[0]["messages"][0]["content"]

    earlier = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello."}]
    plain = await system(MINIMAL, [])
    two = MINIMAL + "  max_turns: 3\n  photos: [IMG_2101.jpg, IMG_2041.jpg]\n  photo_turn: 2\n"
    assert await system(two, []) == plain  # before the message that carries them: nothing
    now = await system(two, earlier)
    assert now.startswith(plain) and "This message of yours goes with 2 photos" in now
    assert "the assistant sees them" in now and "IMG_" not in now
    after = await system(two, [*earlier, *earlier])
    assert after.endswith("Your message number 2 went with 2 photos you took; the assistant"
                          " has seen them.")


INTAKE = """\
- id: bench
  context: {as: staff}
  visitor: {who: a technician, wants: the bench's tools in the inventory}
  opening: add everything on this bench to the inventory please
  photos: [bench-three-tools.jpg]
  max_turns: 1
  expect_actions:
    - tool: identify_tools
      result: {recorded: 3}
  end_state:
    - table: intake_items
      where: {photo: bench-three-tools.jpg, name_contains: drill press}
  assert:
    - kind: identified_count
      value: "3"
    - kind: identified_items
      value: [drill press, cricut|maker, battery]
"""


async def test_identify_tools_records_the_photo_for_real_and_the_intake_checks_read_it(
        env, tmp_path):
    photo_id = load_photo("bench-three-tools.jpg").attachment_id
    items = [{"brand": "WEN", "name": "drill press"}, {"brand": "Cricut", "name": "Maker 3"},
             {"brand": "Ryobi", "name": "P103 battery", "quantity": 2}]
    model = ScriptedModel(call("identify_tools", attachment_id=photo_id, items=items),
                          say("I recorded the drill press, the Cricut and two batteries."))
    [result] = await run_suite(env, [item_of(tmp_path, INTAKE)], model, vision=True,
                               visitor=ScriptedModel(say(STOP)))
    a = result.attempts[0]
    assert a.tool_calls[0].result_map == {"recorded": 3}  # the attachment was stored first
    assert result.status == "PASS", [c.reason for c in a.checks]
    # the run's own database never saw the photo: it was stored in the conversation's clone
    assert (await env.db.fetchone("SELECT count(*) AS n FROM attachments"))["n"] == 0


async def test_a_visitor_that_stops_before_the_photo_message_is_an_error(env, tmp_path):
    model = ScriptedModel(say("Which printer?"), repeat=True)
    [result] = await run_suite(env, [item_of(tmp_path, LATER)], model, vision=True,
                               visitor=ScriptedModel(say(STOP)))
    assert result.status == "ERROR"
    assert "the simulated visitor stopped before message 2, which carries the photos" in \
        result.attempts[0].error


async def test_a_photo_conversation_is_skipped_where_the_model_takes_no_images(env, tmp_path):
    item = item_of(tmp_path, PHOTO)
    model, visitor = ScriptedModel(say("The Form 4.")), ScriptedModel(say(STOP))
    [result] = await run_suite(env, [item], model, vision=False, visitor=visitor)
    assert result.status == "SKIPPED" and result.attempts == []
    assert result.skipped_reason == ("scripted/fake takes no image input, by litellm's model"
                                     " info (set EVAL_VISION=1 to send photos anyway)")
    assert model.requests == [] and visitor.requests == []

    class Named(Declared):
        model_id = "openai/gpt-4o"

    assert skip_reason(item, Named(), None) is None  # litellm says it sees images
    assert skip_reason(item_of(tmp_path, MINIMAL), model, False) is None  # no photos


class PassingJudge(Declared):
    """A scripted judge that passes every criterion."""

    model_id = "scripted/judge"

    async def complete(self, messages, tools=None, **kw):
        return say('{"reason": "scripted", "verdict": "pass"}')


async def test_the_shipped_photo_scenarios_pass_an_assistant_that_does_right(env):
    from evals.judge.setup import JudgeSetup
    from evals.judge.trust import Trust
    from evals.load.conversations import conversations
    from evals.load.scenarios import load_scenarios

    items = {i.scenario.id: i for i in conversations(*load_scenarios(), full=False)}
    ultimaker = ScriptedModel(
        say("It could be the Ultimaker 3 or the Ultimaker 3 Extended; which one is it?"),
        call("get_unit_status", slug="ultimaker-3-extended"),
        say("The Ultimaker 3 Extended is free this afternoon."))
    photo_id = load_photo("bench-three-tools.jpg").attachment_id
    bench = ScriptedModel(call("identify_tools", attachment_id=photo_id, items=[
        {"brand": "WEN", "name": "4214 drill press"}, {"brand": "Cricut", "name": "Maker 3"},
        {"brand": "Ryobi", "name": "P103 battery"}]),
        say("I recorded the drill press, the Cricut Maker 3 and the Ryobi battery."))
    judge = JudgeSetup(PassingJudge(), Trust(True, "scripted"))
    for sid, model, visitor in [
            ("photo-which-ultimaker", ultimaker,
             ScriptedModel(say("the sticker says Ultimaker 3 Extended"), say(STOP))),
            ("photo-bench-intake", bench, ScriptedModel(say(STOP)))]:
        [result] = await run_suite(env, [items[sid]], model, vision=True, visitor=visitor,
                                   judge=judge)
        assert result.status == "PASS", [c.reason for c in result.attempts[0].checks]
