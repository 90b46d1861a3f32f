"""The embedded model's prompt prefixes, computed once and kept on disk.

Every request of an audience and page starts with the same long prefix: the system prompt
and the tool schemas (about 1,800 tokens for an anonymous visitor; 38 s of prefill on 2
cores). llama.cpp can save a slot's KV cache to a file and restore it into a slot later, in
another process (measured: 0.04 s to restore 1,812 tokens, then 0.6 s for the rest of the
prompt). So each request is pinned to a slot; when the slot holds another prefix and this
one's file exists, the file is restored first; after a request whose prefix had no file, the
prefix alone (no visitor's words) is saved. A second run with unchanged prompts computes none
of its prefixes.

A file is named by a hash of the prefix's exact tokens (the server's chat template applied to
the first system message and the tools, then tokenized) and lives in a folder named by the
model file's sha256, under the git-ignored data folder. A changed prompt gets a new name and
leaves the others valid; the folder is kept under a size bound, least recently used out.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp

SUFFIX = ".slot"
MAX_FAILURES = 20  # the first ones say what is wrong; the rest would only grow


class PrefixCache:
    """The files in one model's folder, bounded in size (least recently used out)."""

    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.hits = 0  # prefixes restored from disk
        self.saves = 0  # prefixes computed and saved
        self.failures: list[str] = []
        self.keys: dict[str, str] = {}  # prefix material -> key, for every model object

    def failed(self, what: str) -> None:
        if len(self.failures) < MAX_FAILURES:
            self.failures.append(what)

    def name(self, key: str) -> str:
        return key + SUFFIX

    def has(self, key: str) -> bool:
        return (self.folder / self.name(key)).is_file()

    def touch(self, key: str) -> None:
        try:
            os.utime(self.folder / self.name(key))
        except OSError:
            pass

    def evict(self) -> list[str]:
        """Remove the least recently used files until the folder is under its bound (a file
        another process removed meanwhile is simply gone)."""
        files = []
        for path in self.folder.glob(f"*{SUFFIX}"):
            try:
                stat = path.stat()
            except OSError:
                continue
            files.append((stat.st_mtime, stat.st_size, path))
        files.sort()
        total = sum(size for _, size, _ in files)
        removed = []
        for _, size, path in files:
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size
            removed.append(path.name)
        return removed


