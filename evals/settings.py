"""Where the eval suite's files are."""

from __future__ import annotations

from pathlib import Path

from app.settings import PROJECT_ROOT

EVALS_DIR = Path(__file__).resolve().parent

__all__ = ["EVALS_DIR", "PROJECT_ROOT"]
