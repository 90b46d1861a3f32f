"""The eval suite's settings: every EVAL_ variable read and typed, a bad value refused naming the
variable and the value, the endpoint's key never shown, and where the runs are stored."""

import os
from pathlib import Path

import pytest

from app.settings import Settings
from evals.settings import EvalSettings, EvalSettingsError, conninfo, eval_settings

# A value for every setting, as its variable would carry it, and the value read from it.
SAMPLES = {
    "cases": ("honest-absence,no-glowforge", "honest-absence,no-glowforge"),
    "groups": ("staff queue", "staff queue"),
    "model": ("openai/gpt-4o", "openai/gpt-4o"),
    "judge_model": ("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
    "concurrency": ("7", 7),
    "repeat": ("3", 3),
    "vision": ("0", False),
    "trust_judge": ("1", True),
    "fail_on_skip": ("true", True),
    "max_cost": ("2.5", 2.5),
    "allow_unpriced": ("1", True),
    "max_cost_increase": ("25%", 25.0),
    "max_p95_increase": ("50", 50.0),
    "hard_files": ("honest-absence", "honest-absence"),
    "launch": ("l123", "l123"),
    "max_prompt_chars": ("5000", 5000),
    "max_case_file_bytes": ("20000", 20000),
    "workspace_port": ("8111", 8111),
    "cache": ("refresh", "refresh"),
    "cache_ttl": ("12h", 43_200.0),
    "cache_max_mb": ("64", 64),
    "advisory_judge": ("1", True),
    "auto_calibrate": ("0", False),
    "ray_address": ("local:2", "local:2"),
    "pii_phone_regions": ("us, de,US", "US,DE"),
    "pii_student_id": (r"\bS\d{7}\b", r"\bS\d{7}\b"),
}
SECRET = "sk-endpoint-do-not-show-42"


@pytest.fixture
def environ(monkeypatch):
    """No EVAL_ variable, nor the two read without the prefix, but what a test sets."""
    for name in [k for k in os.environ
                 if k.startswith("EVAL_") or k in ("WORKSPACE_PORT", "ENDPOINT_API_KEY")]:
        monkeypatch.delenv(name)
    eval_settings.cache_clear()
    yield monkeypatch
    eval_settings.cache_clear()


def test_every_eval_variable_is_read_and_typed(environ):
    fields = set(EvalSettings.model_fields) - {"endpoint_api_key"}
    assert fields  # a setting without a sample below fails here, not silently
    assert set(SAMPLES) == fields
    defaults = EvalSettings()
    for name, (text, value) in SAMPLES.items():
        environ.setenv(f"EVAL_{name.upper()}", text)
        read = getattr(EvalSettings(), name)
        assert read == value and read != getattr(defaults, name), name


def test_an_empty_variable_is_unset(environ):
    for name in ("EVAL_CONCURRENCY", "EVAL_REPEAT", "EVAL_VISION", "EVAL_TRUST_JUDGE",
                 "EVAL_FAIL_ON_SKIP", "EVAL_MAX_COST"):
        environ.setenv(name, "")
    assert eval_settings() == EvalSettings.model_construct(**EvalSettings().model_dump())
    assert eval_settings().repeat == 1 and eval_settings().concurrency is None


def test_the_workspace_port_and_the_endpoint_key_are_read_without_the_prefix_too(environ):
    environ.setenv("WORKSPACE_PORT", "8123")
    environ.setenv("ENDPOINT_API_KEY", SECRET)
    settings = EvalSettings()
    assert settings.workspace_port == 8123
    assert settings.endpoint_api_key is not None
    assert settings.endpoint_api_key.get_secret_value() == SECRET


@pytest.mark.parametrize(("variable", "value", "said"), [
    ("EVAL_CONCURRENCY", "four", "EVAL_CONCURRENCY='four': Input should be a valid integer"),
    ("EVAL_CONCURRENCY", "0", "EVAL_CONCURRENCY='0': Input should be greater than or equal to 1"),
    ("EVAL_REPEAT", "101", "EVAL_REPEAT='101': Input should be less than or equal to 100"),
    ("EVAL_REPEAT", "often", "EVAL_REPEAT='often': Input should be K (1 to 100) or auto[:MAX]"),
    ("EVAL_REPEAT", "auto:1", "EVAL_REPEAT='auto:1': auto:MAX takes a MAX from 2 to 100"),
    ("EVAL_MAX_COST", "0", "EVAL_MAX_COST='0': Input should be greater than 0"),
    ("EVAL_VISION", "maybe", "EVAL_VISION='maybe': Input should be a valid boolean"),
    ("EVAL_WORKSPACE_PORT", "70000", "EVAL_WORKSPACE_PORT='70000': Input should be less than"),
    ("WORKSPACE_PORT", "70000", "WORKSPACE_PORT='70000': Input should be less than"),
    ("EVAL_CACHE", "sometimes", "EVAL_CACHE='sometimes': Input should be 'reuse', 'refresh'"),
    ("EVAL_CACHE_TTL", "a week", "EVAL_CACHE_TTL='a week': Value error, a duration: 7d, 12h"),
    ("EVAL_CACHE_TTL", "0d", "EVAL_CACHE_TTL='0d': Value error, a duration longer than 0"),
    ("EVAL_MAX_COST_INCREASE", "a lot",
     "EVAL_MAX_COST_INCREASE='a lot': Value error, a percentage of 0 or more (25% or 25)"),
    ("EVAL_MAX_P95_INCREASE", "-5%",
     "EVAL_MAX_P95_INCREASE='-5%': Value error, a percentage of 0 or more (25% or 25)"),
    ("EVAL_PII_PHONE_REGIONS", "US,XX",
     "EVAL_PII_PHONE_REGIONS='US,XX': Value error, a comma list of regions (ISO 3166 codes"
     " such as US,GB,FR); unknown: XX"),
    ("EVAL_PII_PHONE_REGIONS", " , ", "EVAL_PII_PHONE_REGIONS=' , ': Value error, a comma list"),
    ("EVAL_PII_STUDENT_ID", "U(\\d{8}", "EVAL_PII_STUDENT_ID='U(\\\\d{8}': Value error, a Python"
     " regular expression (missing ), unterminated subpattern"),
    ("EVAL_PII_STUDENT_ID", "\\d*", "EVAL_PII_STUDENT_ID='\\\\d*': Value error, a pattern that does"
     " not match empty text"),
])
def test_a_bad_value_is_refused_naming_the_variable_and_the_value(environ, variable, value,
                                                                   said):
    environ.setenv(variable, value)
    with pytest.raises(EvalSettingsError) as refused:
        eval_settings()
    assert said in str(refused.value)


def test_repeat_takes_auto_as_written(environ):
    environ.setenv("EVAL_REPEAT", "Auto:7")
    assert eval_settings().repeat == "auto:7"
    eval_settings.cache_clear()
    environ.setenv("EVAL_REPEAT", "auto")
    assert eval_settings().repeat == "auto"


def test_every_bad_value_is_named_at_once(environ):
    environ.setenv("EVAL_CONCURRENCY", "four")
    environ.setenv("EVAL_REPEAT", "0")
    with pytest.raises(EvalSettingsError) as refused:
        eval_settings()
    assert str(refused.value).startswith("EVAL_CONCURRENCY='four': ")
    assert "; EVAL_REPEAT='0': " in str(refused.value)


def test_the_endpoint_key_is_never_shown(environ):
    environ.setenv("ENDPOINT_API_KEY", SECRET)
    settings = eval_settings()
    for shown in (repr(settings), str(settings), settings.model_dump_json()):
        assert SECRET not in shown and "**********" in shown
    environ.setenv("EVAL_CONCURRENCY", "four")  # an error beside the key does not show it
    eval_settings.cache_clear()
    with pytest.raises(EvalSettingsError) as refused:
        eval_settings()
    assert SECRET not in str(refused.value)


def test_the_settings_are_read_once_until_the_cache_is_cleared(environ):
    environ.setenv("EVAL_REPEAT", "2")
    first = eval_settings()
    environ.setenv("EVAL_REPEAT", "5")
    assert eval_settings() is first and first.repeat == 2
    eval_settings.cache_clear()
    assert eval_settings().repeat == 5


def test_runs_are_stored_in_database_url_or_the_embedded_server_of_the_data_folder(
        tmp_path, monkeypatch):
    import evals.settings as module

    monkeypatch.delenv("DATABASE_URL", raising=False)
    asked: list[tuple[str | None, Path]] = []

    def resolve(url: str | None, data_dir: Path) -> str:  # starts nothing: records the ask
        asked.append((url, data_dir))
        return url or f"postgresql:///embedded-in-{data_dir.name}"

    monkeypatch.setattr(module, "resolve_conninfo", resolve)
    url = "postgresql://evals:pw@db.example/runs"
    assert conninfo(Settings(data_dir=tmp_path, database_url=url)) == url  # the secret's value
    assert conninfo(Settings(data_dir=tmp_path)) == f"postgresql:///embedded-in-{tmp_path.name}"
    assert asked == [(url, tmp_path), (None, tmp_path)]


def test_the_settings_page_is_generated_from_the_settings_objects():
    from app.settings import Settings
    from evals.settings import SETTINGS_PAGE, EvalSettings, settings_page

    page = settings_page()
    assert SETTINGS_PAGE.read_text() == page, (
        "docs/settings.md is stale: run `python -m evals settings --write`")
    fields = [*Settings.model_fields.items(), *EvalSettings.model_fields.items()]
    assert fields and all(f.description for _, f in fields)  # every variable says what it is
    assert "`EVAL_CONCURRENCY`" in page and "`DATABASE_URL`" in page


def test_the_default_phone_regions_are_regions_phonenumbers_supports():
    import phonenumbers

    from evals.settings import DEFAULT_PII_PHONE_REGIONS

    # The default is taken without asking phonenumbers (every command reads the settings).
    assert EvalSettings._regions(DEFAULT_PII_PHONE_REGIONS) == DEFAULT_PII_PHONE_REGIONS
    assert set(DEFAULT_PII_PHONE_REGIONS.split(",")) <= phonenumbers.SUPPORTED_REGIONS
