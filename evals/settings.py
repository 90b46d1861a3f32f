"""The eval suite's settings: every `EVAL_*` variable declared once, typed and ranged, and
where the suite's files are.

Every command-line flag that has a variable takes its default from here, so `EVAL_REPEAT=3`
and `--repeat 3` mean the same. A bad value is refused with the variable's name and the value
(`EvalSettingsError`), never a bare ValueError. The app's own settings (models, database, the
local model) are `app.settings.Settings`; docs/settings.md lists both, generated from them.
"""

from __future__ import annotations

import math
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.db import resolve_conninfo
from app.settings import PROJECT_ROOT, Settings

EVALS_DIR = Path(__file__).resolve().parent
CASES_DIR = EVALS_DIR / "cases"
SCENARIOS_DIR = EVALS_DIR / "scenarios"
PHOTOS_DIR = EVALS_DIR / "fixtures" / "photos"
# The model-call cache's policies (evals/execute/cache.py): reuse, refresh, off.
Policy = Literal["reuse", "refresh", "off"]
POLICIES: tuple[Policy, ...] = ("reuse", "refresh", "off")
# The JSON Schemas of the run record and of the case and scenario files (`python -m evals schema`).
SCHEMAS_DIR = EVALS_DIR / "schemas"

DEFAULT_CONCURRENCY = 4  # items in flight at once (a local model: one per server slot)
DEFAULT_WORKSPACE_PORT = 8010
DEFAULT_MAX_PROMPT_CHARS = 20_000
DEFAULT_MAX_CASE_FILE_BYTES = 1_000_000
DAY_S = 86_400.0
# The lab's country, then the regions whose local numbers its visitors were seen to write.
# A student id's edges are digits and Latin letters, not \b: a word of another script may
# follow it with no space ("U20231234입니다").
DEFAULT_PII_PHONE_REGIONS = "US,GB,FR,IN,AU"
DEFAULT_PII_STUDENT_ID = (
    r"(?<![A-Za-z0-9])[Uu][ -]?\d{8}(?!\d)"
    r"|(?i:\bstudent\s*(?:id|number|no\.?|#)|\bmatric(?:ulation)?\s*(?:no\.?|number|#)"
    r"|\bmatrikel(?:nummer|nr\.?)|\bnum[ée]ro\s+(?:d['’])?[ée]tudiant"
    r"|\bn[uú]mero\s+de\s+(?:estudiante|aluno|matr[ií]cula)|\bmatricola|学号|학번|学籍番号)"
    r"\W{0,3}(?P<id>\d{8})(?!\d)")
DURATION_UNITS = {"d": DAY_S, "h": 3600.0, "m": 60.0, "s": 1.0}


class EvalSettingsError(ValueError):
    """An `EVAL_*` variable with a value the suite cannot use; the message names both."""


