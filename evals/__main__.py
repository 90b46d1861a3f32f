"""`python -m evals`: the command line (evals/cli/)."""

from evals.cli import main

raise SystemExit(main())
