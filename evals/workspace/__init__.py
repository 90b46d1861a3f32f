"""The eval workspace: run, read and author evals in the browser (see app.py)."""

from evals.workspace.app import create_workspace

__all__ = ["create_workspace"]
