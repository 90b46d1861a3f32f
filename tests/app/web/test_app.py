"""create_app: the host names the app answers to; the role it works as."""

import psycopg
import pytest
from pydantic import SecretStr
from starlette.testclient import TestClient

from app.db import scratch_database
from app.db.roles import APP_ROLE
from app.embed import HashEmbedder


async def test_a_request_for_another_host_name_is_refused(make):
    """A page whose name rebinds to 127.0.0.1 sends its own Host and a matching Origin."""
    client, model = make(demo_signin=True)
    async with client:
        r = await client.post("/api/session", json={"role": "super_admin"},
                              headers={"host": "rebind.attacker.example:8000",
                                       "origin": "http://rebind.attacker.example:8000"})
    assert r.status_code == 400 and model.requests == []


@pytest.fixture
async def own_database(server_conninfo, template_db):
    async with scratch_database(server_conninfo, prefix="test", template=template_db) as info:
        yield info


def test_the_app_on_its_own_database_works_as_the_app_role(own_database, settings,
                                                           monkeypatch):
    """Started with no database handed in, the app works as app/db/roles.py's app role: no
    statement of the web app can reach the run store or switch a trigger off."""
    import app.web.app as web

    monkeypatch.setattr(web, "default_embedder", HashEmbedder)
    app = web.create_app(settings.model_copy(update={"database_url": SecretStr(own_database)}))
    with TestClient(app):
        access = app.state.db.access
        assert access is not None and access.role == APP_ROLE and access.login == "role"
        with psycopg.connect(access.conninfo) as conn:
            assert conn.execute("SELECT current_user").fetchone() == (APP_ROLE,)
