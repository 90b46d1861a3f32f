"""`python -m evals`: the command line (evals/cli/)."""

import sys

from evals._exit import skip_teardown

# httpx imports its command-line client whenever it is imported (click, rich and pygments:
# 0.07 s of every command's start, measured with -X importtime); no command here uses it.
# Marked as missing, the module is skipped and httpx defines a stub in its place.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

# First, before any import registers an exit handler of its own: the end runs after them all.
status = skip_teardown()

import gc  # noqa: E402

# Start-up imports some two thousand modules, and the collector of reference cycles ran over
# the growing heap again and again meanwhile (0.08-0.1 s of the 0.8 s of CPU a run's imports
# take, measured with and without). It is off until the command's modules are in, and what
# they made is then set aside for good (gc.freeze), so later collections skip it.
gc.disable()

from evals.cli import main  # noqa: E402


def _started() -> None:
    gc.freeze()
    gc.enable()


status.code = main(started=_started)
raise SystemExit(status.code)
