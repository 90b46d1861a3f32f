"""Model calls by job, through litellm, with explicit timeouts and a retry policy."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from app.localmodel import is_local
from app.settings import Settings

RETRY_WAIT_MIN_S = 1.0
RETRY_WAIT_MAX_S = 20.0
# The embedded model's OpenAI-compatible server needs some key; it is not a secret.
LOCAL_API_KEY = "local-no-key"
# A small local model can ramble; an answer past this is cut (it costs ~30 s on 2 cores).
LOCAL_MAX_TOKENS = 768


@dataclass(frozen=True)
class ToolCallRequest:
    id: str
    name: str
    arguments: str  # raw JSON text, as the model wrote it


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclass(frozen=True)
class ModelReply:
    content: str | None
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    usage: Usage = Usage()


class ModelCallError(RuntimeError):
    """The provider failed (after retries, where the failure was transient)."""


class ChatModel(Protocol):
    """What the loop, the judge and the evals need of a model."""

    model_id: str

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        temperature: float | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> ModelReply: ...


@lru_cache(maxsize=64)
def _supports_pdf(model_id: str) -> bool:
    import litellm

    try:
        return bool(litellm.supports_pdf_input(model=model_id))
    except Exception:  # litellm raises for models it has no information on
        return False


@lru_cache(maxsize=64)
def supports_vision(model_id: str) -> bool:
    """Whether litellm's model information says the model takes image input (False for a
    model it has no information on, such as the embedded local one)."""
    import litellm

    try:
        return bool(litellm.supports_vision(model=model_id))
    except Exception:  # litellm raises for models it has no information on
        return False


@lru_cache(maxsize=64)
def price_per_token(model_id: str) -> tuple[float, float] | None:
    """(input, output) USD per token from litellm's price data; None when it has no price
    for the model (a local or unknown model: its cost is unknown, not zero)."""
    import litellm

    info = litellm.model_cost.get(model_id) or litellm.model_cost.get(
        model_id.partition("/")[2])
    if not info:
        return None
    cin, cout = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if cin is None or cout is None:
        return None
    return float(cin), float(cout)


def _transient(exc: BaseException) -> bool:
    import litellm

    return isinstance(
        exc,
        (
            litellm.exceptions.RateLimitError,
            litellm.exceptions.APIConnectionError,
            litellm.exceptions.Timeout,
            litellm.exceptions.ServiceUnavailableError,
            litellm.exceptions.InternalServerError,
            litellm.exceptions.BadGatewayError,
        ),
    )


class LiteLLMModel:
    """A model behind litellm (any provider id, or an OpenAI-compatible base URL)."""

    def __init__(
        self,
        model_id: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout_s: float,
        retries: int,
        tool_calls_in_content: bool = False,
        max_tokens: int | None = None,
    ) -> None:
        self.model_id = model_id
        # Only for the embedded local model: its tool calls arrive as text.
        self._tool_calls_in_content = tool_calls_in_content
        self._max_tokens = max_tokens
        self._api_base = api_base
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._retries = retries

    @property
    def accepts_pdf(self) -> bool:
        """Whether litellm knows this model to take PDF file parts."""
        return _supports_pdf(self.model_id)

    def __repr__(self) -> str:  # never show the key
        return f"LiteLLMModel({self.model_id!r}, api_base={self._api_base!r})"

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        temperature: float | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> ModelReply:
        import litellm  # slow to import; only paid when a real model is called

        litellm.suppress_debug_info = True  # no "Give Feedback" banners in our output
        kwargs: dict[str, Any] = {
            "model": self.model_id,
            "messages": messages,
            "timeout": self._timeout_s,
            # Ours is the only retry policy: neither litellm nor the provider SDK retries.
            "max_retries": 0,
            "num_retries": 0,
        }
        if tools:
            kwargs["tools"] = tools
            if tool_choice is not None:
                kwargs["tool_choice"] = tool_choice
        if temperature is not None:
            kwargs["temperature"] = temperature
        if self._max_tokens is not None:
            kwargs["max_tokens"] = self._max_tokens
        if response_format is not None:
            kwargs["response_format"] = response_format
        if self._api_base:
            kwargs["api_base"] = self._api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(self._retries + 1),
                wait=wait_exponential(min=RETRY_WAIT_MIN_S, max=RETRY_WAIT_MAX_S),
                retry=retry_if_exception(_transient),
                reraise=True,
            ):
                with attempt:
                    response = await litellm.acompletion(**kwargs)
        except Exception as exc:
            raise ModelCallError(f"{self.model_id}: {type(exc).__name__}: {exc}") from exc
        reply = reply_from_openai(response.model_dump() if hasattr(response, "model_dump")
                                  else dict(response))
        if self._tool_calls_in_content:
            from app.localmodel.adapter import adapt

            reply = adapt(reply, tools)
        return reply


def reply_from_openai(data: dict[str, Any]) -> ModelReply:
    """A ModelReply from an OpenAI-format chat completion (as a plain dict)."""
    choices = data.get("choices") or []
    if not choices:
        raise ModelCallError("the model returned no choices")
    message = choices[0].get("message") or {}
    calls = []
    for i, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function") or {}
        args = fn.get("arguments")
        calls.append(
            ToolCallRequest(
                id=call.get("id") or f"call_{i}",
                name=fn.get("name") or "",
                arguments=args if isinstance(args, str) else json.dumps(args or {}),
            )
        )
    usage = data.get("usage") or {}
    return ModelReply(
        content=message.get("content"),
        tool_calls=calls,
        usage=Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)),
    )


def model_for_job(settings: Settings, job: str, override: str | None = None) -> ChatModel:
    """The model for a job (chat, judge, draft, sim_user), honouring env overrides."""
    model_id = override or settings.model_for(job)
    if is_local(model_id):
        if not settings.local_model_url:
            raise ModelCallError(
                "no model configured: set MODEL_CHAT (any litellm model id), or run through"
                " `make eval` / `make serve`, which start the embedded local model"
            )
        return LiteLLMModel(
            "openai/" + (model_id.partition("/")[2] or settings.local_model),
            api_base=settings.local_model_url,
            api_key=LOCAL_API_KEY,
            timeout_s=settings.model_timeout_s,
            retries=settings.model_retries,
            tool_calls_in_content=True,
            max_tokens=LOCAL_MAX_TOKENS,
        )
    return LiteLLMModel(
        model_id,
        api_base=settings.model_api_base,
        timeout_s=settings.model_timeout_s,
        retries=settings.model_retries,
    )
