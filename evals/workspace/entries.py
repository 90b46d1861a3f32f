"""A case or scenario file as the workspace edits it: a YAML list whose entries start with `- `
at the first column. An edit replaces only the text of the entries it changes (each dumped by
ruamel.yaml, which keeps the comments and the key order inside that entry), so comments, blank
lines and quoting elsewhere stay as they were and the change reads as a small diff. The line
that names the file's schema (`# yaml-language-server: $schema=…`, evals/load/schema.py) is the
file's own: it stays first whatever entry is edited, added or removed."""

from __future__ import annotations

import difflib
import io
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from evals.load.schema import SCHEMA_LINE
from evals.workspace.refusals import Conflict, Invalid, WriteRefused

_ITEM = re.compile(r"^- ")
Edit = Callable[[list[str]], list[str]]  # a file's entries (texts) -> its new entries


# entries --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Layout:
    """A list file cut into its head, its entries, and what lies between them. An entry's
    `lead` is the run of column-0 comment lines right above it (its heading: it moves and goes
    with the entry), but never the file's schema line, which is always the head's; `gaps[i]`
    (blank lines, other comments) follows entry i."""

    head: str
    leads: list[str]
    entries: list[str]
    gaps: list[str]

    def join(self) -> str:
        return self.head + "".join(lead + entry + gap for lead, entry, gap in
                                   zip(self.leads, self.entries, self.gaps, strict=True))


def layout(text: str, name: str) -> Layout:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\r\n" if "\r\n" in text else "\n"  # a last line ends like the others
    starts = [i for i, line in enumerate(lines) if _ITEM.match(line) or line.rstrip() == "-"]
    if not starts:
        if any(line.strip() and not line.lstrip().startswith("#") for line in lines):
            raise WriteRefused(f"{name}: the workspace edits lists written as `- ` entries"
                               " only; edit this file by hand")
        return Layout("".join(lines), [], [], [])
    leads, entries, gaps = [], [], []
    lead_starts = []
    top = 1 if SCHEMA_LINE.match(lines[0]) else 0  # the schema line is the file's, not a lead
    for start in starts:
        first = start
        while first > top and lines[first - 1].startswith("#"):
            first -= 1
        lead_starts.append(first)
    for n, start in enumerate(starts):
        stop = lead_starts[n + 1] if n + 1 < len(starts) else len(lines)
        end = start + 1  # the entry's body: its indented lines (blank lines inside kept)
        for i in range(start + 1, stop):
            if lines[i][:1] in (" ", "\t"):
                end = i + 1
        leads.append("".join(lines[lead_starts[n]:start]))
        entries.append("".join(lines[start:end]))
        gaps.append("".join(lines[end:stop]))
    return Layout("".join(lines[:lead_starts[0]]), leads, entries, gaps)


def _yaml() -> YAML:
    y = YAML()
    y.preserve_quotes = True
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def load_entry(text: str) -> Any:
    """One entry's text as ruamel's round-trip mapping."""
    try:
        data = _yaml().load(text)
    except YAMLError as exc:
        raise Invalid(f"not YAML: {exc}") from exc
    if not isinstance(data, list) or len(data) != 1:
        raise Invalid("an entry must be one list item")
    return data[0]


def dump_entry(data: Any) -> str:
    """One mapping as a top-level list item, indented as the files are (`- key:` at column
    0, nested lists two spaces in)."""
    out = io.StringIO()
    _yaml().dump([data], out)
    lines = out.getvalue().splitlines(keepends=True)
    return "".join(line[2:] if line.startswith("  ") else line for line in lines)


