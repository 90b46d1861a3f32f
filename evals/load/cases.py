"""Case files: YAML parsed with line numbers, validated; every error names file:line.

Errors across all files are collected and reported together; a file with any error loads no
case, so nothing is silently misread. A Case is one model: what the file says, validated, plus
what the loader adds (its file, line and checks).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    SkipValidation,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue, SkipJsonSchema
from pydantic_core import CoreSchema, PydanticCustomError

from evals.checks import CHECKS, CheckSpec, authored, authored_models
from evals.checks.judged import RubricArgs
from evals.checks.security import CHANNEL_TOOLS, AttackArgs
from evals.load.context import Context, offered_tools
from evals.load.limits import FileDefaults, Limit, file_defaults, limit_checks
from evals.load.plan import check_content
from evals.load.response_validation import response_errors
from evals.load.responses import ResponseState, ToolResponses
from evals.load.yamlfile import YamlFileError, line_of, read_list, short
from evals.record.results import Attack
from evals.settings import CASES_DIR, PHOTOS_DIR, eval_settings

# A case-file error is a YAML-file error: one or more 'file:line: message' lines.
CaseFileError = YamlFileError
# What the loader sets on a case; a file that names one of these is refused.
LOADER_FIELDS = ("file", "line", "checks")
# A case says how its answer is checked with at least one of these.
CHECKED_BY = ("assert", "rubric", "must_not")


def _not_too_long(text: str | None) -> str | None:
    """At most EVAL_MAX_PROMPT_CHARS characters (read when a file is loaded, not imported)."""
    limit = eval_settings().max_prompt_chars
    if text is not None and len(text) > limit:
        raise PydanticCustomError("string_too_long",
                                  "String should have at most {max_length} characters",
                                  {"max_length": limit})
    return text


class HistoryTurn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra={
        "oneOf": [{"required": ["user"]}, {"required": ["assistant"]}]})
    user: str | None = None
    assistant: str | None = None

    _length = field_validator("user", "assistant")(_not_too_long)

    @model_validator(mode="after")
    def _one(self) -> HistoryTurn:
        if (self.user is None) == (self.assistant is None):
            raise ValueError("each history turn is exactly one of 'user:' or 'assistant:'")
        return self

    def message(self) -> dict[str, str]:
        return {"role": "user", "content": self.user} if self.user is not None \
            else {"role": "assistant", "content": self.assistant or ""}


# What the QR reader reads in an item's photo instead of decoding it: photo -> the codes' texts
# ([] for none). A case's and a scenario's `qr_codes:`.
QrCodes = dict[str, tuple[Annotated[str, Field(min_length=1)], ...]]


class AssertionSpec(BaseModel):
    """One entry of `assert:` as written: a kind and its arguments (validated by the kind)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    kind: str

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """What `assertion_checks` accepts: one of the kinds `assert:` may name, with that
        kind's own arguments (a union discriminated by `kind`, from the check registry)."""
        kinds: Any = Annotated[Union[authored_models()], Field(discriminator="kind")]  # noqa: UP007
        schema = handler(TypeAdapter(kinds).core_schema)
        schema["description"] = ("A structural check: `kind` names it, its arguments go"
                                  " beside it (docs/cases-and-checks.md, The assertion"
                                  " vocabulary).")
        return schema


