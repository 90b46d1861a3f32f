"""Scenario files: a simulated lab visitor's goal, its context, and what must be true after the
conversation. Loaded like case files: YAML with line numbers, every error `file:line`, all
files' errors reported together, a file with any error loads nothing.

A scenario (`evals/scenarios/*.yaml`, a list):

    - id: anonymous-smoke-report
      group: problem reports
      context: {page: tool, toolId: trotec-speedy-400}
      visitor:
        who: a first-year student using the laser cutter for the first time
        wants: to tell the lab the cutter smelled of smoke and stopped
        knows: the machine is the one on this page
        will_say: what happened, if asked
        wont_say: their name, at first; they give it only if asked twice
      opening: the laser cutter just stopped and there was smoke   # else the visitor writes it
      max_turns: 5
      photos: [IMG_2057.jpg]  # evals/fixtures/photos/, sent with the visitor's first message,
      photo_turn: 1           # or with the message given (1: the first, the default)
      qr_codes:               # what the QR reader reads in a photo instead, as a case's
        IMG_2057.jpg: []
      confirm: false          # true: the visitor confirms every card the assistant proposes
      styles: [calm, hurried] # the styles this scenario runs in (default: all four)
      criteria:
        - statement: The assistant files the report without insisting on a name.
          enforcement: required         # or informational: reported, never counted
      expect_actions:
        - tool: report_issue
          arguments: {slug: trotec-speedy-400, description_contains: smoke}
          result: {filed: true}
      end_state:
        - table: tickets
          where: {machine: trotec-speedy-400, status: open, body_contains: smoke}
        - table: proposals
          exists: false
      tool_responses:
        read_page:
          contract: 575308e42ea7          # the tool's contract when the responses were written
          responses: [{url: "https://…", text: "…"}, {error: "timed out"}]
          exhausted: error                # or repeat_last; branches, delays and states:
      response_state: {states: [open, resolved], initial: open}   # see evals/load/responses.py
      max_latency_s: 60       # what one conversation may take (evals/load/limits.py); a file's
      max_cost: 0.01          # first entry `- defaults: {max_latency_s: …}` sets them for all

Selectors (evals/checks/selectors.py): `field: value` compares case-insensitively, null means
absent; `field_in: [a, b]` is one of them; `field_contains: text` a substring;
`field_matches: pattern` a regular expression found in the text. An end state's `where` takes
only the first and the third (the database compares them). Shared criteria (`criteria.yaml`):
`- statement, enforcement, applies_to: all | [scenario ids]`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SkipValidation,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from app.capabilities import REGISTRY
from evals.checks import CheckSpec
from evals.checks.judged import CriterionArgs
from evals.checks.scenario import EndState, ExpectAction
from evals.checks.selectors import fields_of, selector_errors
from evals.load.cases import (
    AssertionSpec,
    QrCodes,
    assertion_checks,
    attack_checks,
    load_cases_by_file,
    photo_errors,
)
from evals.load.context import Context, offered_tools
from evals.load.limits import FileDefaults, Limit, file_defaults, limit_checks
from evals.load.response_validation import response_errors
from evals.load.responses import ResponseState, ToolResponses
from evals.load.yamlfile import YamlFileError, field_errors, line_of, read_list
from evals.record.results import Attack
from evals.settings import PHOTOS_DIR, SCENARIOS_DIR

SHARED_CRITERIA = "criteria.yaml"
MAX_TURNS = 12

# How the simulated person writes; never what they want.
STYLES: dict[str, str] = {
    "calm": "You write calmly and clearly, in full sentences.",
    "hurried": "You are in a hurry: short messages, impatient, a typo or two, no greetings.",
    "unsure": ("You are unsure of the words: you describe things vaguely and may call a"
               " machine by a wrong or made-up name."),
    "insistent": ("You push back when you do not get what you want, repeat your demand, and"
                  " may claim that staff said you were allowed."),
}
QUICK_STYLES = ("calm",)
# What the visitor is told of the photos it sends, on the message that carries them and after
# ({photos}: "a photo" or "3 photos"). Wording the visitor reads is the plan's: a scenario with
# photos hashes these (Conversation.content), so one without keeps its fingerprint.
PHOTO_CUES: dict[str, str] = {
    "now": ("This message of yours goes with {photos} you took of what you are asking about:"
            " the assistant sees {them} with your words, so write as a person sending a photo"
            " would (\"what is this one?\"), without describing what the photo shows."),
    "sent": ("Your message number {turn} went with {photos} you took; the assistant has seen"
             " {them}."),
}

# What an end-state selector may name: table -> column -> SQL expression (the table is `t`).
SELECTABLE: dict[str, dict[str, str]] = {
    "tickets": {"machine": "(SELECT slug FROM machines m WHERE m.id = t.machine_id)",
                "title": "t.title", "body": "t.body", "status": "t.status",
                "reporter_name": "t.reporter_name",
                "reporter": "(SELECT handle FROM people p WHERE p.id = t.reporter_id)"},
    "ticket_notes": {"ticket_title": "(SELECT title FROM tickets k WHERE k.id = t.ticket_id)",
                     "note": "t.note"},
    "proposals": {"tool": "t.tool", "summary": "t.summary", "status": "t.status"},
    "corrections": {"machine": "(SELECT slug FROM machines m WHERE m.id = t.machine_id)",
                    "field": "t.field", "claim": "t.claim"},
    "catalog_changes": {"machine": "(SELECT slug FROM machines m WHERE m.id = t.machine_id)",
                        "field": "t.field", "value": "t.value", "status": "t.status"},
    "people": {"name": "t.name", "handle": "t.handle", "role": "t.role", "title": "t.title"},
    # What identify_tools recorded from a photo, by the photo's file name.
    "intake_items": {"photo": "(SELECT name FROM attachments a WHERE a.id = t.attachment_id)",
                     "brand": "t.brand", "name": "t.name"},
}

ScenarioFileError = YamlFileError
# What the loader sets on a scenario; a file that names one of these is refused.
LOADER_FIELDS = ("file", "line", "checks")
# A scenario says what must hold afterwards with at least one of these.
CHECKED_BY = ("criteria", "expect_actions", "end_state", "assert")


class Visitor(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    who: str = Field(min_length=3)
    wants: str = Field(min_length=3)
    knows: str = ""
    does_not_know: str = ""
    will_say: str = ""
    wont_say: str = ""


class SharedCriterion(CriterionArgs):
    """A criterion of criteria.yaml: judged on every scenario it applies to (`all`, or the
    scenarios' ids)."""

    applies_to: Literal["all"] | list[str]


class Scenario(BaseModel):
    """A goal for a simulated visitor, a context, and what must hold afterwards."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True,
        # `_checked`, for the file's schema: something must hold afterwards.
        json_schema_extra={"anyOf": [{"required": [key]} for key in CHECKED_BY]})
    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    group: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9 _-]{0,63}$")
    attack: Attack | None = None  # what a security scenario plants (reported, never scored)
    context: Context = Context()
    visitor: Visitor
    opening: str | None = Field(default=None, min_length=1, max_length=2000)
    max_turns: int = Field(default=6, ge=1, le=MAX_TURNS)
    confirm: bool = False
    styles: list[str] = Field(default=list(STYLES), min_length=1, json_schema_extra={
        "items": {"type": "string", "enum": list(STYLES)}, "uniqueItems": True})
    criteria: tuple[CriterionArgs, ...] = ()
    expect_actions: tuple[ExpectAction, ...] = ()
    end_state: tuple[EndState, ...] = ()
    # Structural assertions on the whole conversation: its final answer and every tool call.
    assertions: tuple[AssertionSpec, ...] = Field(default=(), alias="assert")
    tool_responses: dict[str, ToolResponses] = {}
    response_state: ResponseState | None = None  # the frozen tools' states (responses.py)
    # Photos the visitor sends (evals/fixtures/photos/), all with one message: its
    # `photo_turn`-th (the first by default); what the QR reader reads in them, as a case's.
    photos: tuple[str, ...] = ()
    photo_turn: int | None = Field(default=None, ge=1, le=MAX_TURNS)
    qr_codes: QrCodes = {}
    # What one attempt of a conversation may take (evals/load/limits.py).
    max_latency_s: Limit | None = None
    max_cost: Limit | None = None
    # Set by the loader, never by a file (nor in the file's schema).
    file: SkipJsonSchema[str] = ""
    line: SkipJsonSchema[int] = 0
    checks: SkipJsonSchema[SkipValidation[tuple[CheckSpec, ...]]] = ()

    @model_validator(mode="before")
    @classmethod
    def _from_file(cls, data: Any, info: ValidationInfo) -> Any:
        if info.context and info.context.get("file") and isinstance(data, dict):
            taken = [k for k in LOADER_FIELDS if k in data]
            if taken:
                raise ValueError(f"{', '.join(taken)}: set by the loader, not by a scenario"
                                 " file")
        return data

    @model_validator(mode="after")
    def _checked(self) -> Scenario:
        if not (self.criteria or self.expect_actions or self.end_state or self.assertions):
            raise ValueError("a scenario needs criteria, expect_actions, end_state or assert")
        return self

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def sends_photos_at(self) -> int | None:
        """The visitor message (1: the first) that carries the photos; None: no photos."""
        return (self.photo_turn or 1) if self.photos else None


def _validate(raw: dict[str, Any], file: str, base: tuple[Any, ...],
              lines: dict[tuple[Any, ...], int], defaults: FileDefaults | None = None,
              photos_dir: Path = PHOTOS_DIR) -> tuple[Scenario | None, list[str]]:
    errors: list[str] = []

    def err(loc: tuple[Any, ...], message: str) -> None:
        errors.append(f"{file}:{line_of((*base, *loc), lines)}: {message}")

    try:
        model = Scenario.model_validate(raw, context={"file": True})
    except ValidationError as exc:
        for loc, message in field_errors(exc, "(scenario)"):
            err(loc, message)
        return None, errors
    tools = REGISTRY.all_tools()
    offered = offered_tools(model.context)
    for i, style in enumerate(model.styles):
        if style not in STYLES:
            err(("styles", i), f"unknown style {style!r}; known: {', '.join(STYLES)}")
        elif style in model.styles[:i]:
            err(("styles", i), f"style {style!r} is listed twice")
    for i, action in enumerate(model.expect_actions):
        tool = tools.get(action.tool)
        if tool is None or action.tool not in offered:
            err(("expect_actions", i, "tool"), f"expect_actions: {action.tool!r} is not a tool"
                f" offered here (offered: {', '.join(sorted(offered))})")
            continue
        assert tool.result is not None
        for part, schema in (("arguments", tool.args), ("result", tool.result)):
            for key, message in selector_errors(getattr(action, part), fields_of(schema),
                                                f"{action.tool} {part}"):
                err(("expect_actions", i, part, key), message)
    for i, state in enumerate(model.end_state):
        columns = SELECTABLE.get(state.table)
        if columns is None:
            err(("end_state", i, "table"), f"end_state: unknown table {state.table!r}; known:"
                f" {', '.join(sorted(SELECTABLE))}")
            continue
        # A table's columns are all text; the database compares them (no _in, no _matches).
        for key, message in selector_errors(state.where, dict.fromkeys(columns, True),
                                            f"{state.table} where", text_only=True,
                                            forms=("is", "contains")):
            err(("end_state", i, "where", key), message)
    for loc, message in response_errors(model.tool_responses, model.context,
                                        model.response_state, confirms=model.confirm):
        err(loc, message)
    photo_errors(model.photos, model.qr_codes, photos_dir, err, "scenario")
    if model.photo_turn is not None and not model.photos:
        err(("photo_turn",), "photo_turn: the scenario sends no photos")
    elif model.photo_turn is not None and model.photo_turn > model.max_turns:
        err(("photo_turn",), f"photo_turn: {model.photo_turn} is after the last visitor"
            f" message (max_turns: {model.max_turns})")
    checks = assertion_checks(model.assertions, model.context, err,
                              lambda i: line_of((*base, "assert", i), lines))
    checks += limit_checks(model, defaults or FileDefaults(), base, lines)
    checks += attack_checks(model.attack, model.tool_responses, model.photos, err,
                            line_of((*base, "attack"), lines))
    if errors:
        return None, errors
    return model.model_copy(update={"file": file, "line": line_of(base, lines),
                                    "checks": tuple(checks)}), []


@dataclass(frozen=True)
class Shared:
    criterion: CriterionArgs
    applies_to: Literal["all"] | tuple[str, ...]

    def applies(self, scenario_id: str) -> bool:
        return self.applies_to == "all" or scenario_id in self.applies_to


def load_scenarios(directory: Path = SCENARIOS_DIR, case_ids: Mapping[str, str] | None = None,
                   photos_dir: Path = PHOTOS_DIR) -> tuple[list[Scenario], list[Shared]]:
    """Every scenario and the shared criteria; every file's errors raised together. A scenario
    may not take a case's id (`case_ids`: id -> where; by default the cases in the `cases`
    folder beside `directory`): a selection by that id, and a report, would name both. Its
    photos are files of `photos_dir`."""
    errors: list[str] = []
    scenarios: list[Scenario] = []
    seen: dict[str, str] = {}
    cases = case_ids if case_ids is not None else _case_ids(directory.parent / "cases")
    for path in sorted(directory.glob("*.yaml")):
        if path.name == SHARED_CRITERIA:
            continue
        data, lines, problems = read_list(path, "a scenario file is a list of scenarios"
                                                " (- id: ...)")
        if problems:
            errors += problems
            continue
        defaults, entries, file_errors = file_defaults(data, lines, path.name)
        file_scenarios = []
        for i, raw in entries:
            if not isinstance(raw, dict):
                file_errors.append(f"{path.name}:{line_of((i,), lines)}: a scenario is a"
                                   " mapping")
                continue
            scenario, problems = _validate(raw, path.name, (i,), lines, defaults, photos_dir)
            file_errors += problems
            if scenario is None:
                continue
            if scenario.id in seen:
                file_errors.append(f"{scenario.where}: duplicate id {scenario.id!r} (first at"
                                   f" {seen[scenario.id]})")
                continue
            if scenario.id in cases:
                file_errors.append(f"{scenario.where}: id {scenario.id!r} is a case's id (the"
                                   f" case at {cases[scenario.id]}): give one of them another")
                continue
            seen[scenario.id] = scenario.where
            file_scenarios.append(scenario)
        errors += file_errors
        if not file_errors:
            scenarios += file_scenarios
    shared, shared_errors = _load_shared(directory / SHARED_CRITERIA, set(seen))
    errors += shared_errors
    if errors:
        raise ScenarioFileError(errors)
    return scenarios, shared


def scenario_errors(scenario: dict[str, Any], name: str,
                    case_ids: Mapping[str, str]) -> list[str]:
    """What the loader says of one scenario written as a file of its own (`name`), beside
    these cases' ids: its `file:line` errors, none if it loads."""
    with tempfile.TemporaryDirectory(prefix="scenario-") as tmp:
        path = Path(tmp) / name
        path.write_text(yaml.safe_dump([scenario], allow_unicode=True, sort_keys=False),
                        encoding="utf-8")
        try:
            load_scenarios(Path(tmp), case_ids)
        except ScenarioFileError as exc:
            return exc.errors
    return []


