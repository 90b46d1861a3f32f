"""Secrets out of text that leaves the process: logs, reports, artifacts."""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from functools import lru_cache
from urllib.parse import urlsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict

SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|DATABASE_URL)", re.IGNORECASE)
# A credential in a header a provider may echo back, whether or not it is in the environment.
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")
# A quoted excerpt cut mid-secret keeps a piece of it: so many characters of a secret at an
# excerpt's edge are removed too (fewer are too short to tell from ordinary text).
FRAGMENT = 8
# A piece of a secret anywhere: so many of its letters and digits in a row, whatever separates
# them (a judge's paraphrase, a check's quote whose markup dropped the underscores, the
# catalogue search's note listing a request's words lowercased). Ten of a provider's random
# key is no word of ordinary text; nine or fewer of a long key give nothing away.
PIECE = 10
# A text as its pieces are sought in: its runs of ASCII letters and digits, and the characters
# no piece reaches across (a JSON string's end, an escape), so a redaction never joins or
# breaks JSON strings.
_RUN = re.compile(r'[A-Za-z0-9]+|["\\]')
_LETTERS = re.compile(r"[A-Za-z0-9]+")
_SKIPPED = re.compile(r'[^A-Za-z0-9"\\]+')
_BARRIERS = str.maketrans({'"': "\x00", "\\": "\x00"})
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
    it appears; any piece of one (8 characters or more) that starts or ends a quoted excerpt
    or the text; any PIECE of its letters and digits in a row anywhere, in any case and
    whatever separates them (an address's password only, not its scheme, host or port); and
    any bearer or basic credential."""
    secrets = list(secret_values(env).values())
    for value in secrets:
        text = text.replace(value, "[redacted]")
    spans = [span for value in secrets if len(value) > FRAGMENT
             for span in _fragments(text, value)]
    text = _replaced(text, spans)
    text = _replaced(text, _pieces(text, secrets))
    return _BEARER.sub(lambda m: f"{m.group(1)} [redacted]", text)


def _replaced(text: str, spans: list[tuple[int, int]]) -> str:
    for start, end in _merged(spans)[::-1]:
        text = text[:start] + "[redacted]" + text[end:]
    return text


def _secret_part(value: str) -> str:
    """What of a secret's value is secret: of a PostgreSQL address, as a URI or as libpq's
    key=value pairs, every value but where and as whom it connects (its folder's words are no
    secret, and a text that used them, "makerspace" said by the assistant of a checkout in
    /srv/makerspace, was redacted); of another address, its password (its scheme, user, host
    and port are in every message about it); else the whole value."""
    if value.startswith(_POSTGRES_SCHEMES) or ("://" not in value and "=" in value.strip("=")):
        try:  # a key's base64 padding ("abc=") is no conninfo; libpq knows every key it takes
            params = conninfo_to_dict(value)
        except (psycopg.Error, UnicodeError, ValueError):
            params = None
        if params is not None:
            return " ".join(str(v) for k, v in params.items()
                            if k not in _PUBLIC_CONNINFO and v)
    if "://" in value:
        try:
            return urlsplit(value).password or ""
        except ValueError:
            return value
    return value


_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
# What of a conninfo is in every message about it: where and as whom it connects.
_PUBLIC_CONNINFO = frozenset({"host", "hostaddr", "port", "dbname", "user", "application_name",
                              "sslmode", "connect_timeout", "options", "target_session_attrs"})


# Where a piece is looked for: ANCHOR letters of the secret every STEP of them. A piece of
# PIECE holds one whole (STEP + ANCHOR - 1 <= PIECE), so each hit is extended both ways and kept
# when it reaches PIECE: a few searches a secret instead of one per piece.
STEP, ANCHOR = 5, 6


@lru_cache(maxsize=16)
def _anchors(secrets: tuple[str, ...]) -> tuple[tuple[str, dict[str, list[int]]], ...]:
    """Each secret's letters and digits (lowercased, an address's password only), with its
    anchors and where in them each is."""
    out = []
    for value in secrets:
        letters = "".join(_LETTERS.findall(_secret_part(value))).lower()
        if len(letters) < PIECE:
            continue
        anchors: dict[str, list[int]] = {}
        for at in range(0, len(letters) - ANCHOR + 1, STEP):
            anchors.setdefault(letters[at:at + ANCHOR], []).append(at)
        out.append((letters, anchors))
    return tuple(out)


def _pieces(text: str, secrets: list[str]) -> list[tuple[int, int]]:
    """The spans of `text` made of PIECE or more letters and digits in a row (lowercased, other
    characters skipped, never across a quote or a backslash) that are a secret's, in order."""
    known = _anchors(tuple(secrets))
    if not known:
        return []
    # The text's letters and digits, lowercased, a NUL where a quote or backslash was (no
    # secret holds one): found by C loops, and mapped back to the text only when a piece is in
    # it.
    joined = _SKIPPED.sub("", text).translate(_BARRIERS).lower()
    covered: list[tuple[int, int]] = []
    for letters, anchors in known:
        for anchor, places in anchors.items():
            i = joined.find(anchor)
            while i >= 0:
                for at in places:  # as far as the text goes on as the secret does, both ways
                    left = 0
                    while at - left > 0 and i - left > 0 and \
                            joined[i - left - 1] == letters[at - left - 1]:
                        left += 1
                    right = ANCHOR
                    while at + right < len(letters) and i + right < len(joined) and \
                            joined[i + right] == letters[at + right]:
                        right += 1
                    if left + right >= PIECE:
                        covered.append((i - left, i + right))
                i = joined.find(anchor, i + 1)
    if not covered:
        return []
    begins: list[int] = []  # where each run begins in the skeleton, and in the text
    starts: list[int] = []
    size = 0
    for m in _RUN.finditer(text):
        begins.append(size)
        starts.append(m.start())
        size += len(m.group())

    def place(i: int) -> int:  # a skeleton index's place in the text
        r = bisect_right(begins, i) - 1
        return starts[r] + i - begins[r]

    return [(place(a), place(b - 1) + 1) for a, b in _merged(covered)]


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
