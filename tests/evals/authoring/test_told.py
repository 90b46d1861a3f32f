"""What the assistant is told on a page as an audience: exactly what api/chat composes, and an
unknown role or page a clear error."""

import httpx
import pytest

from app.web import create_app
from evals.authoring.told import PromptError, told
from tests.fakes import ScriptedModel, say


async def test_the_prompt_shown_is_what_api_chat_composes(env, settings):
    shown = await told(env, "staff", "/tools/form-4")
    model = ScriptedModel(say("ok"))
    app = create_app(settings.model_copy(update={"demo_signin": True}), db=env.db, model=model,
                     manuals=env.library)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://test") as client:
        assert (await client.post("/api/session", json={"role": "staff"})).status_code == 200
        r = await client.post("/api/chat", json={"message": "hi",
                                                  "page": {"path": "/tools/form-4"}})
    assert r.status_code == 200, r.text
    sent = model.requests[0]
    assert sent["messages"][0] == {"role": "system", "content": shown.system_prompt}
    assert sent["messages"][1] == {"role": "system", "content": shown.turn_context}
    assert sent["tools"] == shown.tools
    assert "update_ticket" in [t["function"]["name"] for t in shown.tools]
    text = shown.as_text()
    assert text.startswith("# What the assistant is told: staff on /tools/form-4")
    assert shown.system_prompt in text and "### update_ticket" in text


async def test_an_unknown_role_or_page_is_a_clear_error(env):
    with pytest.raises(PromptError, match="unknown role 'janitor'"):
        await told(env, "janitor", "/")
    with pytest.raises(PromptError, match="page '/nope'"):
        await told(env, None, "/nope")
    with pytest.raises(PromptError, match="page '/tools/glowforge'"):
        await told(env, None, "/tools/glowforge")
