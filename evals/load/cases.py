"""Case files: YAML parsed with line numbers, validated; every error names file:line.

Errors across all files are collected and reported together; a file with any error loads no
case, so nothing is silently misread.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from app.capabilities import REGISTRY, PageContext, PromptContext
from app.identity import Identity
from evals.checks import ASSERTIONS
from evals.fixtures.catalog import fixtures_for
from evals.load.yamlfile import YamlFileError, read_list
from evals.settings import EVALS_DIR

CASES_DIR = EVALS_DIR / "cases"
PHOTOS_DIR = EVALS_DIR / "fixtures" / "photos"
MAX_PROMPT_CHARS = int(os.environ.get("EVAL_MAX_PROMPT_CHARS") or 20_000)


# A case-file error is a YAML-file error: one or more 'file:line: message' lines.
CaseFileError = YamlFileError


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def line_of(loc: tuple[Any, ...], lines: dict[tuple[Any, ...], int]) -> int:
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return 1


class HistoryTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    user: str | None = Field(default=None, max_length=MAX_PROMPT_CHARS)
    assistant: str | None = Field(default=None, max_length=MAX_PROMPT_CHARS)

    @model_validator(mode="after")
    def _one(self) -> HistoryTurn:
        if (self.user is None) == (self.assistant is None):
            raise ValueError("each history turn is exactly one of 'user:' or 'assistant:'")
        return self


class Context(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    page: Literal["gallery", "tool"] = "gallery"
    tool_id: str | None = Field(default=None, alias="toolId")
    as_: Literal["student", "staff", "super_admin"] | None = Field(default=None, alias="as")
    path: str | None = None
    selection: list[str] = []
    catalog: Literal["demo", "lab"] = "demo"
    curate: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> Context:
        if self.page == "tool" and not self.tool_id:
            raise ValueError("page: tool needs a toolId")
        if self.tool_id and self.page != "tool":
            raise ValueError("toolId goes with page: tool")
        if self.curate and self.page != "tool":
            raise ValueError("curate: true goes with page: tool")
        if self.tool_id and self.tool_id not in fixtures_for(self.catalog).slugs:
            raise ValueError(f"toolId {self.tool_id!r} is not a slug in the {self.catalog}"
                             f" catalogue: {sorted(fixtures_for(self.catalog).slugs)}")
        if self.path and self.page == "tool":
            raise ValueError("give either page: tool with toolId, or a path")
        if self.selection and not self.path:
            raise ValueError("selection needs a path (the page the rows are on)")
        return self

    @property
    def page_path(self) -> str:
        if self.tool_id:
            return f"/tools/{self.tool_id}" + ("/curate" if self.curate else "")
        return self.path or "/"


def context_for(page: str, role: str | None) -> dict[str, Any]:
    """A case's `context:` for a page path and an audience: the inverse of page_path."""
    context: dict[str, Any] = {}
    parts = page.strip("/").split("/")
    if len(parts) >= 2 and parts[0] == "tools":
        context.update(page="tool", toolId=parts[1])
        if len(parts) == 3 and parts[2] == "curate":
            context["curate"] = True
    elif page not in ("", "/"):
        context["path"] = page
    if role:
        context["as"] = role
    return context


# Kinds whose value names a model tool: a tool the case's audience is never offered on its page
# would make them pass (or fail) vacuously.
TOOL_CALL_KINDS = frozenset({"called_tool", "not_called_tool", "proposed_action"})


def offered_tools(context: Context) -> set[str]:
    """The tools compose_chat offers this audience on this page (from the registry alone)."""
    identity = Identity(0, "eval", "eval", context.as_) if context.as_ else None
    kind = ("curate" if context.curate else "tool") if context.tool_id else \
        {"/staff/tickets": "tickets", "/people": "people"}.get(context.page_path, "gallery")
    machine = {"slug": context.tool_id} if context.tool_id else None
    ctx = PromptContext(identity=identity, page=PageContext(context.page_path, kind, machine),
                        catalogue=[])
    return {t.name for cap in REGISTRY.for_context(ctx) for t in cap.tools}


class AssertionSpec(BaseModel):
    model_config = ConfigDict(extra="allow")
    kind: str


class CaseModel(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    prompt: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS)
    context: Context = Context()
    history: list[HistoryTurn] = []
    photos: list[str] = []
    assertions: list[AssertionSpec] = Field(default=[], alias="assert")
    rubric: str | None = Field(default=None, min_length=1)
    must_not: str | None = Field(default=None, min_length=1)
    group: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9 _-]{0,63}$")

    @model_validator(mode="after")
    def _checked(self) -> CaseModel:
        if not self.assertions and not self.rubric and not self.must_not:
            raise ValueError("a case needs assert, rubric or must_not")
        return self


