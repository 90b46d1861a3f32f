"""OpenAI-compatible endpoints spoken to directly: the embedded model, MODEL_API_BASE servers,
gateways and `openai/…` ids. One pooled aiohttp session per endpoint, explicit timeouts, and
the one retry policy (app/chat/retry.py). litellm is never imported on this path.

The wire format itself (a request's optional fields, a completion read as a ModelReply) is
here too: litellm takes and answers the same shape, so its transport uses these as well.

aiohttp rather than httpx here: measured on the runner bench (200 cases at 50 in flight),
httpx's connection pool cost about 7 ms of CPU per call, aiohttp's well under 1 ms. aiohttp
takes 0.11-0.14 s to import (measured), so it is imported on first use, or early on a thread
(warm_import), never with this module.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import aiohttp

from app.chat import text_tool_calls
from app.chat.declared import Declared
from app.chat.reply import ModelReply, ToolCallRequest, Usage
from app.chat.retry import ProviderError, call_with_retries, parse_retry_after
from app.chat.text_tool_calls import adapt
from app.text import storable

OPENAI_BASE = "https://api.openai.com/v1"
_CONNECT_TIMEOUT_S = 10.0
_sessions: dict[tuple[int, str, float, int], aiohttp.ClientSession] = {}


def warm_import() -> None:
    """Import the HTTP client (0.11-0.14 s, measured): called on a thread while a run's
    database is being prepared, so the first model call does not wait for it."""
    import aiohttp  # noqa: F401


def _session(base: str, timeout_s: float, pool: int) -> aiohttp.ClientSession:
    """One pooled session per event loop, endpoint and timeout, shared by every model on it."""
    import aiohttp  # on first use: see the module's docstring

    key = (id(asyncio.get_running_loop()), base, timeout_s, pool)
    session = _sessions.get(key)
    if session is None or session.closed:
        timeout = aiohttp.ClientTimeout(total=timeout_s,
                                        sock_connect=min(_CONNECT_TIMEOUT_S, timeout_s))
        session = aiohttp.ClientSession(
            timeout=timeout, connector=aiohttp.TCPConnector(limit=pool, limit_per_host=pool),
            trust_env=False)
        _sessions[key] = session
    return session


async def close_clients() -> None:
    """Close this event loop's pooled sessions (at the end of a run, before the loop ends)."""
    loop = id(asyncio.get_running_loop())
    for key in [k for k in _sessions if k[0] == loop]:
        await _sessions.pop(key).close()


def _classify(exc: BaseException) -> ProviderError:
    import aiohttp  # already imported by the call that failed

    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return ProviderError("timeout", f"timed out: {type(exc).__name__}")
    if isinstance(exc, aiohttp.ClientError | OSError):
        return ProviderError("connection", f"connection failed: {type(exc).__name__}: {exc}")
    return ProviderError("unreadable", f"{type(exc).__name__}: {exc}")


def _status_error(status: int, headers: Any, text: str) -> ProviderError:
    try:
        detail = json.loads(text).get("error", {})
        message = detail.get("message") if isinstance(detail, dict) else str(detail)
    except (json.JSONDecodeError, AttributeError, ValueError):
        message = text
    message = f"HTTP {status}: {(message or '').strip()[:300]}"
    after = parse_retry_after(headers.get("retry-after"))
    if status == 429:
        return ProviderError("rate_limit", message, status=status, retry_after_s=after)
    if status >= 500:
        return ProviderError("server", message, status=status, retry_after_s=after)
    return ProviderError("refused", message, status=status)


def request_options(tools: list[dict[str, Any]] | None, *, tool_choice: Any,
                    temperature: float | None, max_tokens: int | None,
                    response_format: dict[str, Any] | None) -> dict[str, Any]:
    """The optional fields of a chat request, in the OpenAI wire protocol (litellm takes the
    same names)."""
    options: dict[str, Any] = {}
    if tools:
        options["tools"] = tools
        if tool_choice is not None:
            options["tool_choice"] = tool_choice
    if temperature is not None:
        options["temperature"] = temperature
    if max_tokens is not None:
        options["max_tokens"] = max_tokens
    if response_format is not None:
        options["response_format"] = response_format
    return options


def adapter_version() -> str:
    """A hash of the text-tool-call adapter's code: a reply kept after it read the calls out
    of the text is kept under this, so a changed adapter reads them again."""
    global _ADAPTER
    if _ADAPTER is None:
        _ADAPTER = hashlib.sha256(Path(text_tool_calls.__file__).read_bytes()).hexdigest()[:16]
    return _ADAPTER


_ADAPTER: str | None = None


def adapted(reply: ModelReply, tools: list[dict[str, Any]] | None, tool_calls_in_content: bool
            ) -> ModelReply:
    """The embedded model writes its tool calls as text: read them as calls (it alone)."""
    return adapt(reply, tools) if tool_calls_in_content else reply


