"""The prefix cache against a fake llama.cpp server over real HTTP: requests pinned to
slots, a prefix saved after its first request and restored in a new process, keys that
follow the exact tokens, a bounded folder, and a cache failure that costs nothing but time."""

import asyncio
import os
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.chat.openai_wire import OpenAICompatModel
from app.localmodel.prefix_cache import PinnedModel, PrefixCache, SlotPool
from app.serving import serve_in_thread
from tests.fake_openai import completion


class FakeLlama:
    """llama.cpp's server, as far as the cache uses it: chat, template, tokenize, slots."""

    def __init__(self, folder: Path, delay: float = 0.0):
        self.folder = folder
        self.delay = delay
        self.log: list[tuple] = []
        self.fail_restore = False
        self.busy: dict[int, int] = {}
        self.most_at_once = 0

    def app(self) -> Starlette:
        async def chat(request: Request) -> JSONResponse:
            body = await request.json()
            slot = body.get("id_slot")
            last = body["messages"][-1]
            # the prefix alone (a one-token request before a save), or a case's request
            kind = "prefix" if last["role"] == "system" and len(body["messages"]) == 1 \
                else "chat"
            self.log.append((kind, slot, last["content"]))
            self.busy[slot] = self.busy.get(slot, 0) + 1
            self.most_at_once = max(self.most_at_once, self.busy[slot])
            try:
                await asyncio.sleep(self.delay)
            finally:
                self.busy[slot] -= 1
            return JSONResponse(completion("ok"))

        async def template(request: Request) -> JSONResponse:
            body = await request.json()
            text = "".join(m["content"] for m in body["messages"]) + str(body.get("tools"))
            return JSONResponse({"prompt": f"<|system|>{text}"})

        async def tokenize(request: Request) -> JSONResponse:
            return JSONResponse({"tokens": [ord(c) for c in (await request.json())["content"]]})

        async def slots(request: Request) -> JSONResponse:
            action = request.query_params["action"]
            name = (await request.json())["filename"]
            slot = int(request.path_params["slot"])
            self.log.append((action, slot, name))
            if action == "save":
                (self.folder / name).write_bytes(b"kv" * 100)
            elif self.fail_restore or not (self.folder / name).is_file():
                return JSONResponse({"error": "failed to load slot"}, status_code=400)
            return JSONResponse({"id_slot": slot, "filename": name})

        return Starlette(routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/apply-template", template, methods=["POST"]),
            Route("/tokenize", tokenize, methods=["POST"]),
            Route("/slots/{slot}", slots, methods=["POST"])])


SYSTEM = {"role": "system", "content": "You are the lab's assistant."}


def pinned(base: str, folder: Path, slots: int = 1, max_bytes: int = 10**9) -> PinnedModel:
    """A model as one process makes it: its own slot pool and cache object."""
    inner = OpenAICompatModel("openai/local", api_base=f"{base}/v1", api_key=None,
                              timeout_s=10, retries=0)
    return PinnedModel(inner, base, SlotPool(slots), PrefixCache(folder, max_bytes), "sha-1")


def ask(text: str, system=SYSTEM) -> list[dict]:
    return [system, {"role": "system", "content": "page: /"}, {"role": "user", "content": text}]


async def test_a_prefix_is_saved_once_then_restored_in_a_new_process(tmp_path):
    fake = FakeLlama(tmp_path)
    with serve_in_thread(fake.app()) as base:
        first = pinned(base, tmp_path)
        await first.complete(ask("one"), [])
        await first.complete(ask("two"), [])
        second = pinned(base, tmp_path)  # a second run: new process, same files
        await second.complete(ask("three"), [])
    saved = [e for e in fake.log if e[0] == "save"]
    restored = [e for e in fake.log if e[0] == "restore"]
    name = first._cache.name(await first.key(ask("x"), []))
    assert len(saved) == 1 and saved[0][2].endswith(".tmp")  # written aside, then renamed
    assert [p.name for p in tmp_path.iterdir()] == [name]
    assert first._cache.saves == 1 and first._cache.hits == 0
    assert restored == [("restore", 0, name)] and second._cache.hits == 1
    # what was saved is the prefix alone: the one-token request right before the save
    at = fake.log.index(saved[0])
    assert fake.log[at - 1] == ("prefix", 0, SYSTEM["content"])
    assert [e for e in fake.log if e[0] == "chat"] == [("chat", 0, "one"), ("chat", 0, "two"),
                                                      ("chat", 0, "three")]
    assert fake.log.index(restored[0]) < fake.log.index(("chat", 0, "three"))


