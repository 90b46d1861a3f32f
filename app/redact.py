"""Secrets out of text that leaves the process: logs, reports, artifacts."""

from __future__ import annotations

import os
import re

SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|DATABASE_URL)", re.IGNORECASE)
# A credential in a header a provider may echo back, whether or not it is in the environment.
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")
# A quoted excerpt cut mid-secret keeps a piece of it: so many characters of a secret at an
# excerpt's edge are removed too (fewer are too short to tell from ordinary text).
FRAGMENT = 8
# Where an excerpt begins or ends: a quote, or the ellipsis that marks a cut; as written, and
# as JSON with ASCII escapes writes them (the MCP answers).
_OPENS = ("“", "‘", "«", '"', "'", "…", "...", "\\u201c", "\\u2018", "\\u2026", '\\"')
_CLOSES = ("”", "’", "»", '"', "'", "…", "...", "\\u201d", "\\u2019", "\\u2026", '\\"')


def secret_values(env: dict[str, str] | None = None) -> dict[str, str]:
    """The secret-looking variables of the environment (or of `env`): what `redact` removes.
    Reading them takes longer than redacting a short text, so a caller redacting many texts
    at once reads them once and hands them in."""
    env = dict(os.environ) if env is None else env
    return {name: value for name, value in env.items()
            if SECRET_NAME.search(name) and len(value) >= 6}


def redact(text: str, env: dict[str, str] | None = None) -> str:
    """Replace the value of every secret-looking environment variable (or of `env`), wherever
    it appears, any piece of one (8 characters or more) that starts or ends a quoted excerpt
    or the text, and any bearer or basic credential."""
    secrets = list(secret_values(env).values())
    for value in secrets:
        text = text.replace(value, "[redacted]")
    spans = [span for value in secrets if len(value) > FRAGMENT
             for span in _fragments(text, value)]
    for start, end in _merged(spans)[::-1]:
        text = text[:start] + "[redacted]" + text[end:]
    return _BEARER.sub(lambda m: f"{m.group(1)} [redacted]", text)


def _fragments(text: str, secret: str) -> list[tuple[int, int]]:
    """The spans of `text` that are a secret's head cut at an excerpt's end, or its tail
    cut at an excerpt's start (the whole secret is already gone)."""
    found = []
    head, tail = secret[:FRAGMENT], secret[-FRAGMENT:]
    at = text.find(head)
    while at >= 0:  # a head: as much of the secret as follows, up to an excerpt's end
        n = FRAGMENT
        while n < len(secret) and at + n < len(text) and text[at + n] == secret[n]:
            n += 1
        if at + n == len(text) or text.startswith(_CLOSES, at + n):
            found.append((at, at + n))
        at = text.find(head, at + 1)
    at = text.find(tail)
    while at >= 0:  # a tail: as much of the secret as precedes, from an excerpt's start
        end, n = at + FRAGMENT, FRAGMENT
        while n < len(secret) and end - n > 0 and text[end - n - 1] == secret[-n - 1]:
            n += 1
        if end - n == 0 or text.endswith(_OPENS, 0, end - n):
            found.append((end - n, end))
        at = text.find(tail, at + 1)
    return found


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
