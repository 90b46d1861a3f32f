"""Model calls by job: one interface, two transports (OpenAI-compatible endpoints over the wire,
every other provider through litellm), explicit timeouts and one retry policy."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.chat.declared import ChatModel as ChatModel  # the seam, where callers look for it
from app.chat.declared import Declared
from app.chat.openai_wire import (
    OPENAI_BASE,
    OpenAICompatModel,
    adapted,
    reply_from_openai,
    request_options,
)
from app.chat.reply import ModelReply
from app.chat.retry import ModelCallError, ProviderError, call_with_retries, parse_retry_after
from app.localmodel import is_local
from app.settings import Settings

if TYPE_CHECKING:
    from app.localmodel.prefix_cache import PrefixCache

# The embedded model's OpenAI-compatible server needs some key; it is not a secret.
LOCAL_API_KEY = "local-no-key"
# A small local model can ramble; an answer past this is cut (it costs ~30 s on 2 cores).
LOCAL_MAX_TOKENS = 768




def _as_provider_error(exc: BaseException) -> ProviderError:
    """A litellm exception, classified like the wire transport's."""
    import litellm  # already imported by the call that raised (see LiteLLMModel.complete)

    status = getattr(exc, "status_code", None)
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    after = parse_retry_after(headers.get("retry-after")) if hasattr(headers, "get") else None
    e = litellm.exceptions
    if isinstance(exc, e.RateLimitError):
        kind = "rate_limit"
    elif isinstance(exc, e.Timeout):
        kind = "timeout"
    elif isinstance(exc, e.APIConnectionError):
        kind = "connection"
    elif isinstance(exc, e.ServiceUnavailableError | e.InternalServerError | e.BadGatewayError):
        kind = "server"
    else:
        kind = "refused"
    return ProviderError(kind, f"{type(exc).__name__}: {exc}", status=status,  # type: ignore[arg-type]
                         retry_after_s=after)


class LiteLLMModel(Declared):
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
        temperature: float | None = None,
    ) -> None:
        self.model_id = model_id
        self._temperature = temperature  # when a call names none (MODEL_TEMPERATURE)
        # Only for the embedded local model: its tool calls arrive as text.
        self._tool_calls_in_content = tool_calls_in_content
        self._max_tokens = max_tokens
        self._api_base = api_base
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._retries = retries
        # Told of every transient failure before it is retried (the runner adapts to 429s).
        self.on_retry: Callable[[BaseException], None] | None = None

    @property
    def max_tokens(self) -> int | None:
        return self._max_tokens

    @property
    def api_base(self) -> str | None:
        return self._api_base

    def identity(self) -> dict[str, Any]:
        """What decides this model's replies beside the request (the call cache's key): never
        the key."""
        return {"transport": "litellm", "model": self.model_id, "api_base": self._api_base,
                "max_tokens": self._max_tokens, "temperature": self._temperature}

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
        # About 3 s to import (measured: 2.9-3.3 s on 2 cores), so only a call to a litellm
        # provider pays it; the wire transport and model_info never import litellm.
        import litellm

        litellm.suppress_debug_info = True  # no "Give Feedback" banners in our output
        kwargs: dict[str, Any] = {
            "model": self.model_id,
            "messages": messages,
            "timeout": self._timeout_s,
            # Ours is the only retry policy: neither litellm nor the provider SDK retries.
            "max_retries": 0,
            "num_retries": 0,
        }
        if temperature is None:
            temperature = self._temperature
        kwargs.update(request_options(tools, tool_choice=tool_choice, temperature=temperature,
                                      max_tokens=self._max_tokens,
                                      response_format=response_format))
        if self._api_base:
            kwargs["api_base"] = self._api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key

        async def call() -> Any:
            try:
                return await litellm.acompletion(**kwargs)
            except ProviderError:
                raise
            except Exception as exc:
                raise _as_provider_error(exc) from exc

        response = await call_with_retries(self.model_id, self._retries, self.on_retry, call)
        reply = reply_from_openai(response.model_dump() if hasattr(response, "model_dump")
                                  else dict(response))
        return adapted(reply, tools, self._tool_calls_in_content)


