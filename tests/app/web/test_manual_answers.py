"""A Form 4 question answered from the manual, with a citation the check resolves."""

import json

import httpx

from app.chat.reply import ModelReply
from app.manuals.citations import check_citations, extract_citations, gather_evidence
from app.web import create_app
from tests.fakes import ScriptedModel, call


def cite_first_passage(messages, tools):
    result = json.loads(next(m for m in reversed(messages) if m["role"] == "tool")["content"])
    p = result["passages"][0]
    return ModelReply(content=f"Wipe the build platform with isopropyl alcohol and let it dry "
                              f"[{p['title']}, p. {p['page']}](#cite-{p['ref']}).")


async def test_form4_question_is_answered_with_a_resolving_citation(db, settings, library):
    model = ScriptedModel(call("search_manual", question="How do I clean the build platform?",
                               slug="form-4"), cite_first_passage)
    app = create_app(settings, db=db, model=model, manuals=library)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://test") as client:
        body = (await client.post("/api/chat", json={
            "message": "How do I clean the build platform?",
            "page": {"path": "/tools/form-4"}})).json()
    passages = body["tool_calls"][0]["result"]["passages"]
    raw_answer = (await db.fetchone("SELECT answer FROM turns"))["answer"]
    assert "#cite-" in raw_answer
    assert f"({passages[0]['url']})" in body["answer"]  # people see the resolved address
    cites = extract_citations(raw_answer, passages, [])
    doc = cites[0].document
    async with httpx.AsyncClient() as client:
        evidence = await gather_evidence(
            cites, {doc: await library.page_texts(library.store.key_for(doc))}, client,
            may_fetch=library.store.serves)
    assert check_citations(cites, evidence, {"Form 4 Manual"}) == (True, "1 citation(s) resolve")


async def test_trotec_page_attaches_the_scanned_guide(db, settings, library):
    model = ScriptedModel(ModelReply(content="See the guide."))
    app = create_app(settings, db=db, model=model, manuals=library)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://test") as client:
        body = (await client.post("/api/chat", json={
            "message": "How do I clean the lens?", "page": {"path": "/tools/trotec-speedy-400"}
        })).json()
    [manual] = body["manuals"]
    assert manual["title"] == "Trotec Speedy 400 Operator Guide" and manual["page_count"] == 3
    assert manual["address"].startswith("http://127.0.0.1:")
    system = model.requests[0]["messages"][1]["content"]
    assert f"#cite-{manual['ref']}-N" in system
    # A scripted model reads no PDFs, so the manual is named, not sent.
    assert model.requests[0]["messages"][-1]["content"] == "How do I clean the lens?"
