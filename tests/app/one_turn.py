"""One turn through the real loop, composed for who is asking and where (tests of the loop and
of the capabilities' tools)."""

from app.capabilities import ToolContext
from app.chat.compose import compose_chat, user_message
from app.chat.loop import run_turn
from app.chat.page_context import load_page_context


async def one_turn(db, settings, model, text, identity=None, path="/", max_steps=4):
    page = await load_page_context(db, path)
    composed = await compose_chat(db, identity=identity, page=page)
    ctx = ToolContext(db=db, settings=settings, identity=identity, page=page)
    return await run_turn(model, composed, [user_message(text)], ctx, max_steps=max_steps)
