"""The matrix end to end: two models and a point on one plan, a real run store, a fake model
over HTTP that answers by model id; the cache makes a column run again cost nothing; stored
runs tabled again; what is refused."""

import pytest

from app.db import scratch_database
from evals.cli import main
from tests.evals.cli.helpers import ANSWER, SELECTION, change_fragment
from tests.evals.helpers import cli_environment
from tests.fake_openai import completion, fake_openai_server


def by_model(body):
    """`openai/mute` says nothing (the `answered` check fails), as does any model told to be
    brief; otherwise it answers."""
    brief = "Be brief." in body["messages"][0]["content"]
    return 200, completion("" if body["model"] == "mute" or brief else ANSWER["text"])


@pytest.fixture
async def two_models(server_conninfo, store_template, tmp_path, monkeypatch):
    async with scratch_database(server_conninfo, prefix="test_cli_matrix",
                                template=store_template) as info:
        with fake_openai_server(by_model) as (base, got):
            with cli_environment(monkeypatch, {
                    "DATABASE_URL": info, "MODEL_CHAT": "openai/fake-chat",
                    "MODEL_API_BASE": base, "OPENAI_API_KEY": "sk-test",
                    "DATA_DIR": str(tmp_path), "EVAL_CACHE": "reuse"}):
                yield got


def _calls(got):
    return sum(1 for _ in got)


def test_two_models_and_a_point_in_one_table(two_models, capsys, tmp_path):
    assert main(["point", "save", "before", *SELECTION]) == 0
    capsys.readouterr()
    page = tmp_path / "matrix.html"
    made = _calls(two_models)
    assert main(["matrix", "--models", "openai/fake-chat,openai/mute", "--points", "before",
                 "--html", str(page)]) == 0
    out = capsys.readouterr().out
    # 2 items × 3 versions, the mute model's failures retried once each; the point's agent
    # is today's on the same model, so its calls replay the first column's when those are
    # made first (the versions run interleaved).
    assert 6 <= _calls(two_models) - made <= 8
    header = next(line for line in out.splitlines() if line.startswith("item"))
    assert header.split() == ["item", "openai/fake-chat", "openai/mute", "before"]
    row = next(line for line in out.splitlines() if line.startswith("no-glowforge"))
    assert row.split() == ["no-glowforge", "PASS", "FAIL", "PASS"]
    assert "openai/fake-chat (baseline): openai/fake-chat · run " in out
    assert "openai/mute vs openai/fake-chat: 0 improved · 2 regressed" in out
    assert "regressed: no-cnc-router, no-glowforge" in out
    assert "before vs openai/fake-chat: 0 improved · 0 regressed · 2 unchanged" in out
    assert "replayed 0% of 4 calls" in out  # the mute one's, retries included
    html = page.read_text()
    assert "Matrix of 3 versions" in html and 'href="#c1-no-glowforge-r1"' in html
    assert 'id="c1-no-glowforge-r1"' in html  # the cell's evidence is on the page

    # The same matrix again: every call replays from the cache, so no model is called.
    made = _calls(two_models)
    assert main(["matrix", "--models", "openai/fake-chat,openai/mute", "--points", "before",
                 "--baseline", "before"]) == 0
    out = capsys.readouterr().out
    assert _calls(two_models) == made
    assert out.count("replayed 100% of 2 calls") == 2 and "replayed 100% of 4 calls" in out
    assert "before (baseline): point before (openai/fake-chat)" in out

    assert main(["runs"]) == 0
    ids = [line.split()[0] for line in capsys.readouterr().out.splitlines()][:3]
    assert main(["matrix", "--runs", ",".join(ids), "--baseline", ids[1][:8]]) == 0
    out = capsys.readouterr().out
    assert f"{ids[1]} (baseline)" in out and "regressed" in out  # a prefix names its run
    assert _calls(two_models) == made
    # A prefix of a run already asked for is that run again: refused, not paired with itself.
    assert main(["matrix", "--runs", f"{ids[0]},{ids[0][:-1]}"]) == 2
    assert f"run {ids[0]} is asked for twice" in capsys.readouterr().err


@pytest.mark.usefixtures("two_models")
def test_what_a_matrix_refuses(capsys, monkeypatch):
    assert main(["matrix", "--models", "openai/fake-chat", *SELECTION]) == 2
    assert "at least two versions" in capsys.readouterr().err
    assert main(["matrix", "--models", "openai/a,openai/a", *SELECTION]) == 2
    assert "asked for twice: openai/a" in capsys.readouterr().err
    assert main(["matrix", "--models", "openai/a,openai/b", "--baseline", "openai/c",
                 *SELECTION]) == 2
    assert "the baseline openai/c is not one of the columns" in capsys.readouterr().err
    assert main(["matrix", "--model", "openai/a", "--models", "openai/b,openai/c"]) == 2
    assert "not --model" in capsys.readouterr().err
    assert main(["matrix", "--runs", "a,b", "--models", "openai/c"]) == 2
    assert "takes no --models" in capsys.readouterr().err
    assert main(["matrix", "--points", "p,q", "--cases", "no-glowforge", "--full"]) == 2
    assert "--cases, --full would change it" in capsys.readouterr().err
    assert main(["matrix", "--models", "openai/a,openai/b", "--html", "/no/such/dir/m.html"]) \
        == 2  # said before any model is called
    assert "no folder /no/such/dir to write it in" in capsys.readouterr().err
    # A point of another plan is refused before anything runs.
    assert main(["point", "save", "other", "--cases", "no-glowforge"]) == 0
    capsys.readouterr()
    assert main(["point", "save", "both", *SELECTION]) == 0
    capsys.readouterr()
    assert main(["matrix", "--points", "other,both"]) == 2
    assert "froze different plans" in capsys.readouterr().err
    import evals.load.plan as plan_module
    monkeypatch.setattr(plan_module, "HARNESS_VERSION", "changed-for-the-test")
    assert main(["matrix", "--models", "openai/fake-chat", "--points", "both"]) == 2
    err = capsys.readouterr().err
    assert "the plan changed since point both" in err and "harness changed" in err


@pytest.mark.usefixtures("two_models")
def test_a_prompt_change_shows_as_its_own_column(capsys):
    """Two prompt variants, each a point: today's agent, and today's told to be brief (which
    the fake model answers with nothing)."""
    assert main(["point", "save", "v1", *SELECTION]) == 0
    with pytest.MonkeyPatch.context() as changed:
        change_fragment(changed)
        assert main(["point", "save", "v2", *SELECTION]) == 0
    capsys.readouterr()
    assert main(["matrix", "--points", "v1,v2", "--models", "openai/fake-chat",
                 "--baseline", "v1"]) == 0
    out = capsys.readouterr().out
    assert "v2 vs v1: 0 improved · 2 regressed" in out
    assert "openai/fake-chat vs v1: 0 improved · 0 regressed · 2 unchanged" in out
