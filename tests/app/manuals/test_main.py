"""`python -m app.manuals ingest` end to end, each test on a fresh, empty database."""

from collections.abc import AsyncIterator

import psycopg
import pytest
from psycopg.rows import dict_row
from pydantic import SecretStr
from starlette.testclient import TestClient

import app.manuals.__main__ as cli
from app.db import scratch_database
from app.embed import HashEmbedder
from app.manuals import demo
from app.manuals.demo import DEMO_MANUALS
from app.settings import get_settings
from tests.app.manuals.pdfs import encrypted, pdf

LOCKED = ("error: locked.pdf: the PDF is password-protected; ingest a copy saved without"
          " the password")


@pytest.fixture
async def fresh(server_conninfo, tmp_path, monkeypatch) -> AsyncIterator[str]:
    """An empty database (never migrated or seeded) that the command's settings point at."""
    async with scratch_database(server_conninfo, prefix="test_ingest") as info:
        monkeypatch.setenv("DATABASE_URL", info)
        monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
        for name in ("CATALOG_SOURCE", "BLOB_DIR", "BLOB_BASE_URL"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setattr(cli, "default_embedder", HashEmbedder)
        get_settings.cache_clear()
        try:
            yield info
        finally:
            get_settings.cache_clear()


def _rows(conninfo: str, sql: str) -> list[dict]:
    with psycopg.connect(conninfo, row_factory=dict_row) as conn:
        return conn.execute(sql).fetchall()


def _titles(conninfo: str) -> set[str]:
    return {r["title"] for r in _rows(conninfo, "SELECT title FROM manuals")}


def test_ingest_on_a_fresh_database_seeds_it_and_finds_the_demo_machine(fresh, tmp_path,
                                                                          capsys):
    manual = tmp_path / "manual.pdf"
    manual.write_bytes(pdf("Resin tank care.", "Wash in iso\x00propyl alcohol."))
    assert cli.main(["ingest", str(manual), "--machine", "form-4"]) == 0
    out = capsys.readouterr().out
    assert "seeded the empty database as the app's start-up does: the demo catalogue" in out
    assert "demo manuals: Form 4 Manual, Trotec Speedy 400 SOP" in out
    assert "ingested Manual: 2 pages" in out
    assert "NUL and other control characters removed from the text of page 2" in out
    assert _titles(fresh) == {"Manual"} | {title for _, _, title in DEMO_MANUALS}

    assert cli.main(["ingest", str(manual), "--machine", "form-4", "--title", "Again"]) == 0
    out = capsys.readouterr().out
    assert "seeded" not in out and "ingested Again" in out
    assert [r["n"] for r in _rows(fresh, "SELECT count(*) AS n FROM machines")] == [2]


@pytest.fixture
async def served(server_conninfo) -> AsyncIterator[str]:
    """A second empty database, for the app to start on."""
    async with scratch_database(server_conninfo, prefix="test_served") as info:
        yield info


def test_the_command_leaves_the_database_as_the_app_start_up_does(
        fresh, served, tmp_path, settings, monkeypatch):
    import app.web.app as web

    manual = tmp_path / "manual.pdf"
    manual.write_bytes(pdf("Resin tank care."))
    assert cli.main(["ingest", str(manual), "--machine", "form-4"]) == 0
    monkeypatch.setattr(web, "default_embedder", HashEmbedder)
    with TestClient(web.create_app(settings.model_copy(
            update={"database_url": SecretStr(served), "data_dir": tmp_path / "served"}))):
        pass  # entering runs the app's start-up (lifespan) on `served`

    def counts(conninfo: str) -> dict[str, int]:
        tables = [r["tablename"] for r in _rows(
            conninfo, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        return {t: _rows(conninfo, f'SELECT count(*) AS n FROM "{t}"')[0]["n"]
                for t in tables if t not in ("manuals", "manual_pages", "passages")}

    assert counts(fresh) == counts(served)
    assert _titles(fresh) == _titles(served) | {"Manual"}


def test_a_password_protected_pdf_or_unknown_machine_is_an_error_line(fresh, tmp_path,
                                                                      capsys):
    locked = tmp_path / "locked.pdf"
    locked.write_bytes(encrypted(pdf("Secret."), user_password="secret"))
    opened = tmp_path / "print-locked.pdf"
    opened.write_bytes(encrypted(pdf("Printing is restricted."), user_password=""))
    assert cli.main(["ingest", str(locked), str(opened), "--machine", "form-4"]) == 1
    out, err = capsys.readouterr()
    assert "ingested Print Locked: 1 pages" in out
    assert err.splitlines() == [LOCKED]
    assert "Locked" not in _titles(fresh)

    assert cli.main(["ingest", str(opened), "--machine", "glowforge"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "error: print-locked.pdf: no machine with slug 'glowforge'"]


def test_a_lab_catalogue_is_seeded_without_the_demo_manuals(fresh, tmp_path, monkeypatch,
                                                             capsys):
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text("- slug: band-saw\n  name: Band saw\n  brand: Record\n  category: saw\n")
    monkeypatch.setenv("CATALOG_SOURCE", str(catalog))
    get_settings.cache_clear()
    manual = tmp_path / "band-saw.pdf"
    manual.write_bytes(pdf("Keep the blade guard low."))
    assert cli.main(["ingest", str(manual), "--machine", "band-saw"]) == 0
    out = capsys.readouterr().out
    assert f"the catalogue in CATALOG_SOURCE {catalog}" in out and "demo manuals" not in out
    assert _titles(fresh) == {"Band Saw"}


def test_a_bad_catalog_source_stops_the_command_before_anything_is_ingested(
        fresh, tmp_path, monkeypatch, capsys):
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text("- [unclosed\n")
    monkeypatch.setenv("CATALOG_SOURCE", str(catalog))
    get_settings.cache_clear()
    manual = tmp_path / "manual.pdf"
    manual.write_bytes(pdf("Text."))
    assert cli.main(["ingest", str(manual), "--machine", "form-4"]) == 2
    assert capsys.readouterr().err.startswith(f"error: CATALOG_SOURCE {catalog}: ")
    assert _rows(fresh, "SELECT count(*) AS n FROM machines")[0]["n"] == 0


def test_demo_manuals_that_fail_to_ingest_stop_the_command(fresh, tmp_path, monkeypatch,
                                                           capsys):
    monkeypatch.setattr(demo, "FIXTURE_DIR", tmp_path / "no-fixtures")
    manual = tmp_path / "manual.pdf"
    manual.write_bytes(pdf("Text."))
    assert cli.main(["ingest", str(manual), "--machine", "form-4"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: demo manuals failed to ingest: ")
    assert "form-4-manual.pdf" in err
    assert _titles(fresh) == set()