@dataclass(frozen=True)
class Check:
    kind: str
    args: BaseModel
    line: int

    def describe(self) -> str:
        data = self.args.model_dump(exclude_none=True)
        return self.kind + (f" {data}" if data else "")


@dataclass(frozen=True)
class Case:
    id: str
    file: str
    line: int
    prompt: str
    context: Context
    history: tuple[HistoryTurn, ...]
    photos: tuple[str, ...]
    checks: tuple[Check, ...]
    rubric: str | None = None
    must_not: str | None = None
    group: str | None = None  # a user journey's name: selects, never scores

    @property
    def judged(self) -> bool:
        return bool(self.rubric or self.must_not)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def _validate_case(raw: dict[str, Any], file: str, base: tuple[Any, ...],
                   lines: dict[tuple[Any, ...], int], photos_dir: Path) -> tuple[Case | None,
                                                                                  list[str]]:
    errors: list[str] = []

    def err(loc: tuple[Any, ...], message: str) -> None:
        errors.append(f"{file}:{line_of((*base, *loc), lines)}: {message}")

    try:
        model = CaseModel.model_validate(raw)
    except ValidationError as exc:
        for e in exc.errors():
            loc = tuple("assert" if p == "assertions" else p for p in e["loc"])
            key = ".".join(str(p) for p in loc) or "(case)"
            value = e.get("input")
            shown = f" (got {_short(value)})" if not isinstance(value, dict | list) else ""
            err(loc, f"{key}: {e['msg']}{shown}")
        return None, errors
    checks = []
    offered = offered_tools(model.context)
    for i, spec in enumerate(model.assertions):
        kind = ASSERTIONS.get(spec.kind)
        if kind is None:
            err(("assert", i, "kind"), f"unknown assertion kind {spec.kind!r}; known: "
                f"{', '.join(sorted(ASSERTIONS))}")
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
        if spec.kind in TOOL_CALL_KINDS and tool not in offered:
            who = model.context.as_ or "anonymous visitor"
            err(("assert", i, "value"),
                f"{spec.kind}: {tool!r} is never offered to {who} on {model.context.page_path}"
                f" (offered: {', '.join(sorted(offered)) or 'no tool'})")
            continue
        checks.append(Check(spec.kind, args, line_of((*base, "assert", i), lines)))
    for i, name in enumerate(model.photos):
        if "/" in name or not (photos_dir / name).is_file():
            err(("photos", i), f"photo {name!r} not found in {photos_dir}")
    if errors:
        return None, errors
    return Case(model.id, file, line_of(base, lines), model.prompt, model.context,
                tuple(model.history), tuple(model.photos), tuple(checks), model.rubric,
                model.must_not, model.group), []


def case_errors(case: dict[str, Any], name: str = "case.yaml",
                photos: dict[str, bytes] | None = None) -> list[str]:
    """What the loader says of one case written as a file of its own (`name`, with these
    photos beside it, or the fixture photos): its `file:line` errors, none if it loads."""
    import tempfile

    import yaml

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
        file_cases, file_errors = [], []
        for i, raw in enumerate(data):
            if not isinstance(raw, dict):
                file_errors.append(f"{name}:{line_of((i,), lines)}: a case is a mapping")
                continue
            case, case_errors = _validate_case(raw, name, (i,), lines, photos_dir)
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


def select_groups(cases: list[Case], spec: str | None) -> list[Case]:
    """EVAL_GROUPS / --group: comma-separated group names."""
    if not spec or not spec.strip():
        return cases
    names = [n.strip() for n in spec.split(",") if n.strip()]
    groups = {c.group for c in cases if c.group}
    unknown = [n for n in names if n not in groups]
    if unknown:
        raise CaseFileError([f"--group: unknown {', '.join(repr(n) for n in unknown)}. Groups:"
                             f" {', '.join(sorted(groups)) or 'none (add group: to a case)'}"])
    return [c for c in cases if c.group in names]


def select(cases: list[Case], spec: str | None) -> list[Case]:
    """EVAL_CASES: comma-separated file names (without .yaml) or case ids."""
    if not spec or not spec.strip():
        return cases
    names = [n.strip() for n in spec.split(",") if n.strip()]
    files = {Path(c.file).stem for c in cases}
    ids = {c.id for c in cases}
    unknown = [n for n in names if n not in files and n not in ids]
    if unknown:
        raise CaseFileError([
            f"EVAL_CASES: unknown {', '.join(repr(n) for n in unknown)}. Files: "
            f"{', '.join(sorted(files))}. Case ids: {', '.join(sorted(ids))}"
        ])
    return named(cases, set(names))


def named(items: list[Any], names: set[str]) -> list[Any]:
    """The cases or scenarios a selection names, by id or by file (without .yaml)."""
    return [i for i in items if i.id in names or Path(i.file).stem in names]