def rewritten(old: str, data: Any) -> str:
    """An edited entry's new text: `data` (the entry as `old` loads, then changed) dumped by
    ruamel.yaml, but with only the lines the change touches taken from that dump; every other
    line keeps its text as written (a flow mapping over several lines, a comment's column,
    `{ spaces }`), which a whole dump would reformat. A changed line inside such a construct
    takes the whole construct from the dump. If the spliced text did not load as the dump does,
    the dump is used whole."""
    old = old.replace("\r\n", "\n")
    after = dump_entry(data)
    before = dump_entry(load_entry(old))
    if before == old:
        return after
    o, r, m = (t.splitlines(keepends=True) for t in (old, before, after))
    o_r: list[tuple[str, int, int, int, int]] = []
    for tag, a1, a2, b1, b2 in difflib.SequenceMatcher(None, o, r, autojunk=False).get_opcodes():
        if tag == "replace" and a2 - a1 == b2 - b1:  # line for line: each is its own
            o_r += [(tag, a1 + k, a1 + k + 1, b1 + k, b1 + k + 1) for k in range(a2 - a1)]
        else:
            o_r.append((tag, a1, a2, b1, b2))
    r_m = difflib.SequenceMatcher(None, r, m, autojunk=False).get_opcodes()
    # Spans of the dump `before` (r) that differ from the text (o) or from the change (m).
    apart = [(b1, b2) for tag, _, _, b1, b2 in o_r if tag != "equal"]
    changed = [(a1, a2) for tag, a1, a2, _, _ in r_m if tag != "equal"]
    spans: list[tuple[int, int]] = []
    for start, end in changed:
        grown = True
        while grown:
            grown = False
            for x1, x2 in apart + changed:
                if _overlap(start, end, x1, x2) and (x1 < start or x2 > end):
                    start, end, grown = min(start, x1), max(end, x2), True
        if spans and start <= spans[-1][1]:
            start = min(start, spans[-1][0])
            end = max(end, spans.pop()[1])
        spans.append((start, end))
    out = list(o)
    for start, end in reversed(spans):
        # The text's lines around the span stay (max, min); the change's come along (min, max).
        out[max(_at(o_r, start, 1)):min(_at(o_r, end, 1))] = \
            m[min(_at(r_m, start, 0)):max(_at(r_m, end, 0))]
    spliced = "".join(out)
    try:
        same = plain_data(load_entry(spliced)) == plain_data(data)
    except Invalid:
        same = False
    return spliced if same else after


def _overlap(s1: int, e1: int, s2: int, e2: int) -> bool:
    """Whether two spans of lines overlap; an empty span (an insertion) overlaps a span only
    strictly inside it."""
    if s1 == e1:
        return s2 < s1 < e2
    if s2 == e2:
        return s1 < s2 < e1
    return s2 < e1 and s1 < e2


def _at(opcodes: Sequence[tuple[str, int, int, int, int]], line: int, side: int) -> list[int]:
    """Where a line position of one side of a diff (0: the first sequence, 1: the second) may
    fall on the other: one place inside equal lines, several at the edge of a change."""
    found = []
    for tag, a1, a2, b1, b2 in opcodes:
        lo, hi, to_lo, to_hi = (b1, b2, a1, a2) if side else (a1, a2, b1, b2)
        if tag == "equal" and lo <= line <= hi:
            found.append(to_lo + line - lo)
        elif tag != "equal":
            found += [to for edge, to in ((lo, to_lo), (hi, to_hi)) if line == edge]
    return found


def plain_data(value: Any) -> Any:
    """A YAML value as plain JSON data, for comparing what two texts say."""
    return json.loads(json.dumps(value, default=str))


def entry_id(text: str) -> str | None:
    data = load_entry(text)
    value = data.get("id") if hasattr(data, "get") else None
    return str(value) if value is not None else None


def edit_entries(text: str, name: str, edit: Edit) -> str:
    """The file with its entries replaced by `edit`'s. Entries are matched by position: an
    edited one keeps its heading and what follows it; a removed one takes both along; an
    appended one comes after a blank line. New text takes the file's line endings."""
    cut = layout(text, name)
    old = cut.entries
    crlf = "\r\n" in text
    newline = "\r\n" if crlf else "\n"

    def ending(entry: str) -> str:
        return entry.replace("\r\n", "\n").replace("\n", "\r\n") if crlf else entry

    new = [e if e in old else ending(e) for e in edit(list(old))]
    if len(new) == len(old):
        leads, gaps = list(cut.leads), list(cut.gaps)
    elif len(new) == len(old) - 1:
        gone = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
                    len(new))
        if new != old[:gone] + old[gone + 1:]:
            raise Conflict(f"{name}: an edit may remove one entry and change nothing else")
        leads = cut.leads[:gone] + cut.leads[gone + 1:]
        gaps = cut.gaps[:gone] + cut.gaps[gone + 1:]
    elif len(new) == len(old) + 1 and new[:-1] == old:
        leads, gaps = [*cut.leads, ""], [*cut.gaps, ""]
        if old and not gaps[-2].strip():
            gaps[-2] = newline  # a blank line before the new entry
    else:
        raise Conflict(f"{name}: an edit may change, add or remove one entry at a time")
    head = cut.head
    if new and head and not head.endswith("\n"):
        head += newline
    return Layout(head, leads, new, gaps).join()


def diff(name: str, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True),
                                        after.splitlines(keepends=True),
                                        f"a/evals/{name}", f"b/evals/{name}"))
