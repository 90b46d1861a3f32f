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


def test_a_check_loads_only_the_models_it_reads_with(monkeypatch):
    """Start-up pays for a model only when a check of the run reads with it: a check that
    reads no words loads neither the English parse (spaCy, 0.65 s) nor a language model; one
    of English literals the quick language models alone; one that reads sentences the parse."""
    from evals.checks import _language, _parse
    from tests.evals.checks.helpers import check

    loaded: list[str] = []
    for module, name in ((_parse, "nlp"), (_language, "_quick"), (_language, "_detector")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda real=real, name=name: (
            loaded.append(name), real())[1])
    # A sentence no other test reads: its parse and reading are in no cache yet.
    answer = "The Form 4 resin printer stands by the west door of the Engineering Library."

    assert check("mentions_tool", answer, value="Form 4")[0] is True
    assert loaded == []
    assert check("contains_all", answer, value=["Engineering Library"])[0] is True
    assert set(loaded) == {"_quick"}
    assert check("no_unknown_tools", answer)[0] is True
    assert "nlp" in loaded and "_detector" not in loaded
