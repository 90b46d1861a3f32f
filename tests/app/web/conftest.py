"""The web app under test, on the test's database, with a scripted model."""

import httpx
import pytest

from app.settings import Settings
from app.web import create_app
from tests.fakes import ScriptedModel, say


def client_of(app) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


@pytest.fixture
def make(db, settings):
    def make(*steps, **overrides):
        model = ScriptedModel(*steps) if steps else ScriptedModel(say("ok"), repeat=True)
        app = create_app(Settings(**{**settings.model_dump(), **overrides}), db=db, model=model)
        return client_of(app), model
    return make


@pytest.fixture
def make_client(db, settings):
    """A client of the app with the demo sign-in on (these tests pick roles with it)."""
    def make(*steps, demo_signin=True, **kw):
        model = ScriptedModel(*steps, **kw)
        app = create_app(settings.model_copy(update={"demo_signin": demo_signin}), db=db,
                         model=model)
        return client_of(app), model
    return make
