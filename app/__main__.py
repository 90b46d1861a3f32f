"""`python -m app serve`: run the assistant's web app (127.0.0.1 unless HOST says otherwise)."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from types import FrameType
from typing import Any

import uvicorn

from app.localmodel import local_model_settings, uses_local_model
from app.localmodel.server import LocalModelError
from app.settings import Settings, get_settings
from app.web import create_app
from app.web.sessions import SessionSecretError

LOOPBACK = ("127.0.0.1", "localhost", "::1")
# On SIGTERM, answers under way get this long to finish (a model call can take minutes).
SHUTDOWN_GRACE_S = 10


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    # uvicorn shuts down gracefully on SIGTERM, then raises the signal again; with the default
    # action the process would die there, before the exit handlers that stop the embedded
    # PostgreSQL this process started. Exiting normally runs them.
    sys.exit(128 + signum)


def forwarded_options(settings: Settings) -> dict[str, Any]:
    """Whose X-Forwarded-For and -Proto uvicorn believes: FORWARDED_ALLOW_IPS only. Left to
    itself it would believe 127.0.0.1, so any process on the machine could claim to have
    come over https or from another address."""
    if not settings.forwarded_allow_ips:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": settings.forwarded_allow_ips}


def main(argv: list[str] | None = None) -> int:
    settings = get_settings()
    parser = argparse.ArgumentParser(prog="python -m app")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the chat app")
    serve.add_argument("--host", default=settings.host, help="bind address (env HOST)")
    serve.add_argument("--port", type=int, default=settings.port, help="port (env PORT)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("pgserver").setLevel(logging.WARNING)
    if args.command == "serve":
        settings = settings.model_copy(update={"host": args.host, "port": args.port})
        if settings.demo_signin:
            if args.host not in LOOPBACK:
                print(f"DEMO_SIGNIN=1 lets anyone pick any role: it is refused on {args.host};"
                      " serve the demo on 127.0.0.1", file=sys.stderr)
                return 2
            print("DEMO_SIGNIN=1: the demo sign-in is on — anyone can pick any role, staff and"
                  " director included. For a demo on this machine only.")
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
        try:
            with local_model_settings(settings, uses_local_model(settings)) as settings:
                print(f"chat model: {settings.model_for('chat')}"
                      + (f" at {settings.local_model_url}" if settings.local_model_url else ""))
                uvicorn.run(create_app(settings), host=args.host, port=args.port,
                            log_level="info",
                            timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
                            **forwarded_options(settings))
        except LocalModelError as exc:
            print(f"local model: {exc}")
            return 2
        except SessionSecretError as exc:
            print(f"session secret: {exc}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