class EvalSettings(BaseSettings):
    """The eval suite's settings, read from `EVAL_*` environment variables."""

    # An empty variable is unset (a CI template that passes EVAL_REPEAT= means the default).
    model_config = SettingsConfigDict(env_prefix="EVAL_", case_sensitive=False, extra="ignore",
                                      env_ignore_empty=True)

    cases: str | None = Field(default=None, description=(
        "Comma list of case or scenario files (without .yaml) and item ids to run."))
    groups: str | None = Field(default=None, description="Comma list of item groups to run.")
    model: str | None = Field(default=None, description=(
        "The chat model under test (any litellm id, or `local`); default: MODEL_CHAT's."))
    judge_model: str | None = Field(default=None, description=(
        "The judge of rubric cases and scenario criteria; default: MODEL_JUDGE's."))
    concurrency: int | None = Field(default=None, ge=1, le=1000, description=(
        f"Items in flight at once (default {DEFAULT_CONCURRENCY}; with the embedded model,"
        " one per server slot)."))
    repeat: int | str = Field(default=1, description=(
        "Independent repetitions of every item: K (1–100), or `auto[:MAX]` (MAX 2–100,"
        " default 5): another repetition only while the item's verdict is open."))
    vision: bool | None = Field(default=None, description=(
        "Send photos even when litellm says the model takes no images (1), or never (0)."))
    trust_judge: bool = Field(default=False, description=(
        "Let a judge that has not earned trust by calibration decide items."))
    fail_on_skip: bool | None = Field(default=None, description=(
        "A skipped item fails the run (default: on when a model is named)."))
    max_cost: float | None = Field(default=None, gt=0, description=(
        "The most a command's model calls may cost, in USD, every job's (chat, judge, visitor,"
        " calibration, drafting): no call is made that could pass it."))
    allow_unpriced: bool = Field(default=False, description=(
        "Under EVAL_MAX_COST, call a model with no known price anyway (its calls are not"
        " counted, so the cap does not hold for them); by default it is refused before any"
        " call."))
    max_cost_increase: float | None = Field(default=None, ge=0, description=(
        "The gate fails when the cost per item rose more than this against the comparison"
        " point (`25%` or 25), or cannot be checked (a model without a price)."))
    max_p95_increase: float | None = Field(default=None, ge=0, description=(
        "The gate fails when the p95 latency per attempt rose more than this against the"
        " comparison point (`50%` or 50), or cannot be checked."))
    hard_files: str | None = Field(default=None, description=(
        "Comma list of files the gate allows no miss in (default:"
        " honest-absence,manual-grounding)."))
    launch: str | None = Field(default=None, description=(
        "Set by the workspace on the runs it starts, to find their progress."))
    max_prompt_chars: int = Field(default=DEFAULT_MAX_PROMPT_CHARS, ge=100, description=(
        "The longest prompt or history turn a case file may hold."))
    max_case_file_bytes: int = Field(default=DEFAULT_MAX_CASE_FILE_BYTES, ge=1000,
                                     description="The largest YAML file the suite reads.")
    workspace_port: int = Field(
        default=DEFAULT_WORKSPACE_PORT, ge=1, le=65535,
        validation_alias=AliasChoices("EVAL_WORKSPACE_PORT", "WORKSPACE_PORT"),
        description="The workspace's port on 127.0.0.1 (WORKSPACE_PORT is read too).")
    cache: Policy = Field(default="reuse", description=(
        "The model-call cache: `reuse` replays a call already made, `refresh` makes every"
        " call again and keeps it, `off` neither reads nor writes it."))
    cache_ttl: float = Field(default=7 * DAY_S, gt=0, description=(
        "How long a hosted model's cached reply is replayed (`7d`, `12h`, `30m` or seconds);"
        " a checksum-pinned local model's never expire. Default 7 days."))
    cache_max_mb: int = Field(default=1024, ge=1, description=(
        "The call cache's bound: past it, the least recently used replies go."))
    advisory_judge: bool = Field(default=False, description=(
        "Call a judge that has not earned trust, and record its verdicts as advisory (by"
        " default it is not called and its items are UNDECIDED)."))
    auto_calibrate: bool = Field(default=True, description=(
        "Calibrate a judge with no calibration record under its prompt on the shipped"
        " makerspace set at the start of the run that first uses it, and save the record"
        " (0 skips it: its items stay UNDECIDED)."))
    pii_phone_regions: str = Field(default=DEFAULT_PII_PHONE_REGIONS, description=(
        "How from-conversations reads a phone number written without its country code: a"
        " comma list of regions (ISO 3166 codes), the lab's country first (a number possible"
        " there counts), then the regions its visitors come from (a number valid there"
        " counts)."))
    pii_student_id: str = Field(default=DEFAULT_PII_STUDENT_ID, description=(
        "The university's student ids, as a Python regular expression that from-conversations"
        " replaces with `[student id]` (only the named group `id` when the pattern has one and"
        " it matched, so a cue such as \"student id\" stays); the default is \"U\" and 8"
        " digits (`U20231234`, `u-20231234`, `U 20231234`), or 8 digits after a cue such as"
        " \"student id\" or \"matric no.\"."))
    ray_address: str | None = Field(default=None, description=(
        "Spread a run over a Ray cluster (`--ray`): `auto` joins the running cluster, an address"
        " (`host:port`, `ray://host:port`) joins that one, `local:N` starts a local instance with"
        " N workers. `make eval` installs Ray when it is set."))
    endpoint_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("ENDPOINT_API_KEY"),
        description="The key sent to an `--endpoint` (ENDPOINT_API_KEY).")

    @field_validator("repeat", mode="before")
    @classmethod
    def _repeat(cls, value: object) -> int | str:
        """K as a number, or `auto[:MAX]` as written (the run's rule is made from it)."""
        text = str(value).strip().lower()
        auto = re.fullmatch(r"auto(?::(\d+))?", text)
        if auto is not None:
            if auto.group(1) is not None and not 2 <= int(auto.group(1)) <= 100:
                raise PydanticCustomError("auto_max", "auto:MAX takes a MAX from 2 to 100")
            return text
        if not text.isdigit():
            raise PydanticCustomError("repeat", "Input should be K (1 to 100) or auto[:MAX]")
        if int(text) < 1:
            raise PydanticCustomError("greater_than_equal",
                                      "Input should be greater than or equal to 1")
        if int(text) > 100:
            raise PydanticCustomError("less_than_equal",
                                      "Input should be less than or equal to 100")
        return int(text)


    @field_validator("pii_phone_regions")
    @classmethod
    def _regions(cls, value: str) -> str:
        if value == DEFAULT_PII_PHONE_REGIONS:
            return value  # known good: every command validates the default, and phonenumbers
            # takes 12 ms to import (a test holds the default to the supported regions)
        import phonenumbers

        codes = [c.strip().upper() for c in value.split(",") if c.strip()]
        unknown = [c for c in codes if c not in phonenumbers.SUPPORTED_REGIONS]
        if not codes or unknown:
            raise ValueError("a comma list of regions (ISO 3166 codes such as US,GB,FR)"
                             + (f"; unknown: {', '.join(unknown)}" if unknown else ""))
        return ",".join(dict.fromkeys(codes))

    @field_validator("pii_student_id")
    @classmethod
    def _pattern(cls, value: str) -> str:
        try:
            pattern = re.compile(value)
        except re.error as exc:
            raise ValueError(f"a Python regular expression ({exc})") from None
        if pattern.search(""):
            raise ValueError("a pattern that does not match empty text")
        return value

    @field_validator("max_cost_increase", "max_p95_increase", mode="before")
    @classmethod
    def _percent(cls, value: object) -> object:
        return percent(value) if isinstance(value, str) else value

    @field_validator("cache_ttl", mode="before")
    @classmethod
    def _duration(cls, value: object) -> object:
        """`7d`, `12h`, `30m`, `45s` or a number of seconds."""
        if not isinstance(value, str):
            return value
        text = value.strip().lower()
        unit = DURATION_UNITS.get(text[-1:]) if text else None
        try:
            seconds = float(text[:-1] if unit else text) * (unit or 1)
        except ValueError:
            raise ValueError("a duration: 7d, 12h, 30m, 45s or seconds") from None
        if seconds <= 0:
            raise ValueError("a duration longer than 0")
        return seconds


