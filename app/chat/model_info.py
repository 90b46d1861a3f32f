"""What a model can take and what it costs, from litellm's model metadata.

litellm ships its model table as a JSON file beside its code. Reading that file directly gives
the same facts (vision, PDF input, prices) without importing litellm, which takes seconds: a
run on an OpenAI-compatible endpoint never pays for it.
"""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any

_TABLE = "model_prices_and_context_window_backup.json"


# How litellm lays the file out: one model a key at the top level, at the start of a line
# indented by four spaces (and, seen once, by none); the fields of an entry are further in.
_TOP_KEY = '\n{}{}: {{'
_TOP_INDENTS = (4, 0, 1, 2, 3)


@cache
def _text() -> str:
    spec = importlib.util.find_spec("litellm")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return "{}"
    try:
        return (Path(next(iter(spec.submodule_search_locations))) / _TABLE).read_text()
    except OSError:
        return "{}"


@cache
def _table() -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(_text())
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


@cache
def _entry(key: str) -> dict[str, Any] | None:
    """The table's entry under `key`, or None. Parsing the whole file (3.5 MB) took 24 ms of
    every run's start; laid out as litellm writes it, one entry is found and parsed alone.
    A file laid out otherwise, or an entry that is not an object, is read whole."""
    text = _text()
    if text.startswith('{\n    "'):
        for indent in _TOP_INDENTS:
            needle = _TOP_KEY.format(" " * indent, json.dumps(key))
            at = text.find(needle)
            if at >= 0:
                break
        else:
            return None
        try:
            entry, _ = json.JSONDecoder().raw_decode(text, at + len(needle) - 1)
        except json.JSONDecodeError:
            entry = None
        if isinstance(entry, dict):
            return entry
    found = _table().get(key)
    return found if isinstance(found, dict) else None


def info(model_id: str) -> dict[str, Any]:
    """litellm's entry for a model id (`provider/name` or `name`), or {} when it has none."""
    exact = _entry(model_id)
    if exact is not None:
        return exact
    provider, _, name = model_id.partition("/")
    entry = _entry(name) if name else None
    if entry and entry.get("litellm_provider", provider) in (provider, f"{provider}_chat",
                                                             "text-completion-openai"):
        return entry
    return {}


def supports_vision(model_id: str) -> bool:
    return bool(info(model_id).get("supports_vision"))


def supports_pdf(model_id: str) -> bool:
    return bool(info(model_id).get("supports_pdf_input"))


def price_per_token(model_id: str) -> tuple[float, float] | None:
    """(input, output) USD per token; None when the price is unknown (never 0 by default)."""
    entry = info(model_id)
    cin, cout = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if cin is None or cout is None:
        return None
    return float(cin), float(cout)
