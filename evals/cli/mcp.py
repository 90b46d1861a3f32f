"""`python -m evals mcp`: the eval operations as MCP tools on stdio (evals/cli/mcp_server.py)."""

from __future__ import annotations

import argparse

from evals.cli.common import Commands


def register(sub: Commands) -> None:
    sub.add_parser("mcp", help="the eval tools as an MCP server on stdio").set_defaults(
        handler=mcp)


def mcp(args: argparse.Namespace) -> int:
    # Imported here: the MCP SDK takes 0.7 s to import (python -X importtime), which no other
    # command should pay.
    from evals.cli.mcp_server import serve

    return serve()
