"""`python -m evals retrieval`: search measured against labelled questions, apart from any chat
model (recall@1, recall@5, MRR and the no-answer figure, fused and each half alone).

Manual search (`--manuals`, the default) on `manuals.yaml`; catalogue search (`--catalog`) on
`catalog.yaml`, the large lab's labelled requests (recall@1/@3, MRR, the precision of "none").
"""

from __future__ import annotations

import argparse
from pathlib import Path

from app import embed
from evals.api.setup import app_settings, run_closing
from evals.calibration.retrieval import (
    CATALOG_SET,
    MANUALS_SET,
    RetrievalSetError,
    load_requests,
    load_set,
    measure_catalog,
    measure_manuals,
    render,
    render_catalog,
)
from evals.cli.common import CliError, Commands

EMBEDDERS = ("default", "hash")


def register(sub: Commands) -> None:
    p = sub.add_parser("retrieval", help="search against labelled questions: manual search"
                                         " (recall@1/@5, MRR, no-answer; fused, text-only and"
                                         " vector-only) or catalogue search (--catalog)")
    p.add_argument("labelled", nargs="?", type=Path,
                   help="a labelled set (default evals/calibration/retrieval/"
                        f"{MANUALS_SET.name}, or {CATALOG_SET.name} with --catalog)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--manuals", action="store_true",
                       help="measure manual search (the default)")
    which.add_argument("--catalog", action="store_true",
                       help="measure catalogue search on the large lab: recall@1/@3, MRR,"
                            " the precision and recall of \"none\", the overview, latency")
    p.add_argument("--embedder", choices=EMBEDDERS, default="default",
                   help="default: the app's embedder (all-MiniLM-L6-v2, int8); hash: the"
                        " tests' hashed-words stand-in, for a quick check of the command")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="also list each answerable question not ranked first in some mode,"
                        " and what search returned for each question it cannot answer")
    p.set_defaults(handler=retrieval)


def retrieval(args: argparse.Namespace) -> int:
    path: Path = args.labelled or (CATALOG_SET if args.catalog else MANUALS_SET)
    try:
        requests = load_requests(path) if args.catalog else []
        labelled = [] if args.catalog else load_set(path)
    except RetrievalSetError as exc:
        raise CliError("the labelled set has errors:\n" + "\n".join(
            f"  {line}" for line in exc.errors)) from exc
    if not (requests or labelled):
        raise CliError(f"{path.name}: no questions")
    embedder = embed.HashEmbedder() if args.embedder == "hash" else embed.default_embedder()
    try:
        if args.catalog:
            found = run_closing(measure_catalog(app_settings(), embedder, requests,
                                                set_name=path.name))
            print(found.model_dump_json(indent=2) if args.json
                  else render_catalog(found, verbose=args.verbose))
            return 0
        result = run_closing(measure_manuals(app_settings(), embedder, labelled,
                                             set_name=path.name))
    except embed.EmbedderUnavailable as exc:
        raise CliError(f"{exc} (--embedder hash measures without it)") from exc
    print(result.model_dump_json(indent=2) if args.json else render(result,
                                                                    verbose=args.verbose))
    return 0