class Case(BaseModel):
    """A single-turn case: a prompt in a context, and how the answer is checked."""

    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, frozen=True,
        # `_checked`, for the file's schema: a case is checked somehow.
        json_schema_extra={"anyOf": [{"required": [key]} for key in CHECKED_BY]})
    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    prompt: str = Field(min_length=1)
    context: Context = Context()
    history: tuple[HistoryTurn, ...] = ()
    photos: tuple[str, ...] = ()
    assertions: tuple[AssertionSpec, ...] = Field(default=(), alias="assert")
    rubric: str | None = Field(default=None, min_length=1)
    must_not: str | None = Field(default=None, min_length=1)
    group: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9 _-]{0,63}$")
    # The security suite's items say what they plant and where (reported, never scored).
    attack: Attack | None = None
    # What a tool answers instead of running (evals/load/responses.py), the states those answers
    # share, and what the QR reader reads in a photo instead of decoding it: photo -> the codes'
    # texts ([] for none).
    tool_responses: dict[str, ToolResponses] = {}
    response_state: ResponseState | None = None
    qr_codes: QrCodes = {}
    # What one attempt may take (evals/load/limits.py; the file's defaults otherwise).
    max_latency_s: Limit | None = None
    max_cost: Limit | None = None
    # Set by the loader, never by a file (nor in the file's schema).
    file: SkipJsonSchema[str] = ""
    line: SkipJsonSchema[int] = 0
    checks: SkipJsonSchema[SkipValidation[tuple[CheckSpec, ...]]] = ()

    _length = field_validator("prompt")(_not_too_long)

    @model_validator(mode="before")
    @classmethod
    def _from_file(cls, data: Any, info: ValidationInfo) -> Any:
        if info.context and info.context.get("file") and isinstance(data, dict):
            taken = [k for k in LOADER_FIELDS if k in data]
            if taken:
                raise ValueError(f"{', '.join(taken)}: set by the loader, not by a case file")
        return data

    @model_validator(mode="after")
    def _checked(self) -> Case:
        if not self.assertions and not self.rubric and not self.must_not and not self.checks:
            raise ValueError("a case needs assert, rubric or must_not")
        return self

    # The item seam (evals/load/items.py) ---------------------------------------------------

    @property
    def executor(self) -> Literal["app"]:
        return "app"

    @property
    def single_turn(self) -> bool:
        return True

    @property
    def max_turns(self) -> int:
        return 1

    @property
    def names(self) -> tuple[str, ...]:
        return (self.id,)

    @property
    def frozen_tools(self) -> frozenset[str]:
        return frozenset(self.tool_responses)

    @property
    def judged(self) -> bool:
        return bool(self.rubric or self.must_not)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def history_messages(self) -> list[dict[str, str]]:
        """The earlier turns as chat messages, oldest first."""
        return [t.message() for t in self.history]

    def structural(self) -> tuple[CheckSpec, ...]:
        return tuple(c for c in self.checks if not CHECKS[c.kind].needs_judge)

    def content(self) -> dict[str, Any]:
        """What the plan fingerprint hashes: what the case asks, what its tools and QR reader
        answer, and how it is judged, independent of its file, line and group. (A case without
        frozen answers hashes as it did before they existed.)"""
        content: dict[str, Any] = {
            "prompt": self.prompt,
            "context": self.context.model_dump(by_alias=True, mode="json"),
            "history": [h.model_dump(exclude_none=True) for h in self.history],
            "photos": list(self.photos),
            "checks": check_content(self.structural()),
            "rubric": self.rubric,
            "must_not": self.must_not,
        }
        if self.tool_responses:
            content["tool_responses"] = {name: r.content()
                                         for name, r in self.tool_responses.items()}
        if self.response_state is not None:
            content["response_state"] = self.response_state.model_dump(mode="json")
        if self.qr_codes:
            content["qr_codes"] = {photo: list(codes) for photo, codes in self.qr_codes.items()}
        return content


def _validate_case(raw: dict[str, Any], file: str, base: tuple[Any, ...],
                   lines: dict[tuple[Any, ...], int], photos_dir: Path,
                   defaults: FileDefaults | None = None) -> tuple[Case | None, list[str]]:
    errors: list[str] = []

    def err(loc: tuple[Any, ...], message: str) -> None:
        errors.append(f"{file}:{line_of((*base, *loc), lines)}: {message}")

    try:
        model = Case.model_validate(raw, context={"file": True})
    except ValidationError as exc:
        for e in exc.errors():
            loc = tuple("assert" if p == "assertions" else p for p in e["loc"])
            key = ".".join(str(p) for p in loc) or "(case)"
            value = e.get("input")
            shown = f" (got {short(value)})" if not isinstance(value, dict | list) else ""
            err(loc, f"{key}: {e['msg']}{shown}")
        return None, errors
    checks = assertion_checks(model.assertions, model.context, err,
                              lambda i: line_of((*base, "assert", i), lines))
    photo_errors(model.photos, model.qr_codes, photos_dir, err, "case")
    checks += attack_checks(model.attack, model.tool_responses, model.photos, err,
                            line_of((*base, "attack"), lines))
    for loc, message in response_errors(model.tool_responses, model.context,
                                        model.response_state):
        err(loc, message)
    if errors:
        return None, errors
    checks += limit_checks(model, defaults or FileDefaults(), base, lines)
    if model.judged:
        checks.append(CheckSpec("rubric", RubricArgs(rubric=model.rubric,
                                                     must_not=model.must_not),
                                line_of(base, lines)))
    return model.model_copy(update={"file": file, "line": line_of(base, lines),
                                    "checks": tuple(checks)}), []


def attack_checks(attack: Attack | None, tool_responses: dict[str, ToolResponses],
                  photos: tuple[str, ...], err: Callable[[tuple[Any, ...], str], None],
                  line: int) -> list[CheckSpec]:
    """The check that an item's attack reached the model (an attack that never arrived is
    undecided, never resisted); an attack whose channel the item never plants is an error:
    a tool channel needs that tool's frozen response, a QR code a photo."""
    if attack is None:
        return []
    tool = CHANNEL_TOOLS.get(attack.channel)
    if tool is not None and tool not in tool_responses:
        err(("attack", "channel"), f"attack.channel: {attack.channel} arrives through {tool},"
            f" but the item freezes no response of {tool} (tool_responses) to plant it in")
    elif tool is not None and tool_responses[tool].branches:
        # Delivery is read as "the tool ran": a branch could answer without the plant.
        err(("tool_responses", tool), f"{tool}: an attack's channel answers one way (no"
            " branches), so that the tool running is the attack arriving")
    if attack.channel == "qr_code" and not photos:
        err(("attack", "channel"), "attack.channel: qr_code arrives in a photo's QR code, but"
            " the item sends no photo")
    return [CheckSpec("attack_delivered", AttackArgs(channel=attack.channel), line)]


