"""The assertion vocabulary. Importing this package registers every kind."""

from evals.checks import citations, grounding, photos, text, tools  # noqa: F401
from evals.checks._registry import ASSERTIONS, Args, AssertionKind, Verdict, assertion

__all__ = ["ASSERTIONS", "Args", "AssertionKind", "Verdict", "assertion"]
