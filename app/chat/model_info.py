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


@cache
def _table() -> dict[str, dict[str, Any]]:
    spec = importlib.util.find_spec("litellm")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / _TABLE
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def info(model_id: str) -> dict[str, Any]:
    """litellm's entry for a model id (`provider/name` or `name`), or {} when it has none."""
    table = _table()
    if model_id in table:
        return table[model_id]
    provider, _, name = model_id.partition("/")
    entry = table.get(name) if name else None
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
