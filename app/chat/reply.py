"""What a model answers, whichever transport brought it: text, tool calls, token usage and why
it ended.

A leaf: the transports (app/chat/openai_wire.py, the litellm one in app/chat/models.py) build
these, the text-tool-call adapter rewrites them, and the loop and the evals read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ToolCallRequest:
    id: str
    name: str
    arguments: str  # raw JSON text, as the model wrote it


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cut: int = 0  # replies the model ended at its token cap (finish_reason "length")
    # llama.cpp's own timings (the embedded model): prompt tokens taken from its cache, and
    # the milliseconds spent on the prompt (prefill) and on generating.
    cached_tokens: int = 0
    prefill_ms: int = 0
    generation_ms: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cut + other.cut,
            self.cached_tokens + other.cached_tokens,
            self.prefill_ms + other.prefill_ms,
            self.generation_ms + other.generation_ms,
        )


@dataclass(frozen=True)
class ModelReply:
    content: str | None
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    usage: Usage = Usage()
    # The provider's own reason the reply ended ("stop", "length", "tool_calls",
    # "content_filter", …), as it gave it; None when it gave none.
    finish_reason: str | None = None