def percent(text: str) -> float:
    """`25%` or `25` as 25.0 (a flag's type and a variable's reading)."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        value = math.nan
    if not value >= 0:  # NaN too
        raise ValueError(f"a percentage of 0 or more (25% or 25), not {text!r}")
    return value


def _variable_set(name: str) -> str:
    """The variable a person set for a field (a field read under two names says which)."""
    field = EvalSettings.model_fields.get(name)
    alias = field.validation_alias if field is not None else None
    if isinstance(alias, AliasChoices):
        found = [str(c) for c in alias.choices if str(c) in os.environ]
        return found[0] if found else str(alias.choices[0])
    return name.upper() if name.isupper() else f"EVAL_{name.upper()}"


def _read() -> EvalSettings:
    try:
        return EvalSettings()
    except ValidationError as exc:
        lines = []
        for e in exc.errors():
            name = str(e["loc"][0]) if e["loc"] else "?"
            variable = _variable_set(name)
            shown = "(hidden)" if "key" in name.lower() else repr(e.get("input"))
            lines.append(f"{variable}={shown}: {e['msg']}")
        raise EvalSettingsError("; ".join(lines)) from None


@lru_cache(maxsize=1)
def eval_settings() -> EvalSettings:
    """The process-wide eval settings, read once (EvalSettingsError on a bad value)."""
    return _read()


def conninfo(settings: Settings) -> str:
    """The PostgreSQL the suite stores its runs in and clones its databases on: DATABASE_URL,
    or the embedded server in the data folder (started if it is not running)."""
    url = settings.database_url.get_secret_value() if settings.database_url else None
    return resolve_conninfo(url, settings.data_dir)


SETTINGS_PAGE = PROJECT_ROOT / "docs" / "settings.md"


def _variables(name: str, field: FieldInfo, prefix: str) -> str:
    alias = field.validation_alias
    names = alias.choices if isinstance(alias, AliasChoices) else [prefix + name]
    return ", ".join(f"`{str(n).upper()}`" for n in names)


def _default(field: FieldInfo) -> str:
    value = field.get_default(call_default_factory=True)
    if value is None or value == [] or value == "":
        return "unset"
    if isinstance(value, Path):
        try:
            value = value.relative_to(PROJECT_ROOT)
        except ValueError:
            pass
    return f"`{value}`"


def settings_page() -> str:
    """docs/settings.md: every variable of the app's and the suite's settings, from the
    settings objects themselves (`python -m evals settings --write` makes the file; a test
    fails when the file is stale)."""
    lines = ["# Settings", "",
             "<!-- Generated from app/settings.py and evals/settings.py by"
             " `python -m evals settings --write`; do not edit by hand. -->", "",
             "Every value is an environment variable. Secrets never appear in a log, a report"
             " or an artifact.", ""]
    for title, cls, prefix in (("The app", Settings, ""),
                               ("The eval suite", EvalSettings, "EVAL_")):
        lines += [f"## {title}", "", "| Variable | Default | Meaning |", "| --- | --- | --- |"]
        for name, field in cls.model_fields.items():
            lines.append(f"| {_variables(name, field, prefix)} | {_default(field)} |"
                         f" {field.description or ''} |")
        lines.append("")
    return "\n".join(lines)


__all__ = ["CASES_DIR", "DEFAULT_CONCURRENCY", "EVALS_DIR", "PHOTOS_DIR", "PROJECT_ROOT",
           "SCENARIOS_DIR", "SCHEMAS_DIR", "SETTINGS_PAGE", "EvalSettings", "EvalSettingsError",
           "conninfo", "eval_settings", "settings_page"]
