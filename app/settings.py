"""One typed settings object for the app and the evals.

Every value comes from an environment variable of the same name (upper case); defaults are
the named constants below. Secrets are `SecretStr`, so they never show in a repr or a log.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

# litellm fetches a model price map over the network at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = PROJECT_ROOT / ".data"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
# The embedded local model (served by llama.cpp on 127.0.0.1) is every job's default.
LOCAL_MODEL_ID = "local/qwen2.5-coder-1.5b-instruct"
DEFAULT_MODEL_TIMEOUT_S = 120.0
DEFAULT_MODEL_RETRIES = 2
DEFAULT_MAX_TOOL_STEPS = 6
DEFAULT_MAX_PHOTO_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_PHOTOS = 6
MODEL_JOBS = ("chat", "judge", "draft", "sim_user")


class Settings(BaseSettings):
    """Settings read from the environment (and nothing else)."""

    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    database_url: SecretStr | None = None
    data_dir: Path = DEFAULT_DATA_DIR
    host: str = DEFAULT_HOST
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535)
    session_secret: SecretStr | None = None

    model_chat: str | None = None
    model_judge: str | None = None
    model_draft: str | None = None
    model_sim_user: str | None = None
    # Base URL for an OpenAI-compatible endpoint (the embedded model sets it itself).
    model_api_base: str | None = None
    model_timeout_s: float = Field(default=DEFAULT_MODEL_TIMEOUT_S, gt=0)
    model_retries: int = Field(default=DEFAULT_MODEL_RETRIES, ge=0, le=10)
    max_tool_steps: int = Field(default=DEFAULT_MAX_TOOL_STEPS, ge=1, le=50)

    # A file describing the lab's own catalogue; without it the built-in fixture is served.
    catalog_source: Path | None = None
    # Where manual PDFs are stored, and the base URL they are served from (default: the
    # app's own /blobs route).
    blob_dir: Path | None = None
    blob_base_url: str | None = None

    max_photo_bytes: int = Field(default=DEFAULT_MAX_PHOTO_BYTES, gt=0)
    max_photos: int = Field(default=DEFAULT_MAX_PHOTOS, gt=0)

    def blob_root(self) -> Path:
        return self.blob_dir or self.data_dir / "blobs"

    def blob_base(self) -> str:
        return self.blob_base_url or f"http://{self.host}:{self.port}/blobs"

    def model_for(self, job: str) -> str:
        """The model id for a job: its env override, else the embedded local model."""
        if job not in MODEL_JOBS:
            raise ValueError(f"unknown model job {job!r}; expected one of {', '.join(MODEL_JOBS)}")
        return getattr(self, f"model_{job}") or LOCAL_MODEL_ID


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
