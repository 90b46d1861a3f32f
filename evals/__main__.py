"""`python -m evals`: the command line (evals/cli/)."""

from evals._exit import skip_teardown

# First, before any import registers an exit handler of its own: the end runs after them all.
status = skip_teardown()

from evals.cli import main  # noqa: E402

status.code = main()
raise SystemExit(status.code)
