"""The embedded default model: a small GGUF model from PyPI packages, served by llama.cpp
(xllamacpp) on 127.0.0.1, so `make eval` and `make serve` run with no provider key."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from app.settings import LOCAL_MODEL_ID, Settings


def is_local(model_id: str) -> bool:
    return model_id == LOCAL_MODEL_ID or model_id.startswith(LOCAL_MODEL_ID + "/")


def uses_local_model(settings: Settings, override: str | None = None, job: str = "chat"
                     ) -> bool:
    """True when the job's model resolves to the embedded one and no server is running."""
    return is_local(override or settings.model_for(job)) and not settings.local_model_url


@contextmanager
def local_model_settings(settings: Settings, needed: bool, say: object = print
                         ) -> Iterator[Settings]:
    """The settings to use: unchanged, or pointing at a local model server started here
    (and stopped when the block ends, however it ends)."""
    if not needed or settings.local_model_url:
        yield settings
        return
    # The server's module (httpx, psutil, uvicorn) takes 0.25-0.3 s to import (measured after
    # app.chat.models, which imports this package for is_local): paid only to start a server.
    from app.localmodel.server import local_model

    with local_model(settings.data_dir, settings.local_model,
                     parallel=settings.local_model_parallel, ctx=settings.local_model_ctx,
                     say=say,  # type: ignore[arg-type]
                     kv_unified=settings.local_model_kv_unified,
                     speculative=settings.local_model_speculative,
                     draft=settings.local_model_draft) as server:
        yield settings.model_copy(update={
            "local_model_url": server.base_url,
            "local_prefix_cache": str(server.prefix_cache) if server.prefix_cache else None,
            "local_model_sha": server.model_sha})