PREFIX_CACHES: dict[str, PrefixCache] = {}


def prefix_cache(settings: Settings) -> PrefixCache:
    """The embedded model's prefix cache (one per folder, shared by every job's model)."""
    # prefix_cache imports aiohttp (0.11 s, measured), which the wire transport imports only
    # when first used (see openai_wire.warm_import): importing this module stays without it.
    from app.localmodel.prefix_cache import PrefixCache

    folder = str(settings.local_prefix_cache)
    if folder not in PREFIX_CACHES:
        PREFIX_CACHES[folder] = PrefixCache(Path(folder), settings.local_prefix_cache_mb << 20)
    return PREFIX_CACHES[folder]


def _pinned_identity(name: str) -> str | None:
    """The embedded model file's identity as the server gives it when started (its sha256,
    or its name if unpinned), for a model not started in this process."""
    from app.localmodel.assemble import MODELS

    spec = MODELS.get(name)
    return spec.identity if spec is not None else None


def model_id_for(settings: Settings, job: str, override: str | None = None) -> str:
    """The id the job's model goes by (its records name it so), without making its client:
    the embedded model as `openai/<its name>`, started or not."""
    model_id = override or settings.model_for(job)
    if is_local(model_id):
        return "openai/" + (model_id.partition("/")[2] or settings.local_model)
    return model_id


def model_for_job(settings: Settings, job: str, override: str | None = None) -> ChatModel:
    """The model for a job (chat, judge, draft, sim_user), honouring env overrides.
    OpenAI-compatible endpoints (the embedded model, MODEL_API_BASE, `openai/…`) are spoken
    to directly; every other provider goes through litellm."""
    model_id = override or settings.model_for(job)
    if is_local(model_id):
        if not settings.local_model_url:
            raise ModelCallError(
                "no model configured: set MODEL_CHAT (any litellm model id), or run through"
                " `make eval` / `make serve`, which start the embedded local model"
            )
        local = OpenAICompatModel(
            model_id_for(settings, job, override),
            api_base=settings.local_model_url,
            api_key=LOCAL_API_KEY,
            timeout_s=settings.model_timeout_s,
            retries=settings.model_retries,
            tool_calls_in_content=True,
            max_tokens=LOCAL_MAX_TOKENS,
            temperature=settings.model_temperature,
            # The file as started, else as pinned (the same before it is started: a plan
            # made without starting it, by `impact` or a Ray driver, names the same model).
            file_sha256=settings.local_model_sha or _pinned_identity(settings.local_model),
            # What the server is started with that changes a reply: the context per slot (a
            # long prompt is cut or refused by it) and speculative decoding.
            server={"ctx": settings.local_model_ctx,
                    "speculative": settings.local_model_speculative,
                    "draft": settings.local_model_draft
                    if settings.local_model_speculative == "draft" else None},
        )
        # With a draft model the prefix cache is off: llama.cpp restores a slot's cache but
        # not its draft model's, and the next request fails ("failed to process speculative
        # batch", measured).
        if not settings.local_prefix_cache or not settings.local_prefix_cache_mb or \
                settings.local_model_speculative == "draft":
            return local
        from app.localmodel.prefix_cache import PinnedModel, pool_for  # aiohttp: see above

        root = settings.local_model_url.rstrip("/").removesuffix("/v1")
        return PinnedModel(local, root, pool_for(root, settings.local_model_parallel),
                           prefix_cache(settings), settings.local_model_sha)
    if settings.model_api_base or model_id.startswith("openai/"):
        return OpenAICompatModel(
            model_id, api_base=settings.model_api_base or OPENAI_BASE,
            api_key=os.environ.get("OPENAI_API_KEY"), timeout_s=settings.model_timeout_s,
            retries=settings.model_retries, temperature=settings.model_temperature)
    return LiteLLMModel(
        model_id,
        api_base=settings.model_api_base,
        timeout_s=settings.model_timeout_s,
        retries=settings.model_retries,
        temperature=settings.model_temperature,
    )

