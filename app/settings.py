"""One typed settings object for the app and the evals.

Every value comes from an environment variable of the same name (upper case); defaults are
the named constants below. Secrets are `SecretStr`, so they never show in a repr or a log.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# litellm fetches a model price map over the network at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = PROJECT_ROOT / ".data"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
# The embedded local model (served by llama.cpp on 127.0.0.1) is every job's default.
LOCAL_MODEL_ID = "local"
DEFAULT_MODEL_TIMEOUT_S = 120.0
DEFAULT_MODEL_RETRIES = 2
DEFAULT_MAX_TOOL_STEPS = 6
DEFAULT_MAX_PHOTO_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_PHOTOS = 6
# 50 megapixels: a 48 MP phone photo passes; a 9000 × 9000 image (81 MP, ~100 KB as a PNG)
# is refused from its header, before it is decoded.
DEFAULT_MAX_PHOTO_PIXELS = 50_000_000
DEFAULT_MAX_MESSAGE_CHARS = 8000
MODEL_JOBS = ("chat", "judge", "draft", "sim_user")
DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b-instruct"
# The embedded server's configuration: one slot, no speculative decoding, prefixes saved to disk
# (LOCAL_PREFIX_CACHE_MB). Measured on two cores against 2 and 4 slots, a shared KV cache,
# n-gram and draft-model speculation: none was faster, and prefill (~32 tokens/s, bound by the
# arithmetic) is most of the time. The figures: README, "Choosing the server's configuration".
DEFAULT_LOCAL_PARALLEL = 1
# Per slot: the system prompt and tool schemas (~1.8k tokens) plus a multi-step turn.
DEFAULT_LOCAL_CTX = 8192
# With a provider key and no MODEL_* override, that provider's model is the default.
HOSTED_DEFAULTS = (
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "openai/gpt-4.1-mini"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-flash"),
)


class Settings(BaseSettings):
    """Settings read from the environment (and nothing else)."""

    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    database_url: SecretStr | None = Field(default=None, description=(
        "The PostgreSQL server to use; unset, an embedded one in `DATA_DIR/pg`."))
    data_dir: Path = Field(default=DEFAULT_DATA_DIR, description=(
        "Where the embedded server, the model files, caches and logs live."))
    host: str = Field(default=DEFAULT_HOST, description="Where `make serve` listens.")
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535, description="Its port.")
    session_secret: SecretStr | None = Field(default=None, description=(
        "Signs session cookies and keys the pseudonymous references conversations and consent"
        " are kept under; unset, one made once in `DATA_DIR/session-secret` (mode 0600) and"
        " kept across restarts."))
    public_url: str | None = Field(default=None, description=(
        "The address people reach this server at (`https://lab.example`); the sign-in's"
        " callback is made from it, and an `https` address makes the cookies `Secure`."))
    # uvicorn trusts X-Forwarded-For and -Proto only from these addresses; unset, from none
    # (uvicorn's own default, 127.0.0.1, would let any local process claim https).
    forwarded_allow_ips: str | None = Field(default=None, description=(
        "The proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed (a comma"
        " list of addresses or networks); unset, nobody's."))

    model_chat: str | None = Field(default=None, description=(
        "The chat model (any litellm id, or `local`); unset, a provider's default when its"
        " key is set, else the embedded model."))
    model_judge: str | None = Field(default=None, description="The judge's model, likewise.")
    model_draft: str | None = Field(default=None, description=(
        "The model that drafts cases and scenarios, likewise."))
    model_sim_user: str | None = Field(default=None, description=(
        "The scenarios' simulated visitor, likewise."))
    # Base URL for an OpenAI-compatible endpoint (the embedded model sets it itself).
    model_api_base: str | None = Field(default=None, description=(
        "An OpenAI-compatible endpoint every model is called at."))
    model_timeout_s: float = Field(default=DEFAULT_MODEL_TIMEOUT_S, gt=0, description=(
        "Seconds a model call may take."))
    # The temperature of every model call that names none (the chat turns, the visitor):
    # unset, each provider's default; 0 makes the embedded model's runs repeatable.
    model_temperature: float | None = Field(default=None, ge=0, le=2, description=(
        "The temperature of every model call that names none (the chat turns, the visitor);"
        " unset, each provider's default; 0 makes the embedded model's runs repeatable (the"
        " judge is always at 0)."))
    model_retries: int = Field(default=DEFAULT_MODEL_RETRIES, ge=0, le=10, description=(
        "Tries after the first on a transient failure (429, 5xx, a timeout)."))
    max_tool_steps: int = Field(default=DEFAULT_MAX_TOOL_STEPS, ge=1, le=50, description=(
        "Tool rounds per turn."))

    # A file describing the lab's own catalogue; without it the built-in fixture is served.
    catalog_source: Path | None = Field(default=None, description=(
        "The lab's own catalogue file; unset, the fixture catalogue (the evals always use"
        " the fixture)."))
    # Where manual PDFs are stored, and the base URL they are served from (default: the
    # app's own /blobs route).
    blob_dir: Path | None = Field(default=None, description=(
        "Where manual PDFs are stored (unset: `DATA_DIR/blobs`)."))
    blob_base_url: str | None = Field(default=None, description=(
        "The base URL they are served from (unset: the app's own `/blobs`)."))

    # The embedded local model (used when no provider is configured); its server's URL is
    # set when the server is started here, or given to use one already running.
    local_model: str = Field(default=DEFAULT_LOCAL_MODEL, description=(
        "The embedded model (docs/local-model.md)."))
    local_model_url: str | None = Field(default=None, description=(
        "An already-running local model server to use instead of starting one (set by this"
        " process when it starts one)."))
    local_model_parallel: int = Field(default=DEFAULT_LOCAL_PARALLEL, ge=1, le=8,
                                      description="The embedded server's slots.")
    local_model_ctx: int = Field(default=DEFAULT_LOCAL_CTX, ge=2048, le=32768, description=(
        "Tokens per slot."))
    local_model_kv_unified: bool = Field(default=False, description=(
        "One KV cache shared by the slots (measured slower here with two slots)."))
    # Speculative decoding (measured in docs/local-model.md): "draft" (LOCAL_MODEL_DRAFT
    # proposes tokens), "ngram" (n-grams already in the context), or off.
    local_model_speculative: Literal["off", "draft", "ngram"] = Field(
        default="off", description=(
            "Speculative decoding: `ngram`, or `draft` with `LOCAL_MODEL_DRAFT` (its extra"
            " installed; turns the prefix files off). Neither was faster here."))
    local_model_draft: str = Field(default="qwen2.5-coder-0.5b-instruct", description=(
        "The draft model of `draft` speculation."))
    # Saved prompt prefixes of the embedded model (set when this process starts it) and the
    # bound on their folder (LOCAL_PREFIX_CACHE_MB).
    local_prefix_cache: str | None = Field(default=None, description=(
        "Set by this process when it starts the embedded model: where its prompt prefixes"
        " are saved."))
    local_model_sha: str = Field(default="", description=(
        "Set by this process when it starts the embedded model: its file's sha256."))
    local_prefix_cache_mb: int = Field(default=2048, ge=0, description=(
        "The bound on the saved prompt prefixes (`DATA_DIR/prefix-cache/`); 0 turns them"
        " off."))

    max_photo_bytes: int = Field(default=DEFAULT_MAX_PHOTO_BYTES, gt=0, description=(
        "A photo's largest size."))
    max_photos: int = Field(default=DEFAULT_MAX_PHOTOS, gt=0, description=(
        "Photos per message."))
    max_photo_pixels: int = Field(default=DEFAULT_MAX_PHOTO_PIXELS, gt=0, description=(
        "A photo's largest pixel count, refused from its header before it is decoded."))
    max_message_chars: int = Field(default=DEFAULT_MAX_MESSAGE_CHARS, gt=0, description=(
        "A message's length (both chat routes)."))

    # Sign-in. The demo sign-in (pick a role, no password) exists only with DEMO_SIGNIN=1.
    # Real sign-in is OpenID Connect against OIDC_ISSUER; roles come from STAFF_LIST.
    demo_signin: bool = Field(default=False, description=(
        "The demo sign-in: anyone picks any role (`make serve` turns it on)."))
    session_max_age_s: int = Field(default=12 * 3600, ge=60, description=(
        "How long a sign-in lasts."))
    # The host names this server answers to (a request naming another, as a DNS-rebinding
    # page would, is refused); the bind address and localhost are always allowed.
    allowed_hosts: list[str] = Field(default=[], description=(
        "Further host names the server answers to (a JSON list; loopback and `HOST` always)."))
    oidc_issuer: str | None = Field(default=None, description=(
        "The university's OpenID Connect provider (unset: no sign-in)."))
    oidc_client_id: str | None = Field(default=None, description="Its client id.")
    oidc_client_secret: SecretStr | None = Field(default=None, description=(
        "Its client secret."))
    staff_list: Path | None = Field(default=None, description=(
        "A YAML file of staff and super_admin e-mail addresses (unset: everyone is a"
        " student)."))
    # Some providers never send email_verified; only then may the lab say their addresses are
    # verified (OIDC_EMAIL_VERIFIED=1). Otherwise an address without email_verified: true is
    # refused.
    oidc_email_verified: bool = Field(default=False, description=(
        "Treat the provider's addresses as verified (for providers that never send"
        " `email_verified`)."))

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"expected an http:// or https:// address with a host name, got"
                             f" {value!r}")
        return value.rstrip("/")

    @property
    def secure_cookies(self) -> bool:
        """Cookies go only over TLS when people reach the server over https."""
        return bool(self.public_url and self.public_url.startswith("https://"))

    @property
    def max_body_bytes(self) -> int:
        """A chat request's largest body: its photos as base64 plus room for the text."""
        return self.max_photos * (self.max_photo_bytes * 4 // 3 + 1024) + 4 * 1024 * 1024

    def blob_root(self) -> Path:
        return self.blob_dir or self.data_dir / "blobs"

    def blob_base(self) -> str:
        return self.blob_base_url or f"http://{self.host}:{self.port}/blobs"

    def model_for(self, job: str) -> str:
        """The model id for a job: its env override, else a provider's default when its key
        is set, else the embedded local model."""
        if job not in MODEL_JOBS:
            raise ValueError(f"unknown model job {job!r}; expected one of {', '.join(MODEL_JOBS)}")
        explicit = getattr(self, f"model_{job}")
        if explicit:
            return str(explicit)
        if not self.model_api_base and not self.local_model_url:
            for key, model in HOSTED_DEFAULTS:
                if os.environ.get(key):
                    return model
        return LOCAL_MODEL_ID


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
