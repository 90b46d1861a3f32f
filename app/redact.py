"""Secrets out of text that leaves the process: logs, reports, artifacts."""

from __future__ import annotations

import os
import re

SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|DATABASE_URL)", re.IGNORECASE)
# A credential in a header a provider may echo back, whether or not it is in the environment.
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")


def redact(text: str, env: dict[str, str] | None = None) -> str:
    """Replace the value of every secret-looking environment variable, wherever it appears,
    and any bearer or basic credential."""
    env = dict(os.environ) if env is None else env
    for name, value in env.items():
        if SECRET_NAME.search(name) and len(value) >= 6:
            text = text.replace(value, "[redacted]")
    return _BEARER.sub(lambda m: f"{m.group(1)} [redacted]", text)
