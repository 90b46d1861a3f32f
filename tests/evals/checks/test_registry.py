"""The check registry: every kind registered once, validated when it is registered; judged
kinds need the judge and are never named in a case's `assert:`."""

import pytest

from evals.checks import CHECKS, _registry
from evals.checks.judged import RubricArgs


def test_judged_checks_are_in_the_one_registry_once_and_need_the_judge():
    judged_kinds = {k for k, v in CHECKS.items() if v.needs_judge}
    assert judged_kinds == {"rubric", "criterion"}
    assert not any(CHECKS[k].authored for k in judged_kinds)  # built from a file's own keys

    async def ask(spec, transcript, judge, about):
        return None

    with pytest.raises(ValueError, match="registered twice"):
        _registry.judged("rubric", args=RubricArgs, label=lambda a: "judge")(ask)


def test_a_check_declares_what_it_needs_and_an_unknown_need_fails_at_registration():
    from evals.checks import CHECKS, NoArgs

    assert CHECKS["no_exfiltration"].needs == {"tool_calls"}
    assert CHECKS["citations_resolve"].needs_evidence
    assert CHECKS["not_claimed_done"].language(NoArgs()) == "en"
    assert CHECKS["called_tool"].names_tool and not CHECKS["mentions_tool"].names_tool

    def fn(turn, args, fixtures):
        return True, "ok"

    with pytest.raises(ValueError, match="unknown needs \\['telepathy'\\]"):
        _registry.assertion("reads_minds", needs=frozenset({"telepathy"}))(fn)  # type: ignore[arg-type]
    assert "reads_minds" not in CHECKS
