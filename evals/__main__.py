"""`python -m evals`: the command line (evals/cli/)."""

import sys

from evals._exit import skip_teardown

# httpx imports its command-line client whenever it is imported (click, rich and pygments:
# 0.07 s of every command's start, measured with -X importtime); no command here uses it.
# Marked as missing, the module is skipped and httpx defines a stub in its place.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

# First, before any import registers an exit handler of its own: the end runs after them all.
status = skip_teardown()

from evals.cli import main  # noqa: E402

status.code = main()
raise SystemExit(status.code)