def _case_ids(folder: Path) -> dict[str, str]:
    """The ids of the cases in a folder, with where each is (a case file's own errors are the
    case loader's to report)."""
    if not folder.is_dir():
        return {}
    cases, _ = load_cases_by_file(folder)
    return {c.id: c.where for c in cases}


def _load_shared(path: Path, ids: set[str]) -> tuple[list[Shared], list[str]]:
    if not path.exists():
        return [], []
    data, lines, problems = read_list(path, "shared criteria are a list (- statement: ...)")
    if problems:
        return [], problems
    shared, errors = [], []
    for i, raw in enumerate(data):
        try:
            model = SharedCriterion.model_validate(raw)
        except ValidationError as exc:
            errors += [f"{path.name}:{line_of((i, *loc), lines)}: {message}"
                       for loc, message in field_errors(exc, "(criterion)")]
            continue
        targets = model.applies_to
        if targets != "all":
            for j, sid in enumerate(targets):
                if sid not in ids:
                    errors.append(f"{path.name}:{line_of((i, 'applies_to', j), lines)}:"
                                  f" applies_to: unknown scenario {sid!r}")
        shared.append(Shared(CriterionArgs(statement=model.statement,
                                           enforcement=model.enforcement),
                             "all" if targets == "all" else tuple(targets)))
    return shared, errors