class SlotPool:
    """One server's slots, shared by every model object that talks to it (chat, judge,
    visitor): a request takes a free slot, preferring one that already holds its prefix."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.free = set(range(slots))
        self.held: dict[int, str | None] = {s: None for s in range(slots)}
        self.released: dict[int, int] = {s: 0 for s in range(slots)}  # when, in gives
        self._gives = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed: asyncio.Condition | None = None

    @property
    def changed(self) -> asyncio.Condition:
        """The condition, made on the running loop (a later asyncio.run in the same process
        gets its own; the requests of the loop before are gone, so every slot is free)."""
        loop = asyncio.get_running_loop()
        if self._changed is None or self._loop is not loop:
            self._loop, self._changed = loop, asyncio.Condition()
            self.free = set(range(self.slots))
        return self._changed

    async def take(self, key: str) -> int:
        """A free slot: one holding this prefix, else an empty one, else the one released
        longest ago (so a conversation's slot keeps its words while a judge or a visitor
        uses another)."""
        changed = self.changed
        async with changed:
            await changed.wait_for(lambda: bool(self.free))
            free = sorted(self.free)
            same = [s for s in free if self.held[s] == key]
            empty = [s for s in free if self.held[s] is None]
            slot = (same or empty or sorted(free, key=self.released.__getitem__))[0]
            self.free.discard(slot)
            return slot

    async def give(self, slot: int) -> None:
        changed = self.changed
        async with changed:
            self._gives += 1
            self.released[slot] = self._gives
            self.free.add(slot)
            changed.notify()


_POOLS: dict[str, SlotPool] = {}


def pool_for(root: str, slots: int) -> SlotPool:
    """The slot pool of the server at `root` (one per server, made on first use)."""
    if root not in _POOLS:
        _POOLS[root] = SlotPool(slots)
    return _POOLS[root]


class PinnedModel:
    """The embedded model with each request pinned to a slot whose prefix comes from disk
    when it can. It is a ChatModel: the same `complete` as the model it wraps, and what that
    model declares (app.chat.declared.Wrapping says the same for the wrappers above this
    floor, which this one may not import)."""

    def __init__(self, inner: Any, root: str, pool: SlotPool, cache: PrefixCache,
                 model_sha: str, post: Callable[..., Any] | None = None) -> None:
        self.model = inner
        self.model_id = inner.model_id
        self._root = root.rstrip("/")
        self._pool = pool
        self._cache = cache
        self._sha = model_sha
        self._keys: dict[str, str] = cache.keys
        self._post = post or _post

    @property
    def accepts_pdf(self) -> bool:
        return bool(self.model.accepts_pdf)

    @property
    def accepts_images(self) -> bool:
        return bool(self.model.accepts_images)

    @property
    def max_tokens(self) -> int | None:
        return self.model.max_tokens  # type: ignore[no-any-return]

    @property
    def api_base(self) -> str | None:
        return self.model.api_base  # type: ignore[no-any-return]

    @property
    def on_retry(self) -> Callable[[BaseException], None] | None:
        return self.model.on_retry  # type: ignore[no-any-return]

    @on_retry.setter
    def on_retry(self, listener: Callable[[BaseException], None] | None) -> None:
        self.model.on_retry = listener

    def identity(self) -> dict[str, Any]:
        return dict(self.model.identity())

    def price(self) -> tuple[float, float] | None:
        return self.model.price()  # type: ignore[no-any-return]

    async def key(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
                  ) -> str:
        """The hash of the prefix's exact tokens (and the model file), computed once per
        distinct prefix."""
        first = messages[0] if messages and messages[0].get("role") == "system" else None
        material = json.dumps([first, tools], sort_keys=True)
        if material not in self._keys:  # shared by every model object on this cache
            body: dict[str, Any] = {"messages": [first] if first else []}
            if tools:
                body["tools"] = tools
            prompt = (await self._post(f"{self._root}/apply-template", body))["prompt"]
            tokens = (await self._post(f"{self._root}/tokenize", {"content": prompt}))["tokens"]
            # the tools too, in case a template leaves them out of what it renders here
            digest = hashlib.sha256(json.dumps([self._sha, tokens, tools],
                                               sort_keys=True).encode()).hexdigest()
            self._keys[material] = digest[:32]
        return self._keys[material]

    async def complete(self, messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]] | None = None, **kw: Any) -> Any:
        """One request on a slot of its own. The cache only ever saves time: a restore or a
        save that fails is noted (`failures`) and the request goes on as it would without."""
        try:
            key = await self.key(messages, tools)
        except (OSError, RuntimeError, KeyError, ValueError, aiohttp.ClientError) as exc:
            self._cache.failed(f"prefix key: {exc}")
            return await self.model.complete(messages, tools, **kw)
        slot = await self._pool.take(key)
        try:
            if self._pool.held[slot] != key and self._cache.has(key):
                self._pool.held[slot] = None  # until the restore is known to have happened
                if await self._slot(slot, "restore", self._cache.name(key)):
                    self._cache.touch(key)
                    self._cache.hits += 1
            self._pool.held[slot] = None  # the request rewrites the slot, whatever happens
            reply = await self.model.complete(messages, tools, slot=slot, **kw)
            self._pool.held[slot] = key
            if not self._cache.has(key):
                await self._save(slot, key, messages, tools)
            return reply
        finally:
            await self._pool.give(slot)

    async def _save(self, slot: int, key: str, messages: list[dict[str, Any]],
                    tools: list[dict[str, Any]] | None) -> None:
        """Save the prefix alone: first the slot is brought back to the system message and
        tools (a one-token request; the rest is already there), so no visitor's words go to
        disk. Written under a temporary name, then renamed: a reader never sees half a file."""
        first = [messages[0]] if messages and messages[0].get("role") == "system" else []
        body: dict[str, Any] = {"messages": first, "max_tokens": 1, "id_slot": slot,
                                "temperature": 0}
        if tools:
            body["tools"] = tools
        temporary = f"{key}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
        try:
            await self._post(f"{self._root}/v1/chat/completions", body)
        except (OSError, RuntimeError, ValueError, aiohttp.ClientError) as exc:
            self._cache.failed(f"save slot {slot}: {exc}")
            return
        self._pool.held[slot] = key
        if not await self._slot(slot, "save", temporary):
            return
        try:
            os.replace(self._cache.folder / temporary, self._cache.folder / self._cache.name(key))
            self._cache.saves += 1
            await asyncio.to_thread(self._cache.evict)
        except OSError as exc:
            self._cache.failed(f"save slot {slot}: {exc}")
            (self._cache.folder / temporary).unlink(missing_ok=True)

    async def _slot(self, slot: int, action: str, filename: str) -> bool:
        try:
            await self._post(f"{self._root}/slots/{slot}?action={action}",
                             {"filename": filename})
            return True
        except (OSError, RuntimeError, ValueError, aiohttp.ClientError) as exc:
            self._cache.failed(f"{action} slot {slot}: {exc}")
            return False


async def _post(url: str, body: dict[str, Any]) -> Any:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as session:
        async with session.post(url, json=body) as response:
            text = await response.text()
            if response.status != 200:
                raise RuntimeError(f"{url}: HTTP {response.status}: {text[:200]}")
            return json.loads(text)
