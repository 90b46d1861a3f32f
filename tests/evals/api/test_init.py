"""evals.api's names: each resolves to what docs/api.md says, imported on first use; the
options from the EVAL_ settings; a run's signal handling off the main thread."""

import asyncio
import threading

import evals.api as api
from evals.api.options import RunOptions
from evals.api.progress import stop_on_signals
from evals.record.repetitions import RepeatRule
from tests.evals.helpers import cli_environment


def test_every_exported_name_resolves_and_the_operations_are_functions():
    assert sorted(api.__all__) == sorted([*api._WHERE, *api._ELSEWHERE])
    for name in api.__all__:
        assert getattr(api, name) is not None
    for name in ("run", "resume", "rerun_failed", "compare", "compare_runs", "gate", "rescore",
                 "rejudge", "calibrate", "impact", "save_point", "list_points"):
        assert callable(getattr(api, name)) and not isinstance(getattr(api, name), type(api))
    from evals.api import impact  # a submodule of that name would shadow the function

    assert impact.__name__ == "what_changes"


def test_options_from_the_environment_are_make_evals_and_fields_go_over_them(monkeypatch):
    with cli_environment(monkeypatch, {"EVAL_MODEL": "openai/gpt-4o", "EVAL_REPEAT": "auto:3",
                                       "EVAL_CASES": "honest-absence", "EVAL_CACHE": "refresh"}):
        env = RunOptions.from_env(max_cost=2.0)
    assert env.model == "openai/gpt-4o" and env.cache == "refresh" and env.max_cost == 2.0
    assert env.rule == RepeatRule(max=3) and env.repeat == 3
    assert env.selection.names == ("honest-absence",)
    assert RunOptions().model is None and RunOptions().cache == "reuse"  # reads nothing


def test_signals_are_handled_on_the_main_thread_only():
    def in_a_thread() -> dict:
        async def body() -> dict:
            with stop_on_signals(asyncio.Event()) as got:
                return got
        return asyncio.run(body())

    seen: list = []
    worker = threading.Thread(target=lambda: seen.append(in_a_thread()))
    worker.start()
    worker.join(10)
    assert seen == [{}]  # no handler installed there, and no error