async def test_a_changed_prompt_gets_its_own_file_and_the_others_stay(tmp_path):
    fake = FakeLlama(tmp_path)
    with serve_in_thread(fake.app()) as base:
        model = pinned(base, tmp_path)
        await model.complete(ask("one"), [])
        other = {"role": "system", "content": "You are the lab's assistant. Be brief."}
        await model.complete(ask("two", other), [])
        await model.complete(ask("three"), [])  # back to the first: restored into the slot
        tools = [{"type": "function", "function": {"name": "t", "parameters": {}}}]
        await model.complete(ask("four"), tools)  # the tools are part of the prefix
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 3 and model._cache.saves == 3
    first = model._cache.name(await model.key(ask("x"), []))
    assert ("restore", 0, first) in fake.log and model._cache.hits == 1


async def test_concurrent_requests_take_different_slots(tmp_path):
    fake = FakeLlama(tmp_path, delay=0.3)
    with serve_in_thread(fake.app()) as base:
        model = pinned(base, tmp_path, slots=2)
        await asyncio.gather(*(model.complete(ask(str(i)), []) for i in range(4)))
    slots = [e[1] for e in fake.log if e[0] == "chat"]
    # Never two on one slot. Which slot each gets depends on when the others end: on a busy
    # machine a request can find slot 0 free again before slot 1 is taken ([0, 0, 0, 1]).
    assert len(slots) == 4 and set(slots) <= {0, 1} and fake.most_at_once == 1


def test_the_folder_is_kept_under_its_bound_least_recently_used_out(tmp_path):
    cache = PrefixCache(tmp_path, max_bytes=250)
    for n, name in enumerate(["old", "mid", "new"]):
        path = tmp_path / cache.name(name)
        path.write_bytes(b"x" * 100)
        os.utime(path, (1000 + n, 1000 + n))
    cache.touch("old")  # used just now: the middle one is the least recently used
    assert cache.evict() == [cache.name("mid")]
    assert cache.has("old") and cache.has("new") and not cache.has("mid")
    (tmp_path / cache.name("new")).unlink()  # removed by another process meanwhile
    assert PrefixCache(tmp_path, max_bytes=0).evict() == [cache.name("old")]


async def test_a_cache_failure_costs_time_never_the_request(tmp_path):
    fake = FakeLlama(tmp_path)
    with serve_in_thread(fake.app()) as base:
        await pinned(base, tmp_path).complete(ask("one"), [])
        fake.fail_restore = True
        model = pinned(base, tmp_path)
        reply = await model.complete(ask("two"), [])
        broken = PinnedModel(model.model, "http://127.0.0.1:9", SlotPool(1),
                             PrefixCache(tmp_path, 10**9), "sha-1")  # no server for keys
        reply_without_key = await broken.complete(ask("three"), [])
    assert reply.content == "ok" and reply_without_key.content == "ok"
    assert model._cache.hits == 0 and "restore slot 0" in model._cache.failures[0]
    assert model._pool.held[0] is not None  # the request itself filled the slot
    assert broken._cache.failures[0].startswith("prefix key:")


def test_a_pool_serves_one_event_loop_after_another():
    pool = SlotPool(1)

    async def use() -> int:
        slot = await pool.take("k")  # a loop that ends holding its slot
        return slot

    assert asyncio.run(use()) == 0
    assert asyncio.run(use()) == 0  # a later loop: the slot is free again, no loop error


def test_a_pool_keeps_a_conversations_slot_while_other_prefixes_come_and_go():
    pool = SlotPool(2)

    async def use(key: str) -> int:
        slot = await pool.take(key)
        pool.held[slot] = key
        await pool.give(slot)
        return slot

    async def conversation() -> list[int]:
        # the chat's turns, with the visitor and the judge in between: chat keeps slot 0,
        # the others share slot 1 (the slot released longest ago is the one reused)
        return [await use(k) for k in ("chat", "visitor", "chat", "judge", "chat", "visitor",
                                       "chat")]

    assert asyncio.run(conversation()) == [0, 1, 0, 1, 0, 1, 0]
