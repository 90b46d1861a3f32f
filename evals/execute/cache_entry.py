"""What the call cache keeps of a model call (evals/execute/cache.py says when and why): the
key, a hash of the model as resolved, the full request with the run's blob server written as
BLOB_MARK, and the sample index; and the entry, the reply as JSON with what the call cost and
took when it was made, read back into a reply. A request or reply holding a NUL, or anything
the run's records would redact, is not kept (`unkept`)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any

from app.chat.model_info import price_per_token
from app.chat.reply import ModelReply, ToolCallRequest, Usage
from app.redact import redact

# Bumped when what goes into a key, or what an entry holds, changes. 2: a reply is kept with
# the run's blob server written as a placeholder (before, a reply that cited a manual kept its
# run's own port, and replayed in a run served on another it cited a page no result held).
# 3: the placeholder is BLOB_MARK, which no text holds (version 2's was an address any text
# could hold, and a replay rewrote it); entries of version 2 are misses, made again once.
KEY_VERSION = 3
# The run's blob server as a key and a kept reply hold it, whatever port it has: NUL
# characters, which a request or reply that the cache keeps never holds (see the module's
# docstring), so it is told from any text.
NUL = "\x00"
BLOB_MARK = f"{NUL}blob-server{NUL}"
# The key of an entry's latency (ms), beside the reply's own. Not a version bump: an entry
# without it is replayed as before (its latency unknown), and a reader that knows no latency
# reads the reply without it.
LATENCY_KEY = "latency_ms"
# The key of what the call cost when it was made (USD, at that day's litellm price; None: the
# model had no price). A replay is counted at it, not at today's price.
COST_KEY = "cost_usd"


_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


def pinned(ident: dict[str, Any]) -> bool:
    """A model pinned by its file's checksum (a real sha256: an unpinned local model is
    known by its name): its entries never expire."""
    sha = ident.get("file_sha256")
    return isinstance(sha, str) and _SHA256.fullmatch(sha) is not None


def hashed(value: Any) -> str:
    """The sha256 of a value as canonical JSON (a key's, or a request's within a sample)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def request_of(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
               kw: dict[str, Any], blob_base: str | None = None) -> dict[str, Any]:
    """The request as its key sees it: `blob_base` (the run's blob server) as BLOB_MARK, in a
    copy (what is sent to the model is not changed). A request that holds a NUL has no key
    (`keyable`)."""
    request = {"messages": messages, "tools": tools or None,
               **{k: kw.get(k) for k in ("temperature", "tool_choice", "response_format")}}
    return replaced(request, blob_base.rstrip("/"), BLOB_MARK) if blob_base else request


def replaced(value: Any, old: str, new: str) -> Any:
    """`value` with `old` written as `new` in every string in it: the run's blob server as
    BLOB_MARK in a key or a kept reply, and BLOB_MARK as the replaying run's in a replay. A
    tool result is JSON text inside a message: the address is in it as it is (json.dumps
    escapes no character of an http URL), so a replacement in every string finds it."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {k: replaced(v, old, new) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [replaced(v, old, new) for v in value]
    return value


def strings(value: Any) -> Iterator[str]:
    """Every string in a request or a reply, its keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings(v)


def keyable(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
            kw: dict[str, Any]) -> bool:
    """Whether a request can have a key: it holds no NUL, so BLOB_MARK in its key is the run's
    blob server and nothing else."""
    return not any(NUL in s for s in strings([messages, tools, kw]))


def unkept(data: dict[str, Any], secrets: dict[str, str]) -> str | None:
    """Why a reply is not kept (it holds a NUL, or what redaction removes), or None."""
    texts = list(strings(data))
    if any(NUL in s for s in texts):
        return "nul"
    if any(redact(s, secrets) != s for s in texts):
        return "secret"
    return None


def call_key(ident: dict[str, Any], request: dict[str, Any], repetition: int, attempt: int,
             occurrence: int) -> str:
    """The cache key of one call."""
    return hashed({"v": KEY_VERSION, "model": ident, "request": request,
                  "sample": [repetition, attempt, occurrence]})


def reply_json(reply: ModelReply) -> dict[str, Any]:
    u = reply.usage
    return {"content": reply.content,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments}
                           for c in reply.tool_calls],
            "finish_reason": reply.finish_reason,  # the provider's own, never derived
            "usage": {"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
                      "cut": u.cut, "cached_tokens": u.cached_tokens,
                      "prefill_ms": u.prefill_ms, "generation_ms": u.generation_ms}}


def cost_of(data: dict[str, Any]) -> float | None:
    """What an entry's call cost when it was made; None when it recorded none."""
    cost = data.get(COST_KEY)
    if isinstance(cost, bool) or not isinstance(cost, int | float) or cost < 0 or \
            cost != cost:  # NaN
        return None
    return float(cost)


def call_cost(model_id: str, reply: Any) -> float | None:
    """A call's cost at the model's price today (litellm's data); None without a price."""
    prices = price_per_token(model_id)
    if prices is None:
        return None
    usage = reply.usage
    return float(usage.prompt_tokens * prices[0] + usage.completion_tokens * prices[1])


def latency_of(data: dict[str, Any]) -> int | None:
    """The latency (ms) an entry recorded of its call; None when it has none (or one that is not
    a whole number of ms: unknown, never a guess)."""
    ms = data.get(LATENCY_KEY)
    if isinstance(ms, bool) or not isinstance(ms, int) or ms < 0:
        return None
    return ms


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} is not text")
    return value


def _count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):  # bool: `cut` was once a flag
        raise TypeError(f"{what} is not a whole number")
    return value


def reply_from(data: dict[str, Any]) -> ModelReply:
    """A stored reply as the model gave it; ValueError on any other shape (nothing is coerced:
    an entry of another shape is a miss, never a different reply)."""
    try:
        content = data["content"]
        if content is not None:
            content = _text(content, "content")
        calls = [ToolCallRequest(_text(c["id"], "a tool call's id"),
                                 _text(c["name"], "a tool call's name"),
                                 _text(c["arguments"], "a tool call's arguments"))
                 for c in data["tool_calls"]]
        finish = data.get("finish_reason")
        if finish is not None:
            finish = _text(finish, "finish_reason")
        u = data["usage"]
        usage = Usage(*(_count(u[k], k) for k in ("prompt_tokens", "completion_tokens", "cut",
                                                  "cached_tokens", "prefill_ms",
                                                  "generation_ms")))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a stored reply: {exc}") from exc
    return ModelReply(content=content, tool_calls=calls, usage=usage, finish_reason=finish)
