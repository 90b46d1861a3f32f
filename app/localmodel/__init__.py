"""The embedded default model: a small GGUF model from PyPI packages, served by llama.cpp
(xllamacpp) on 127.0.0.1, so `make eval` and `make serve` run with no provider key."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from app.settings import LOCAL_MODEL_ID, Settings


def uses_local_model(settings: Settings, override: str | None = None) -> bool:
    """True when the chat model resolves to the embedded one and no server is given."""
    model = override or settings.model_for("chat")
    is_local = model == LOCAL_MODEL_ID or model.startswith(LOCAL_MODEL_ID + "/")
    return is_local and not settings.model_api_base


@contextmanager
def local_model_settings(settings: Settings, override: str | None = None,
                         say: object = print) -> Iterator[Settings]:
    """The settings to use: unchanged, or pointing at a local model server started here
    (and stopped when the block ends, however it ends)."""
    if not uses_local_model(settings, override):
        yield settings
        return
    from app.localmodel.server import local_model

    with local_model(settings.data_dir, settings.local_model,
                     parallel=settings.local_model_parallel, ctx=settings.local_model_ctx,
                     say=say) as server:  # type: ignore[arg-type]
        yield settings.model_copy(update={"model_api_base": server.base_url})
