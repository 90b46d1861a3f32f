"""litellm's model table read without litellm: one entry found and parsed alone, the same as
the whole file parsed gives."""

import json

from app.chat import model_info


def test_every_model_of_litellm_s_file_is_laid_out_where_an_entry_is_looked_for():
    import re

    indents = "|".join(" " * n for n in model_info._TOP_INDENTS)
    found = re.findall(rf'^(?:{indents})("(?:[^"\\\n]|\\.)*"): {{', model_info._text(), re.M)
    assert sorted(json.loads(k) for k in found) == sorted(model_info._table())


def test_an_entry_read_alone_is_the_entry_the_whole_table_holds():
    table = model_info._table()
    keys = sorted(table)
    assert len(keys) > 1000  # litellm's file, read
    assert model_info._entry("claude-haiku-5-5") == table["claude-haiku-5-5"]  # not indented
    for key in keys[:: len(keys) // 150]:  # about 150, spread over the file
        expected = table[key] if isinstance(table[key], dict) else None
        assert model_info._entry(key) == expected, key
    for absent in ("no-such-model", "openai/fake", '"gpt-4o"', "gpt-4o\n"):
        assert model_info._entry(absent) is None


def test_a_file_laid_out_otherwise_is_read_whole(monkeypatch):
    compact = json.dumps({"m1": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06},
                          "openai/m2": {"supports_vision": True}, "odd": 3})
    for laid_out in (compact, json.dumps(json.loads(compact), indent=4)):
        monkeypatch.setattr(model_info, "_text", lambda text=laid_out: text)
        for cached in (model_info._table, model_info._entry):
            cached.cache_clear()
        try:
            assert model_info.price_per_token("m1") == (1e-06, 2e-06)
            assert model_info.supports_vision("openai/m2")
            assert model_info.info("odd") == {} and model_info.info("absent") == {}
        finally:
            for cached in (model_info._table, model_info._entry):
                cached.cache_clear()