def reply_from_openai(data: dict[str, Any]) -> ModelReply:
    """A ModelReply from an OpenAI-format chat completion (as a plain dict); a body of any
    other shape is the provider's unreadable answer, never a crash."""
    try:
        return _reply(data)
    except (AttributeError, TypeError, ValueError) as exc:
        raise ProviderError("unreadable", f"the model's answer has an unexpected shape: {exc}"
                            ) from exc


def _reply(data: dict[str, Any]) -> ModelReply:
    choices = data.get("choices") or []
    if not choices:
        raise ProviderError("unreadable", "the model returned no choices")
    message = choices[0].get("message") or {}
    calls = []
    for i, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function") or {}
        args = fn.get("arguments")
        calls.append(
            ToolCallRequest(
                id=str(call.get("id") or f"call_{i}"),
                name=str(fn.get("name") or ""),
                arguments=args if isinstance(args, str) else json.dumps(args or {}),
            )
        )
    usage = data.get("usage") or {}
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise TypeError(f"content is {type(content).__name__}, not text")
    finish = choices[0].get("finish_reason")  # as given, as text: never a reason to lose a reply
    return ModelReply(
        content=storable(content),
        tool_calls=calls,
        usage=Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0),
                    int(finish == "length"), *_timings(data)),
        finish_reason=None if finish is None else str(finish),
    )


def _timings(data: dict[str, Any]) -> tuple[int, int, int]:
    """llama.cpp's `timings` (cached prompt tokens, prefill ms, generation ms); zeros from
    any other provider."""
    t = data.get("timings")
    if not isinstance(t, dict):
        return 0, 0, 0
    return (int(t.get("cache_n") or 0), int(float(t.get("prompt_ms") or 0)),
            int(float(t.get("predicted_ms") or 0)))


class OpenAICompatModel(Declared):
    """A chat model behind an OpenAI-compatible /chat/completions endpoint."""

    def __init__(self, model_id: str, *, api_base: str, api_key: str | None, timeout_s: float,
                 retries: int, tool_calls_in_content: bool = False,
                 max_tokens: int | None = None, pool: int = 256,
                 temperature: float | None = None, file_sha256: str | None = None,
                 server: dict[str, Any] | None = None) -> None:
        self.model_id = model_id
        # A model file served here: it is known by its checksum (and the server's settings
        # that change its replies), not by the port its server has this time.
        self._file_sha256 = file_sha256
        self._server = server or {}
        # The name the server knows the model by: "openai/gpt-4o" is "gpt-4o" there.
        self._wire_name = model_id.partition("/")[2] if model_id.startswith("openai/") \
            else model_id
        self._api_base = api_base
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout_s = timeout_s
        self._retries = retries
        self._tool_calls_in_content = tool_calls_in_content
        self._max_tokens = max_tokens
        self._temperature = temperature  # when a call names none (MODEL_TEMPERATURE)
        self._pool = pool
        # Told of every transient failure before it is retried (the runner adapts to 429s).
        self.on_retry: Callable[[BaseException], None] | None = None

    def __repr__(self) -> str:  # never show the key
        return f"OpenAICompatModel({self.model_id!r}, api_base={self._api_base!r})"

    @property
    def max_tokens(self) -> int | None:
        return self._max_tokens

    @property
    def api_base(self) -> str | None:
        return self._api_base

    def identity(self) -> dict[str, Any]:
        """What decides this model's replies beside the request (the call cache's key): never
        the key."""
        where: dict[str, Any] = {"file_sha256": self._file_sha256, **self._server} \
            if self._file_sha256 else {"api_base": self._api_base}
        return {"transport": "openai-wire", "model": self.model_id, **where,
                "max_tokens": self._max_tokens, "temperature": self._temperature,
                "text_tool_calls": adapter_version() if self._tool_calls_in_content else None}

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        temperature: float | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
        slot: int | None = None,
    ) -> ModelReply:
        """One completion; `slot` pins it to a llama.cpp slot (the embedded model only)."""
        import aiohttp  # on first use: see the module's docstring

        if temperature is None:
            temperature = self._temperature
        body = {"model": self._wire_name, "messages": messages, **request_options(
            tools, tool_choice=tool_choice, temperature=temperature,
            max_tokens=self._max_tokens, response_format=response_format)}
        if slot is not None:
            body["id_slot"] = slot
        session = _session(self._api_base, self._timeout_s, self._pool)
        url = self._api_base.rstrip("/") + "/chat/completions"

        async def post() -> Any:
            try:
                async with session.post(url, json=body, headers=self._headers) as response:
                    status, headers = response.status, response.headers
                    text = await response.text()
            except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                raise _classify(exc) from exc
            if status != 200:
                raise _status_error(status, headers, text)
            try:
                return json.loads(text)
            except (json.JSONDecodeError, ValueError) as exc:
                raise ProviderError("unreadable", "the response body is not JSON",
                                    status=200) from exc

        data = await call_with_retries(self.model_id, self._retries, self.on_retry, post)
        return adapted(reply_from_openai(data), tools, self._tool_calls_in_content)
