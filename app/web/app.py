"""The Starlette application factory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from app.chat.models import ChatModel, model_for_job
from app.db import Database, resolve_conninfo
from app.db.leftovers import remove_leftovers_saying
from app.db.roles import APP_ROLE
from app.embed import default_embedder
from app.manuals import BlobStore, ManualLibrary, blob_app
from app.manuals.demo import seed_database, seed_manuals
from app.settings import Settings, get_settings
from app.web import auth, chat_api, openai_api, pages
from app.web.errors import ClientError, client_error_handler
from app.web.security import SecurityMiddleware
from app.web.sessions import session_secret


async def health(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


def allowed_hosts(settings: Settings) -> list[str]:
    return sorted({settings.host, "127.0.0.1", "localhost", "::1", "[::1]",
                   *settings.allowed_hosts})


def create_app(
    settings: Settings | None = None,
    *,
    db: Database | None = None,
    model: ChatModel | None = None,
    manuals: ManualLibrary | None = None,
) -> Starlette:
    """The app. Tests pass their own database and a scripted model; `make serve` passes none."""
    settings = settings or get_settings()
    secret = session_secret(settings)

    store = manuals.store if manuals is not None else BlobStore(
        settings.blob_root(), settings.blob_base()
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        own_db = db is None
        database = db
        if database is None:
            url = settings.database_url.get_secret_value() if settings.database_url else None
            conninfo = resolve_conninfo(url, settings.data_dir)
            await remove_leftovers_saying(conninfo)
            database = Database(conninfo, role=APP_ROLE)  # least privilege: app/db/roles.py
            await database.open()
        library = manuals
        if library is None:
            library = ManualLibrary(database, store, default_embedder())
        if own_db:
            await seed_database(library, settings)
        elif manuals is None:
            await seed_manuals(library)
        app.state.db = database
        app.state.manuals = library
        try:
            yield
        finally:
            if own_db:
                await database.close()

    def chat_model() -> ChatModel:
        return model if model is not None else model_for_job(settings, "chat")

    routes = [
        Route("/", pages.gallery),
        Route("/tools/{slug}", pages.tool_page),
        Route("/healthz", health),
        Route("/api/me", chat_api.me),
        Route("/api/session", chat_api.session_post, methods=["POST"]),
        Route("/api/consent", chat_api.consent, methods=["GET", "POST"]),
        Route("/auth/login", auth.login),
        Route("/auth/callback", auth.callback, name="auth_callback"),
        Route("/auth/logout", auth.logout, methods=["POST"]),
        Route("/api/chat", chat_api.chat, methods=["POST"]),
        Route("/api/proposals/{proposal_id}/{decision:str}", chat_api.proposal_decide,
              methods=["POST"]),
        Route("/v1/chat/completions", openai_api.completions, methods=["POST"]),
        Route("/v1/models", openai_api.models),
        Mount("/blobs", blob_app(store)),
        Mount("/static", StaticFiles(directory=pages.STATIC)),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[Middleware(SecurityMiddleware),
                    Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts(settings)),
                    # Strict: the cookie goes with no request another site starts (the
                    # sign-in's way back from the provider has a cookie of its own, auth.py);
                    # it lasts as long as a server session.
                    Middleware(SessionMiddleware, secret_key=secret.hex(), same_site="strict",
                               https_only=settings.secure_cookies,
                               max_age=settings.session_max_age_s)],
        exception_handlers={ClientError: client_error_handler},
    )
    app.state.settings = settings
    app.state.oidc = auth.oidc_client(settings)
    if db is not None:
        app.state.db = db
    app.state.manuals = manuals
    app.state.secret = secret
    app.state.chat_model = chat_model
    return app
