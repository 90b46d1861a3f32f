import pytest

from app.seed import CatalogSourceError, load_catalog_source


def test_catalog_source_loads_machines(tmp_path):
    f = tmp_path / "catalog.yaml"
    f.write_text("- slug: band-saw\n  name: Band saw\n  brand: Record\n  category: saw\n"
                 "  specs: {work_area: null}\n")
    [machine] = load_catalog_source(f)
    assert machine.slug == "band-saw" and machine.specs == {"work_area": None}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- slug: Bad Slug\n  name: x\n  brand: y\n  category: z\n", "at 0.slug"),
        ("- slug: ok\n  name: x\n  brand: y\n  category: z\n  specs: {colour: red}\n",
         "unknown spec field"),
        ("- [unclosed\n", "CATALOG_SOURCE"),
    ],
)
def test_bad_catalog_source_names_file_and_place(tmp_path, text, message):
    f = tmp_path / "catalog.yaml"
    f.write_text(text)
    with pytest.raises(CatalogSourceError, match=message) as info:
        load_catalog_source(f)
    assert str(f) in str(info.value)
