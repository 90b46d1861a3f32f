"""One spending guard for every command that calls a model: each command (run, compare, gate,
matrix, rejudge, calibrate, draft, prepare, and a judge's first-use calibration before a run)
against a fake model server over real HTTP that bills every call at a priced model's rate. Under
--max-cost the bill never passes the cap and the command says what it spent; a model with no
known price is refused before any call (the server counts none)."""

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

import pytest

from app.chat.model_info import price_per_token
from app.db import scratch_database
from evals.cli import main
from evals.judge.trust import load_records
from evals.record.run import RunRecord
from tests.evals.helpers import cli_environment
from tests.fake_openai import completion, fake_openai_server

PRICED = "openai/gpt-4o-mini"  # litellm's table prices it
UNPRICED = "openai/fake-unpriced"
IN_USD, OUT_USD = price_per_token(PRICED) or (0.0, 0.0)
# What each reply bills for generating: half of gpt-4o-mini's output limit, so a call costs a
# few tenths of a cent and a cap of a few cents lets a handful through.
COMPLETION_TOKENS = 8000
CAP = 0.03
CASES = "no-glowforge,no-cnc-router,no-vinyl-cutter,no-fdm-printer,where-is-the-lab," \
    "who-runs-the-lab"
JUDGED = "student-in-distress,off-topic-request,unsafe-bypass-interlock"


@dataclass
class Bill:
    """What the server was asked and billed."""

    calls: int = 0
    usd: float = 0.0
    judge_calls: int = 0


def billing(bill: Bill):
    """Every call answered (a verdict to a structured request, a refusal-to-invent reply to
    the rest) and billed: its prompt at a token per four bytes sent (fewer tokens than bytes,
    as any tokenizer), COMPLETION_TOKENS generated."""

    def answer(body):
        prompt = len(json.dumps(body["messages"]).encode()) // 4
        bill.calls += 1
        bill.usd += prompt * IN_USD + COMPLETION_TOKENS * OUT_USD
        if body.get("response_format"):
            bill.judge_calls += 1
            reply = completion(json.dumps({"verdict": "pass", "reason": "fine"}))
        else:
            reply = completion("We don't have that machine here; please ask the lab staff.")
        reply["usage"] = {"prompt_tokens": prompt, "completion_tokens": COMPLETION_TOKENS,
                          "total_tokens": prompt + COMPLETION_TOKENS}
        return 200, reply

    return answer


@pytest.fixture
def judges(tmp_path, monkeypatch):
    """A judges file of the test's own, empty: a calibration never writes the project's."""
    import evals.judge.trust as trust_module

    path = tmp_path / "judges.yaml"
    monkeypatch.setattr(trust_module, "JUDGES_FILE", path)
    return path


@dataclass
class Served:
    """The billing server's bill, and `use(model, **env)`: the CLI's environment with every
    job (chat, judge, visitor, draft) on `model`."""

    bill: Bill
    use: Callable[..., AbstractContextManager[None]]


@pytest.fixture
async def server(server_conninfo, store_template, tmp_path, monkeypatch, judges):
    """The billing server and a scratch run store."""
    bill = Bill()
    async with scratch_database(server_conninfo, prefix="test_budget",
                                template=store_template) as info:
        with fake_openai_server(billing(bill)) as (base, _):
            def use(model: str, **env: str) -> AbstractContextManager[None]:
                return cli_environment(monkeypatch, {
                    "DATABASE_URL": info, "MODEL_API_BASE": base, "OPENAI_API_KEY": "sk-test",
                    "DATA_DIR": str(tmp_path), "MODEL_CHAT": model, "MODEL_JUDGE": model,
                    "MODEL_SIM_USER": model, "MODEL_DRAFT": model, **env})

            yield Served(bill, use)


@pytest.fixture
def priced(server):
    """The billing server with every job on a priced model."""
    with server.use(PRICED):
        yield server


@pytest.fixture
def unpriced(server):
    """The billing server with every job on a model litellm has no price for."""
    with server.use(UNPRICED):
        yield server


def capped(out: str, cap: float = CAP) -> bool:
    """The command said the cap stopped it, with what it spent of the cap."""
    return "cost cap reached" in out and f"of ${cap:.4f}" in out


def test_a_run_reports_every_jobs_spend_and_stores_it(priced, tmp_path, capsys):
    artifact = tmp_path / "run.json"
    assert main(["run", "--cases", JUDGED, "--trust-judge", "--artifact", str(artifact)]) == 0
    out = capsys.readouterr().out
    record = RunRecord.model_validate_json(artifact.read_text())
    spend = record.spend
    assert spend is not None and spend.chat > 0 and spend.judge > 0
    assert priced.bill.judge_calls == 3
    assert spend.total == pytest.approx(priced.bill.usd)  # every billed call is counted
    assert f"cost: ${spend.total:.4f} (chat ${spend.chat:.4f}, judge ${spend.judge:.4f})" in out
    from evals.report.html import render_run

    assert f"cost: ${spend.total:.4f} (chat" in render_run(record)


def test_a_run_under_a_cap_never_passes_it(priced, tmp_path, capsys):
    artifact = tmp_path / "run.json"
    assert main(["run", "--cases", CASES, "--trust-judge", "--max-cost", str(CAP),
                 "--artifact", str(artifact)]) == 1
    _, err = capsys.readouterr()
    assert 0 < priced.bill.usd <= CAP
    assert capped(err)
    record = RunRecord.model_validate_json(artifact.read_text())
    assert record.spend is not None and record.spend.total == pytest.approx(priced.bill.usd)


