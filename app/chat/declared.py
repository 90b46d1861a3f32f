"""The chat model's seam (ChatModel, which app/chat/models.py makes by job) and what a model
declares of itself: whether it takes PDFs and images, the reply cap it is called with, where
it is served, what decides its replies besides the request, its price. Callers read these;
none probes a model for them.

`Declared` gives a model that knows no better its declarations from its id (litellm's model
information); `Wrapping` gives a model that wraps another (a guard, the call cache, a pinned
local model) the inner model's, so a wrapper is a ChatModel like the model it wraps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from app.chat import model_info
from app.chat.reply import ModelReply

Retried = Callable[[BaseException], None]


class ChatModel(Protocol):
    """What the loop, the judge and the evals need of a model: its calls, and what it declares
    of itself (app/chat/declared.py), which callers read and never probe for."""

    model_id: str

    @property
    def on_retry(self) -> Callable[[BaseException], None] | None:
        """Told of every transient failure before it is retried."""
        ...

    @on_retry.setter
    def on_retry(self, listener: Callable[[BaseException], None] | None) -> None: ...

    @property
    def accepts_pdf(self) -> bool:
        """It takes PDF file parts (a manual's pages attached as they are)."""
        ...

    @property
    def accepts_images(self) -> bool:
        """It takes image input (a visitor's photo)."""
        ...

    @property
    def max_tokens(self) -> int | None:
        """The reply cap it is called with (None: the provider's own)."""
        ...

    @property
    def api_base(self) -> str | None:
        """The address it is served at, when one is configured."""
        ...

    def identity(self) -> dict[str, Any]:
        """What decides its replies beside the request (the call cache's key): never a key."""
        ...

    def price(self) -> tuple[float, float] | None:
        """(input, output) USD per token; None when unknown (a local model's), never zero."""
        ...

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        temperature: float | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> ModelReply: ...


class Declared:
    """Declarations from the model's id: PDFs and images as litellm knows the model, no reply
    cap, served nowhere in particular, its id as its identity, litellm's price (None: unknown,
    not zero)."""

    model_id: str
    # Told of every transient failure before it is retried (the runner adapts to 429s).
    on_retry: Retried | None = None

    @property
    def accepts_pdf(self) -> bool:
        return model_info.supports_pdf(self.model_id)

    @property
    def accepts_images(self) -> bool:
        return model_info.supports_vision(self.model_id)

    @property
    def max_tokens(self) -> int | None:
        return None

    @property
    def api_base(self) -> str | None:
        return None

    def identity(self) -> dict[str, Any]:
        """What decides the model's replies beside the request (the call cache's key)."""
        return {"model": self.model_id}

    def price(self) -> tuple[float, float] | None:
        """(input, output) USD per token; None when unknown."""
        return model_info.price_per_token(self.model_id)


class Wrapping:
    """A model around another (`model`): it declares what the model it wraps declares, and
    hears of that model's retries."""

    model: ChatModel
    model_id: str

    @property
    def accepts_pdf(self) -> bool:
        return self.model.accepts_pdf

    @property
    def accepts_images(self) -> bool:
        return self.model.accepts_images

    @property
    def max_tokens(self) -> int | None:
        return self.model.max_tokens

    @property
    def api_base(self) -> str | None:
        return self.model.api_base

    @property
    def on_retry(self) -> Retried | None:
        return self.model.on_retry

    @on_retry.setter
    def on_retry(self, listener: Retried | None) -> None:
        self.model.on_retry = listener

    def identity(self) -> dict[str, Any]:
        return self.model.identity()

    def price(self) -> tuple[float, float] | None:
        return self.model.price()
