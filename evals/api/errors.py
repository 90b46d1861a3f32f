"""The one error the suite's functions raise when they cannot go on."""

from __future__ import annotations


class ApiError(Exception):
    """What stops an operation, raised where the problem is found, with the message a person
    needs. The command line says it once on stderr (exit 2); a script catches it."""
