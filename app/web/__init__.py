"""The web app: chat page, tool pages, /api/chat and an OpenAI-compatible endpoint."""

from app.web.app import create_app

__all__ = ["create_app"]
