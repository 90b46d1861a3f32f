"""The catalogue's labelled requests: the shipped sets load against the large lab; a malformed
one names file:line."""

import pytest

from evals.calibration.retrieval import (
    CATALOG_HOLDOUT,
    CATALOG_HOLDOUT_2,
    CATALOG_SET,
    RetrievalSetError,
    load_requests,
)
from evals.fixtures.lab_catalog import large_lab


def test_the_shipped_sets_load_with_every_kind_and_only_large_lab_slugs():
    slugs = {m.slug for m in large_lab()}
    main, holdout = load_requests(CATALOG_SET), load_requests(CATALOG_HOLDOUT)
    second = load_requests(CATALOG_HOLDOUT_2)
    assert len(main) >= 120 and len(holdout) >= 40 and len(second) >= 40
    for labelled in (main, holdout, second):
        kinds = {r.item.kind for r in labelled}
        assert {"task", "material", "misspelling", "brand", "model", "lookalike", "several",
                "absent"} <= kinds
        for r in labelled:
            assert set(r.expected) <= slugs, r.where
            assert (r.expect == "none") == (r.item.machines == "none"), r.where
    assert {r.expect for r in main} == {"machines", "none", "overview"}
    ids = [{r.item.id for r in s} for s in (main, holdout, second)]
    assert not (ids[0] & ids[1] or ids[0] & ids[2] or ids[1] & ids[2])
    assert main[0].where.startswith("catalog.yaml:")


def _errors(tmp_path, text):
    path = tmp_path / "set.yaml"
    path.write_text(text)
    with pytest.raises(RetrievalSetError) as raised:
        load_requests(path)
    return raised.value.errors


GOOD = "- id: ok\n  request: cut acrylic\n  kind: material\n  machines: [trotec-speedy-400]\n"


@pytest.mark.parametrize(("text", "expected"), [
    (GOOD + "- id: gone\n  request: a glowforge\n  kind: absent\n  machines: [glowforge-pro]\n",
     "set.yaml:8: machines: not in the large lab: glowforge-pro"),
    (GOOD + "- id: ok\n  request: again\n  kind: task\n  machines: none\n",
     "set.yaml:5: duplicate id 'ok' (first at set.yaml:1)"),
    (GOOD + "- id: empty\n  request: nothing\n  kind: task\n  machines: []\n",
     "set.yaml:8: machines: name at least one machine, or write `none` or `all`"),
    (GOOD + "- id: odd\n  request: hm\n  kind: vibes\n  machines: none\n",
     "set.yaml:7: kind: Input should be 'task', 'material', 'misspelling', 'brand', 'model',"
     " 'lookalike', 'several', 'absent' or 'general'"),
    (GOOD + "- id: extra\n  request: hm\n  kind: task\n  machines: none\n  colour: red\n",
     "set.yaml:9: colour: Extra inputs are not permitted"),
    (GOOD + "- just a string\n", "set.yaml:5: a request is a mapping (id, request, kind,"
                                 " machines)"),
    ("id: not-a-list\n", "set.yaml:1: a catalogue set is a list of requests"),
])
def test_a_malformed_set_names_file_and_line(tmp_path, text, expected):
    assert expected in _errors(tmp_path, text)
