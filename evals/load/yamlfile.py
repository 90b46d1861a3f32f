"""Reading the evals' YAML files safely: line numbers for every path, and every malformed file
a `file:line: message` error, found quickly and in little memory.

Refused with a clear error, never a traceback: a file over EVAL_MAX_CASE_FILE_BYTES, bytes that
are not UTF-8, NUL and other control characters, a lone surrogate written as an escape, anchors
and aliases (`&a`, `*a`: one alias can expand to gigabytes) and merge keys (`<<`), nesting deeper
than MAX_DEPTH, a mapping key that is not a plain scalar, and duplicate keys.
"""

from __future__ import annotations

import hashlib
import pickle
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.cyaml import CParser
from yaml.resolver import Resolver

from app.text import CONTROL, SURROGATE, control_named
from evals.settings import eval_settings

M = TypeVar("M", bound=BaseModel)

MAX_DEPTH = 32
_LINES = "__lines__"
_LINE = "__line__"


class YamlFileError(ValueError):
    """One or more errors, each 'file:line: message'."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors))
        self.errors = errors


class _Refused(yaml.MarkedYAMLError):
    pass


class _Items(list[Any]):
    """A sequence that knows the line each of its items starts on."""

    lines: list[int]


class _LineLoader(Composer, CParser, SafeConstructor, Resolver):
    """Records each mapping's line, each key's line and each sequence item's line; refuses
    what the module doc lists. libyaml scans and parses (PyYAML's own scanner took 76 ms of
    CPU for a file of 200 cases); the nodes are composed here, where each event is checked."""

    def __init__(self, stream: str) -> None:
        CParser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(None, None, f"aliases (*{event.anchor}) are not supported; write"
                           " the value out", event.start_mark)
        if getattr(event, "anchor", None):
            raise _Refused(None, None, f"anchors (&{event.anchor}) are not supported; write"
                           " the value out", event.start_mark)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _Refused(None, None, f"nested deeper than {MAX_DEPTH} levels",
                           event.start_mark)
        try:
            return super().compose_node(parent, index)  # type: ignore[no-untyped-call]
        finally:
            self._depth -= 1

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        # PyYAML's constructors raise plain errors on a value they cannot build (a date
        # 2024-13-45, an integer past Python's 4,300 digits, `!!bool maybe`): file:line.
        try:
            return super().construct_object(node, deep=deep)  # type: ignore[no-untyped-call]
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, KeyError, OverflowError) as exc:
            raise _Refused(None, None, f"{node.tag.rsplit(':', 1)[-1]} value that cannot be"
                           f" read ({exc})", node.start_mark) from exc

    def construct_scalar(self, node: yaml.ScalarNode) -> Any:
        # The file's text is checked for control characters, but a double-quoted scalar can
        # write one as an escape ("\0", "\x07"), and half a UTF-16 pair too ("\ud800", which
        # no text holds: the case could be neither fingerprinted nor stored): the value is
        # checked too.
        value = super().construct_scalar(node)  # type: ignore[no-untyped-call]
        bad = (CONTROL.search(value) or SURROGATE.search(value)) \
            if isinstance(value, str) else None
        if bad:
            raise _Refused(None, None, f"{control_named(bad.group())} (written as an escape);"
                           " a case file is plain text", node.start_mark)
        return value

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if not isinstance(node, yaml.MappingNode):  # `!!map [a]`: a tag on another shape
            raise _Refused(None, None, "a mapping tag on something that is not a mapping",
                           node.start_mark)
        lines: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise _Refused(None, None, "merge keys (<<) are not supported; write the keys"
                               " out", key_node.start_mark)
            if not isinstance(key_node, yaml.ScalarNode):
                raise _Refused(None, None, "a mapping key must be a plain value, not a list or"
                               " a mapping", key_node.start_mark)
            key = self.construct_object(key_node, deep=True)  # type: ignore[no-untyped-call]
            if key in (_LINE, _LINES):  # the reader's own bookkeeping: it would vanish
                raise _Refused(None, None, f"{key!r} is not a key a file may use",
                               key_node.start_mark)
            if key in lines:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {lines[key]})",
                    key_node.start_mark)
            lines[key] = key_node.start_mark.line + 1
        mapping = super().construct_mapping(node, deep=deep)
        mapping[_LINE] = node.start_mark.line + 1
        mapping[_LINES] = lines
        return mapping

    def construct_items(self, node: yaml.SequenceNode) -> Any:
        # SafeLoader's own constructor fills a plain list after yielding it; this one yields
        # the list that knows its items' lines.
        items = _Items()
        items.lines = []
        yield items
        items.extend(self.construct_sequence(node))
        items.lines = [child.start_mark.line + 1 for child in node.value]


_LineLoader.add_constructor("tag:yaml.org,2002:seq", _LineLoader.construct_items)


def _strip(obj: Any, path: tuple[Any, ...], lines: dict[tuple[Any, ...], int]) -> Any:
    """Remove the line bookkeeping, recording the line of every path."""
    if isinstance(obj, dict):
        lines[path] = obj.pop(_LINE)
        for key, line in obj.pop(_LINES).items():
            lines[(*path, key)] = line
        return {k: _strip(v, (*path, k), lines) for k, v in obj.items()}
    if isinstance(obj, list):
        for i, line in enumerate(getattr(obj, "lines", ())):
            lines.setdefault((*path, i), line)
        return [_strip(v, (*path, i), lines) for i, v in enumerate(obj)]
    return obj


def _text(path: Path) -> str:
    name = path.name
    try:
        size = path.stat().st_size
        limit = eval_settings().max_case_file_bytes
        if size > limit:
            raise YamlFileError([f"{name}:1: the file is {size:,} bytes; the limit is"
                                 f" {limit:,} (EVAL_MAX_CASE_FILE_BYTES)"])
        raw = path.read_bytes()
    except OSError as exc:
        raise YamlFileError([f"{name}:1: cannot read it: {exc.strerror}"]) from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise YamlFileError([f"{name}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x});"
                             " save the file as UTF-8"]) from exc
    bad = CONTROL.search(text)
    if bad:
        line = text[:bad.start()].count("\n") + 1
        raise YamlFileError([f"{name}:{line}: {control_named(bad.group())}; a case file is"
                             " plain text"])
    return text


# What a text read to, kept for the next read of the same text, pickled: unpickling gives the
# caller objects of its own (nothing shared to mutate) about a hundred times faster than PyYAML
# parses (43 case and labelled files: 1.02 s against 0.01 s). A run, the workspace, the MCP
# server and the tests read the same files again and again in one process.
_READ: OrderedDict[tuple[str, str], bytes] = OrderedDict()
_READ_KEPT = 256
_READ_LOCK = threading.Lock()  # the workspace reads files from threads


def read_yaml(path: Path) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """A YAML file's data and the line of every path in it."""
    text = _text(path)
    key = (path.name, hashlib.sha256(text.encode()).hexdigest())
    with _READ_LOCK:
        kept = _READ.get(key)
        if kept is not None:
            _READ.move_to_end(key)
    if kept is not None:
        data, lines = pickle.loads(kept)  # noqa: S301 (pickled by this process, below)
        return data, lines
    data, lines = _parse(path, text)
    pickled = pickle.dumps((data, lines), protocol=pickle.HIGHEST_PROTOCOL)
    with _READ_LOCK:
        _READ[key] = pickled
        if len(_READ) > _READ_KEPT:
            _READ.popitem(last=False)
    return data, lines


