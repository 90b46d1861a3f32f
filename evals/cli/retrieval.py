"""`python -m evals retrieval`: search measured against labelled questions, apart from any chat
model (recall@1, recall@5, MRR and the no-answer figure, fused and each half alone).

Manual search is the one measured so far (`--manuals`, the default); catalogue search is to
come as another flag beside it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from app.manuals import embed
from evals.calibration.retrieval import (
    MANUALS_SET,
    RetrievalSetError,
    load_set,
    measure_manuals,
    render,
)
from evals.cli.common import CliError, Commands, app_settings, run_closing

EMBEDDERS = ("default", "hash")


def register(sub: Commands) -> None:
    p = sub.add_parser("retrieval", help="search against labelled questions: recall@1/@5, MRR,"
                                         " no-answer; fused, text-only and vector-only")
    p.add_argument("labelled", nargs="?", type=Path,
                   help="a labelled set (default evals/calibration/retrieval/"
                        f"{MANUALS_SET.name})")
    p.add_argument("--manuals", action="store_true",
                   help="measure manual search (the default, and the only search so far)")
    p.add_argument("--embedder", choices=EMBEDDERS, default="default",
                   help="default: the app's embedder (all-MiniLM-L6-v2, int8); hash: the"
                        " tests' hashed-words stand-in, for a quick check of the command")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="also list each answerable question not ranked first in some mode,"
                        " and what search returned for each question it cannot answer")
    p.set_defaults(handler=retrieval)


def retrieval(args: argparse.Namespace) -> int:
    path: Path = args.labelled or MANUALS_SET
    try:
        labelled = load_set(path)
    except RetrievalSetError as exc:
        raise CliError("the labelled set has errors:\n" + "\n".join(
            f"  {line}" for line in exc.errors)) from exc
    if not labelled:
        raise CliError(f"{path.name}: no questions")
    embedder = embed.HashEmbedder() if args.embedder == "hash" else embed.default_embedder()
    try:
        result = run_closing(measure_manuals(app_settings(), embedder, labelled,
                                             set_name=path.name))
    except embed.EmbedderUnavailable as exc:
        raise CliError(f"{exc} (--embedder hash measures without it)") from exc
    print(result.model_dump_json(indent=2) if args.json else render(result,
                                                                    verbose=args.verbose))
    return 0
