"""Assembling the embedded model from its part packages, verified against its pinned checksum."""

import hashlib

import pytest

from app.localmodel.assemble import ModelAssemblyError, ModelSpec, verify


def spec_for(data: bytes) -> ModelSpec:
    return ModelSpec("m", "m.gguf", "pkg", 1, len(data), hashlib.sha256(data).hexdigest())


def test_checksum_good_and_corrupted(tmp_path):
    data = b"GGUF" + bytes(range(256)) * 64
    good = tmp_path / "m.gguf"
    good.write_bytes(data)
    verify(good, spec_for(data))
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(data[:-1] + b"\x00")
    with pytest.raises(ModelAssemblyError, match="checksum mismatch"):
        verify(bad, spec_for(data))


def test_missing_part_package_says_what_to_do(tmp_path):
    from app.localmodel.assemble import assemble

    spec = ModelSpec("m", "m.gguf", "no_such_model_part_pkg", 2, 1, "x")
    with pytest.raises(ModelAssemblyError, match="run `make eval`"):
        assemble(spec, tmp_path, say=lambda s: None)


def test_a_missing_part_of_another_extra_names_that_extra(tmp_path):
    from app.localmodel.assemble import assemble

    spec = ModelSpec("m", "m.gguf", "no_such_model_part_pkg", 1, 1, "x", "local-model-small")
    with pytest.raises(ModelAssemblyError, match=r"pip install -e '\.\[local-model-small\]'"):
        assemble(spec, tmp_path, say=lambda s: None)
