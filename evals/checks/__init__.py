"""The check vocabulary: structural assertions and judged checks in one registry. Importing
this package registers every kind."""

from evals.checks import (  # noqa: F401
    citations,
    grounding,
    judged,
    photos,
    scenario,
    security,
    spend,
    text,
    tools,
)
from evals.checks._registry import (
    CHECKS,
    NO_ANSWER,
    About,
    Args,
    CheckKind,
    CheckSpec,
    Measured,
    NoArgs,
    Verdict,
    assertion,
    authored,
    authored_models,
    measure_checks,
    needs_evidence,
    run_checks,
    structural_only,
)

__all__ = ["CHECKS", "NO_ANSWER", "About", "Args", "CheckKind", "CheckSpec", "Measured",
           "NoArgs", "Verdict", "assertion", "authored", "authored_models", "measure_checks",
           "needs_evidence", "run_checks", "structural_only"]
