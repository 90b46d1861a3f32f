"""What the run store refuses with: an unknown run or point, a store that does not answer, a
run another process writes."""

from __future__ import annotations


class StoreError(LookupError):
    """An unknown run or point, an ambiguous id, or a point name already taken; the message
    names it."""


class StoreUnavailable(StoreError):
    """The run store's server is down or does not answer in time; the message names it."""


class RunLocked(StoreError):
    """Another live process is writing the run; the message names its pid and host."""
