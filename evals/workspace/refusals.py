"""Why the workspace refuses a write, each with the HTTP status its page answers with."""

from __future__ import annotations


class WriteRefused(Exception):
    status = 400


class Stale(WriteRefused):
    """A file changed since the form was opened."""

    status = 409


class Invalid(WriteRefused):
    """The edit would leave the files invalid; the message is the loader's."""

    status = 422


class WriteFailed(WriteRefused):
    """The disk refused a write; every file was put back as it was."""

    status = 500


class Conflict(WriteRefused):
    """The edit contradicts what the files hold now (a name taken, a membership changed)."""

    status = 409
