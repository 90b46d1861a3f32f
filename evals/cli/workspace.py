"""`python -m evals workspace`: run, read and author evals in the browser (127.0.0.1)."""

from __future__ import annotations

import argparse
import secrets
from pathlib import Path

from evals.api.setup import app_settings, run_closing
from evals.cli.common import Commands
from evals.execute.env import clean_stale
from evals.settings import conninfo, eval_settings


def register(sub: Commands) -> None:
    ws = sub.add_parser("workspace", help="run, read and author evals in the browser")
    ws.add_argument("--port", type=int, default=eval_settings().workspace_port,
                    help="the port on 127.0.0.1 (EVAL_WORKSPACE_PORT, default 8010)")
    ws.set_defaults(handler=workspace)


def workspace(args: argparse.Namespace) -> int:
    """Serve the workspace on 127.0.0.1 until Ctrl-C."""
    # Imported here: the workspace and its web server take 0.6 s to import (python -X
    # importtime), which no other command should pay.
    import uvicorn

    from evals.workspace import create_workspace
    from evals.workspace.launch import Launcher

    settings = app_settings()
    server = conninfo(settings)
    for name in run_closing(clean_stale(server)):
        print(f"removed {name}, left by an eval run whose process is gone")
    token = secrets.token_urlsafe(24)
    launcher = Launcher(artifacts=Path(settings.data_dir) / "workspace-runs")
    app = create_workspace(server, token, launcher=launcher)
    print(f"workspace: http://127.0.0.1:{args.port}/?token={token}  (Ctrl-C stops it)")
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")
    return 0