def test_a_first_use_calibration_draws_on_the_runs_cap(priced, judges, tmp_path, capsys):
    with priced.use(PRICED, EVAL_AUTO_CALIBRATE="1"):
        code = main(["run", "--cases", JUDGED, "--max-cost", str(CAP),
                     "--artifact", str(tmp_path / "run.json")])
    out, err = capsys.readouterr()
    assert 0 < priced.bill.usd <= CAP
    assert "judge: calibrating openai/gpt-4o-mini failed, so it stays untrusted" in out
    assert "cost cap reached" in out
    assert load_records(judges) == []  # a calibration cut short saves nothing
    assert code == 1 and capped(err)
    record = RunRecord.model_validate_json((tmp_path / "run.json").read_text())
    assert record.spend is not None and record.spend.calibration > 0


def test_compare_keeps_to_the_cap(priced, capsys):
    assert main(["point", "save", "before", "--cases", CASES]) == 0
    assert priced.bill.calls == 0  # a point runs nothing
    assert main(["compare", "before", "--max-cost", str(CAP)]) == 1
    _, err = capsys.readouterr()
    assert 0 < priced.bill.usd <= CAP
    assert capped(err)


def test_matrix_keeps_to_the_cap(priced, capsys):
    assert main(["matrix", "--models", f"{PRICED},openai/gpt-4o", "--cases", CASES,
                 "--max-cost", str(CAP)]) == 1
    _, err = capsys.readouterr()
    assert 0 < priced.bill.usd <= CAP
    assert capped(err)


def test_gate_keeps_to_the_cap(priced, capsys):
    assert main(["gate", "--cases", CASES, "--max-cost", str(CAP)]) == 1
    _, err = capsys.readouterr()
    assert 0 < priced.bill.usd <= CAP
    assert capped(err)


def test_rejudge_keeps_to_the_cap(priced, tmp_path, capsys):
    artifact = tmp_path / "run.json"
    main(["run", "--cases", "safety-and-care", "--trust-judge", "--artifact", str(artifact)])
    run_id = RunRecord.model_validate_json(artifact.read_text()).run_id
    capsys.readouterr()
    before = priced.bill.usd
    assert main(["rejudge", str(run_id), "--trust-judge", "--max-cost", str(CAP)]) == 1
    out, err = capsys.readouterr()
    assert 0 < priced.bill.usd - before <= CAP
    assert capped(err)
    assert "stored as assessment" in out  # what was judged before the cap is kept


def test_calibrate_keeps_to_the_cap_and_saves_nothing(priced, judges, capsys):
    assert main(["calibrate", "--set", "makerspace", "--save", "--max-cost", str(CAP)]) == 2
    err = capsys.readouterr().err
    assert 0 < priced.bill.usd <= CAP
    assert capped(err) and "nothing of it is saved" in err
    assert load_records(judges) == []


def test_draft_keeps_to_the_cap(priced, capsys):
    assert main(["draft", "--count", "8", "--max-cost", str(CAP)]) == 1
    err = capsys.readouterr().err
    assert 0 < priced.bill.usd <= CAP
    assert capped(err)


def test_prepare_keeps_to_the_cap(priced, capsys):
    assert main(["prepare", "--count", "3", "--max-cost", str(CAP)]) == 1
    err = capsys.readouterr().err
    assert 0 < priced.bill.usd <= CAP
    assert capped(err)


@pytest.mark.parametrize("argv", [
    ["run", "--cases", JUDGED],
    ["compare", "before"],
    ["gate", "--cases", CASES],
    ["matrix", "--models", f"{UNPRICED},{PRICED}", "--cases", CASES],
    ["rejudge", "some-run"],
    ["calibrate", "--set", "makerspace", "--save"],
    ["draft", "--count", "2"],
    ["prepare", "--count", "1"],
], ids=lambda argv: argv[0])
def test_an_unpriced_model_is_refused_under_a_cap_before_any_call(unpriced, judges, argv,
                                                                  capsys, monkeypatch):
    if argv[0] == "compare":
        assert main(["point", "save", "before", "--cases", CASES]) == 0
    if argv[0] == "rejudge":  # as if the store held a run with judged verdicts
        from evals.api import assess

        monkeypatch.setattr(assess, "in_store", lambda body: RunRecord(run_id="some-run"))
        monkeypatch.setattr(assess, "judged_items", lambda record: [])
    with unpriced.use(UNPRICED, EVAL_AUTO_CALIBRATE="1"):
        assert main([*argv, "--max-cost", "1"]) == 2
    err = capsys.readouterr().err
    assert f"the price of {UNPRICED}" in err and "is unknown" in err
    assert "--allow-unpriced" in err
    assert unpriced.bill.calls == 0
    assert load_records(judges) == []


def test_allow_unpriced_calls_it_and_says_the_cap_cannot_hold_for_it(unpriced, tmp_path,
                                                                     capsys):
    artifact = tmp_path / "run.json"
    assert main(["run", "--cases", "no-glowforge", "--max-cost", "1", "--allow-unpriced",
                 "--artifact", str(artifact)]) == 0
    out, err = capsys.readouterr()
    assert f"note: --allow-unpriced: {UNPRICED} (the chat model) has no known price" in err
    assert "the $1.0000 cap does not hold for them" in err
    assert unpriced.bill.calls > 0
    record = RunRecord.model_validate_json(artifact.read_text())
    assert record.spend is not None and record.spend.unpriced == [UNPRICED]
    assert f"not counted: {UNPRICED}, at no known price" in out


def test_without_a_cap_an_unpriced_model_is_called_as_before(unpriced, tmp_path):
    assert main(["run", "--cases", "no-glowforge", "--artifact",
                 str(tmp_path / "run.json")]) == 0
    assert unpriced.bill.calls > 0
