"""A version-2 run artifact as 37bb7c5 wrote it (tests/evals/record/data/README.md says how it
was made), with the report, page and JUnit XML that harness gave for it."""

import gzip
import json
from pathlib import Path

DATA = Path(__file__).parent / "data"


def v2_data() -> dict:
    return json.loads(gzip.decompress((DATA / "v2-run.json.gz").read_bytes()))