def photo_errors(photos: tuple[str, ...], qr_codes: QrCodes, photos_dir: Path,
                 err: Callable[[tuple[Any, ...], str], None], what: str) -> None:
    """An item's `photos:` and `qr_codes:` (a case's or a scenario's, `what`): each photo a
    file of `photos_dir`, sent once (the route stores each under its own attachment id), and
    QR codes only for photos the item sends; each problem goes to `err` with its place."""
    for i, name in enumerate(photos):
        try:
            there = "/" not in name and (photos_dir / name).is_file()
        except (OSError, ValueError):  # a name too long for the file system, a NUL
            there = False
        if not there:
            err(("photos", i), f"photo {name!r} not found in {photos_dir}")
        elif name in photos[:i]:
            err(("photos", i), f"photo {name!r} is listed twice")
    for name in qr_codes:
        if name not in photos:
            err(("qr_codes", name), f"qr_codes: {name!r} is not one of this {what}'s photos"
                f" ({', '.join(photos) or 'none'})")


def assertion_checks(assertions: tuple[AssertionSpec, ...], context: Context,
                     err: Callable[[tuple[Any, ...], str], None],
                     line: Callable[[int], int]) -> list[CheckSpec]:
    """An `assert:` list (a case's or a scenario's) as checks; each problem goes to `err` with
    its place under `assert`."""
    checks = []
    offered = offered_tools(context)
    kinds = authored()
    for i, spec in enumerate(assertions):
        kind = kinds.get(spec.kind)
        if kind is None:
            err(("assert", i, "kind"), f"unknown assertion kind {spec.kind!r}; known: "
                f"{', '.join(sorted(kinds))}")
            continue
        try:
            args = kind.args.model_validate(spec.model_extra or {})
        except ValidationError as exc:
            for e in exc.errors():
                sub = tuple(e["loc"])
                key = ".".join(str(p) for p in sub) or "(arguments)"
                err(("assert", i, *sub[:1]),
                    f"{spec.kind}: {key}: {e['msg']}".replace("Value error, ", ""))
            continue
        tool = getattr(args, "value", None)
        if kind.names_tool and tool not in offered:
            who = context.as_ or "anonymous visitor"
            err(("assert", i, "value"),
                f"{spec.kind}: {tool!r} is never offered to {who} on {context.page_path}"
                f" (offered: {', '.join(sorted(offered)) or 'no tool'})")
            continue
        checks.append(CheckSpec(spec.kind, args, line(i)))
    return checks


def case_errors(case: dict[str, Any], name: str = "case.yaml",
                photos: dict[str, bytes] | None = None) -> list[str]:
    """What the loader says of one case written as a file of its own (`name`, with these
    photos beside it, or the fixture photos): its `file:line` errors, none if it loads."""
    with tempfile.TemporaryDirectory(prefix="case-") as tmp:
        folder = Path(tmp)
        for photo, data in (photos or {}).items():
            (folder / photo).write_bytes(data)
        path = folder / name
        path.write_text(yaml.safe_dump([case], allow_unicode=True, sort_keys=False),
                        encoding="utf-8")
        _, errors = load_cases_by_file(path, folder if photos is not None else PHOTOS_DIR)
    return [e for lines in errors.values() for e in lines]


def load_cases(directory: Path = CASES_DIR, photos_dir: Path = PHOTOS_DIR) -> list[Case]:
    """Every case in every *.yaml file of `directory` (or the one file given); all errors
    raised together."""
    cases, errors = load_cases_by_file(directory, photos_dir)
    if errors:
        raise CaseFileError([e for file_errors in errors.values() for e in file_errors])
    return cases


def load_cases_by_file(directory: Path = CASES_DIR, photos_dir: Path = PHOTOS_DIR
                       ) -> tuple[list[Case], dict[str, list[str]]]:
    """The cases of every file that loads, and each other file's errors (file name ->
    'file:line: message' lines). A file with any error loads no case."""
    errors: dict[str, list[str]] = {}
    cases: list[Case] = []
    seen: dict[str, str] = {}
    files = [directory] if directory.is_file() else sorted(directory.glob("*.yaml"))
    if not files:
        raise CaseFileError([f"{directory}: no *.yaml case files"])
    for path in files:
        name = path.name
        data, lines, problems = read_list(path, "a case file is a list of cases (- id: ...)")
        if problems:
            errors[name] = problems
            continue
        defaults, entries, file_errors = file_defaults(data, lines, name)
        file_cases = []
        for i, raw in entries:
            if not isinstance(raw, dict):
                file_errors.append(f"{name}:{line_of((i,), lines)}: a case is a mapping")
                continue
            case, case_errors = _validate_case(raw, name, (i,), lines, photos_dir, defaults)
            file_errors += case_errors
            if case is None:
                continue
            if case.id in seen:
                file_errors.append(f"{case.where}: duplicate id {case.id!r} (first at "
                                   f"{seen[case.id]})")
                continue
            seen[case.id] = case.where
            file_cases.append(case)
        if file_errors:
            errors[name] = file_errors
        else:
            cases += file_cases
    return cases, errors
