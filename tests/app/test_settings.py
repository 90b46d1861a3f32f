"""The one settings object: each job's default model, and values it refuses."""

import pytest

from app.localmodel import uses_local_model
from app.settings import Settings


def test_a_provider_key_picks_that_providers_default(monkeypatch):
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    assert Settings().model_for("chat") == "local"
    assert uses_local_model(Settings())
    assert not uses_local_model(Settings(), "openai/gpt-4.1-mini")
    assert not uses_local_model(Settings(local_model_url="http://127.0.0.1:9/v1"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert Settings().model_for("judge") == "openai/gpt-4.1-mini"
    assert Settings(model_chat="anthropic/claude-x").model_for("chat") == "anthropic/claude-x"


def test_an_unknown_speculative_mode_is_refused_by_the_settings(tmp_path):
    from pydantic import ValidationError

    from app.settings import Settings

    with pytest.raises(ValidationError, match="local_model_speculative"):
        Settings(data_dir=tmp_path, local_model_speculative="eagle")
