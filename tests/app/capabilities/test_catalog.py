"""Catalogue lookup as the model meets it: search_catalog's results say what they were drawn
from and never call a partial list the whole lab; list_machines gives the catalogue by
category; a large catalogue is not listed whole in the prompt."""

import json

import pytest

from app import catalog
from app.capabilities import PageContext, PromptContext, ToolContext
from app.capabilities._registry import ToolError
from app.capabilities.catalog import LISTED, list_machines, search_catalog
from app.embed import HashEmbedder
from app.manuals import BlobStore, ManualLibrary


@pytest.fixture
def ctx(db, settings, tmp_path):
    library = ManualLibrary(db, BlobStore(tmp_path, "http://unused"), HashEmbedder())
    return ToolContext(db=db, settings=settings, identity=None, page=PageContext(),
                       manuals=library)


async def _search(ctx, query):
    return await search_catalog.run(ctx, search_catalog.args(query=query))


async def test_a_match_says_how_many_of_the_catalogue_it_is(ctx):
    result = await _search(ctx, "laser cutter for plywood")
    assert [m["slug"] for m in result["machines"]] == ["trotec-speedy-400"]
    assert result["note"].startswith("1 of the catalogue's 2 machines match")
    assert "lists 2 machines in 2 categories" in result["note"]
    search_catalog.result.model_validate(result)  # the declared contract


async def test_no_match_says_so_with_what_the_catalogue_holds_never_only_these_exist(ctx):
    result = await _search(ctx, "band saw")
    assert result["machines"] == []
    assert result["note"].startswith("No machine in the catalogue matches 'band saw'.")
    assert "No catalogue record mentions: band, saw." in result["note"]
    assert "The catalogue lists 2 machines in 2 categories." in result["note"]
    assert "they are other machines. Say the lab has none for this" in result["note"]
    assert "Only these" not in result["note"]
    assert {n["slug"] for n in result["nearest"]} <= {"form-4", "trotec-speedy-400"}
    search_catalog.result.model_validate(result)


async def test_a_general_question_gets_the_catalogue_by_category(ctx):
    result = await _search(ctx, "what machines do you have")
    assert result["machines"] == []
    assert {c["category"] for c in result["categories"]} == {"resin 3D printer",
                                                             "CO2 laser cutter"}
    assert "names no task, material or machine" in result["note"]
    search_catalog.result.model_validate(result)


async def test_list_machines_gives_the_overview_and_a_category_s_records(ctx):
    whole = await list_machines.run(ctx, list_machines.args())
    assert whole["machines"] == 2 and len(whole["categories"]) == 2
    assert "no other machine is in the lab" in whole["note"]
    lasers = await list_machines.run(ctx, list_machines.args(category="CO2 laser cutter"))
    assert [m["slug"] for m in lasers["machines"]] == ["trotec-speedy-400"]
    for result in (whole, lasers):
        list_machines.result.model_validate(result)
    with pytest.raises(ToolError, match="no category 'band saws'; the categories are: CO2"):
        await list_machines.run(ctx, list_machines.args(category="band saws"))


def _prompt(machines):
    from app.capabilities.catalog import catalog_prompt
    return catalog_prompt.prompt(PromptContext(identity=None, page=PageContext(),
                                        catalogue=machines))


async def test_a_small_catalogue_is_listed_whole_and_a_large_one_by_category(db):
    demo = await catalog.list_machines(db)
    small = _prompt(demo)
    assert "Form 4 (Formlabs, resin 3D printer) — slug form-4" in small
    large = [{**demo[i % 2], "slug": f"m{i}", "name": f"Machine {i}",
              "category": f"kind {i % 3}"} for i in range(LISTED + 1)]
    text = _prompt(large)
    assert f"The lab has {LISTED + 1} machines in 3 categories" in text
    assert "Machine 1" not in text and "search_catalog" in text and "list_machines" in text


async def test_a_key_searched_for_leaves_no_piece_of_it_in_the_redacted_result(ctx):
    # The note lists the request's words no record has, lowercased: the key's pieces, which
    # redaction (as every record of a run is stored) removes as it removes the key itself.
    from app.redact import redact

    key = "sk-proj-Xa9fB2kLmQ7rT4vWyZ3cD8eF"
    result = await _search(ctx, f"my key is {key} please")
    text = json.dumps(result)
    assert "xa9fb2klmq7rt4vwyz3cd8ef" in text.lower().replace(key.lower(), "")  # it is there
    redacted = redact(text, {"OPENAI_API_KEY": key})
    assert "xa9fb2klmq7rt4vwyz3cd8ef" not in redacted.lower()
    assert "[redacted]" in json.loads(redacted)["note"]