# Half of a UTF-16 pair written as an escape ("\ud800", "\U0000DFFF"): libyaml refuses it
# with this problem, its mark on the escape's hex digits; it is named as the module's other
# refusals name it.
_BAD_ESCAPE = "found invalid Unicode character escape code"
_SURROGATE_HEX = re.compile(r"(?:0000)?([dD][89a-fA-F][0-9a-fA-F]{2})")


def _surrogate_escape(text: str, exc: yaml.MarkedYAMLError) -> str | None:
    mark = exc.problem_mark
    if exc.problem != _BAD_ESCAPE or mark is None:
        return None
    lines = text.splitlines()
    found = _SURROGATE_HEX.match(lines[mark.line], mark.column) \
        if 0 <= mark.line < len(lines) else None
    if found is None:
        return None
    return (f"{control_named(chr(int(found.group(1), 16)))} (written as an escape); a case"
            " file is plain text")


def _parse(path: Path, text: str) -> tuple[Any, dict[tuple[Any, ...], int]]:
    try:
        data = yaml.load(text, Loader=_LineLoader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        prefix = "" if isinstance(exc, _Refused) else "YAML: "
        problem = _surrogate_escape(text, exc) or f"{prefix}{exc.problem or exc}"
        raise YamlFileError([f"{path.name}:{line}: {problem}"]) from exc
    except yaml.YAMLError as exc:
        raise YamlFileError([f"{path.name}:1: YAML: {exc}"]) from exc
    except RecursionError as exc:
        raise YamlFileError([f"{path.name}:1: nested too deeply"]) from exc
    except (ValueError, TypeError, KeyError, OverflowError) as exc:  # a tag PyYAML trips on
        raise YamlFileError([f"{path.name}:1: YAML: a value that cannot be read ({exc})"]
                            ) from exc
    lines: dict[tuple[Any, ...], int] = {}
    return _strip(data, (), lines), lines


def read_items(path: Path, model: type[M], what: str, whole: str
               ) -> tuple[list[tuple[M, int]], list[str]]:
    """A file that must hold a YAML list of one model's items (labelled turns, transcripts,
    labels): each valid item with the line it starts on, and every problem as `file:line:
    message` (`what` when the file is no list; `whole` names an item in a field error)."""
    data, lines, errors = read_list(path, what)
    items: list[tuple[M, int]] = []
    for i, raw in enumerate(data):
        try:
            item = model.model_validate(raw)
        except ValidationError as exc:
            errors += [f"{path.name}:{line_of((i, *loc), lines)}: {message}"
                       for loc, message in field_errors(exc, whole)]
            continue
        items.append((item, line_of((i,), lines)))
    return items, errors


def read_list(path: Path, what: str) -> tuple[list[Any], dict[tuple[Any, ...], int], list[str]]:
    """A file that must hold a YAML list (of cases, scenarios, labelled items): its items and
    their lines, or its errors."""
    try:
        data, lines = read_yaml(path)
    except YamlFileError as exc:
        return [], {}, exc.errors
    if not isinstance(data, list):
        return [], lines, [f"{path.name}:1: {what}"]
    return data, lines, []


def field_errors(exc: ValidationError, whole: str) -> list[tuple[tuple[Any, ...], str]]:
    """Each problem pydantic found in a file's item: where (its location, for line_of), and
    'field.path: message' (`whole` names the item itself)."""
    return [(tuple(e["loc"]), f"{'.'.join(str(p) for p in e['loc']) or whole}:"
                              f" {e['msg'].removeprefix('Value error, ')}")
            for e in exc.errors()]


def no_flag(value: Any) -> Any:
    """A number, never `true` or `false` (YAML's yes/no too), which a float would read as 1
    or 0; `2e-3`, which YAML 1.1 reads as text, is still a number (a BeforeValidator)."""
    if isinstance(value, bool):
        raise ValueError(f"{value} is not a number")
    return value


def short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def line_of(loc: tuple[Any, ...], lines: dict[tuple[Any, ...], int]) -> int:
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return 1
