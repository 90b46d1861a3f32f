import pytest

from app.seed import CatalogSourceError, load_catalog_source


def test_catalog_source_loads_machines(tmp_path):
    f = tmp_path / "catalog.yaml"
    f.write_text("- slug: band-saw\n  name: Band saw\n  brand: Record\n  category: saw\n"
                 "  specs: {work_area: null}\n")
    [machine] = load_catalog_source(f)
    assert machine.slug == "band-saw" and machine.specs == {"work_area": None}


M = "- slug: ok\n  name: x\n  brand: y\n  category: z\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- slug: Bad Slug\n  name: x\n  brand: y\n  category: z\n", "at 0.slug"),
        ("- slug: ok\n  name: x\n  brand: y\n  category: z\n  specs: {colour: red}\n",
         "unknown spec field"),
        ("- [unclosed\n", "CATALOG_SOURCE"),
        # what the database would have refused halfway through seeding, or PyYAML tripped on
        (M + "  units: [{label: u1, status: broken}]\n",
         "at 0.units.0.status \\(machine 'ok'\\): Input should be 'available'"),
        (M + M, "slug\\(s\\) given twice: \\['ok'\\]"),
        (M + "  units: [{label: u1}]\n" + M.replace("ok", "other") + "  units: [{label: u1}]\n",
         "unit label\\(s\\) given to two units: \\['u1'\\]"),
        (M.replace("name: x", 'name: "A\\0"'), "holds the character U\\+0000"),
        (M.replace("name: x", "name: 2024-13-45"), "cannot be read \\(ValueError: month"),
        (M.replace("name: x", "name: " + "9" * 5000), "cannot be read \\(ValueError"),
        ("[" * 50000 + "]" * 50000, "CATALOG_SOURCE"),
    ],
)
def test_bad_catalog_source_names_file_and_place(tmp_path, text, message):
    f = tmp_path / "catalog.yaml"
    f.write_text(text)
    with pytest.raises(CatalogSourceError, match=message) as info:
        load_catalog_source(f)
    assert str(f) in str(info.value)


def test_a_catalog_source_that_is_not_utf8_is_refused(tmp_path):
    f = tmp_path / "catalog.yaml"
    f.write_bytes(b"- slug: ok\n  name: \xff\n")
    with pytest.raises(CatalogSourceError, match="cannot be read \\(UnicodeDecodeError"):
        load_catalog_source(f)


def test_a_trusted_file_read_with_libyaml_gives_the_same_machines_and_errors():
    from evals.fixtures.lab_catalog import LARGE_LAB_FILE

    assert load_catalog_source(LARGE_LAB_FILE, trusted=True) == \
        load_catalog_source(LARGE_LAB_FILE)


def test_a_trusted_file_that_is_not_a_catalogue_is_refused_naming_it(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- slug: [unclosed\n")
    with pytest.raises(CatalogSourceError, match="bad.yaml"):
        load_catalog_source(bad, trusted=True)
