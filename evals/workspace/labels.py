"""The Labels tab: people label the judge's verdicts in stored runs, one at a time, so the
judge can earn trust (`python -m evals calibrate --labels`).

The queue holds the judged verdicts of the newest stored runs that this person has not
labelled. Each shows what the judge was asked, the rubric the verdict was given under (the
case's rubric and must_not, an evaluator pack's rubric and must_not when the pack's prompt gave
it, or the scenario criterion), and the transcript with its tool calls and evidence; the
judge's verdict and reason are not in the page until the person has answered. A label of a
pack's verdict records that the pack's rubric was in view (only such labels calibrate the
pack); when the pack's prompt has changed since the verdict, the rubric it was given under is
not known, the page says so, and a label of it does not count for the pack.

A person is named by the name they give (remembered by the browser); two people's labels of
one verdict are both kept, and the verdicts they disagree on are listed here. An empty queue
says why: everything has the person's label, or the runs hold no verdict (a judge that has not
earned trust is not called unless a run asks for it with --advisory-judge).
"""

from __future__ import annotations

import json
from urllib.parse import quote

from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evals.judge.setup import PackPrompt, prompt_hash_for
from evals.load.cases import load_cases_by_file
from evals.load.packs import PackError, load_pack_prompt
from evals.record.labels import (
    LABEL_VERDICTS,
    MAX_NAME,
    MAX_NOTE,
    Judged,
    Label,
    LabelError,
    Offered,
    add_labels,
    judged_verdicts,
    labels_of,
    list_labels,
    offered,
    people_say,
    queue,
)
from evals.record.store import RunStore
from evals.record.transcript import Turn
from evals.report.html import web_link
from evals.workspace.form_values import whole_number
from evals.workspace.forms import MAX_FORM_FIELDS, given
from evals.workspace.layout import e, hidden, page, refused
from evals.workspace.sources import Sources

KEYS = ("<p class=\"note keys\">Keys: <kbd>p</kbd> pass · <kbd>f</kbd> fail · <kbd>s</kbd>"
        " skip (cannot tell) · <kbd>n</kbd> write a note · <kbd>Enter</kbd> submit ·"
        " <kbd>Esc</kbd> leave the note. The judge's verdict is shown once you have"
        " answered.</p>")
RESULT_CHARS = 2000  # of a tool call's result shown


class LabelsTab:
    def __init__(self, sources: Sources) -> None:
        self.sources = sources

    def routes(self) -> list[Route]:
        return [Route("/labels", self.index), Route("/labels/answer", self.save, methods=["POST"])]

    async def index(self, request: Request) -> Response:
        store: RunStore = request.app.state.store
        by = request.query_params.get("by", "").strip()[:MAX_NAME]
        body = _who(by) + KEYS
        if by:
            waiting = await queue(store, by)
            body += (await self._next(waiting[0], by, len(waiting)) if waiting else
                     _nothing_left(by, await offered(store)))
        body += await _agreement(store)
        return page("labels", "Labels", body, script=True)

    async def save(self, request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=MAX_FORM_FIELDS)
        by = given(form, "by")
        back = f"/labels?by={quote(by)}" if by else "/labels"
        try:
            label = Label(run=given(form, "run"), item=given(form, "item"),
                          repetition=_number(given(form, "repetition")),
                          attempt=_number(given(form, "attempt")),
                          check=_number(given(form, "check")), kind=given(form, "kind"),
                          verdict=given(form, "verdict"),  # type: ignore[arg-type]
                          note=given(form, "note"), by=by,
                          rubric_pack=given(form, "rubric_pack") or None,
                          rubric_hash=given(form, "rubric_hash") or None)
        except ValidationError as exc:
            fields = sorted({str(p["loc"][0]) if p["loc"] else "rubric"
                             for p in exc.errors()})
            named = [p["msg"].removeprefix("Value error, ") for p in exc.errors()
                     if p["loc"] == ("by",)]
            why = ("choose pass, fail or skip" if fields == ["verdict"] else
                   "give your name" if fields == ["by"] and not by.strip() else
                   f"your name {named[0]}" if fields == ["by"] else
                   f"bad {', '.join(fields)}")
            return refused(f"That label cannot be kept: {why}.", 400, back, "labels")
        store: RunStore = request.app.state.store
        try:
            await add_labels(store, [label])
        except LabelError as exc:
            missing = any("no stored run" in m for _, m in exc.problems)
            return refused(str(exc), 404 if missing else 409, back, "labels")
        return page("labels", "Saved", await _revealed(store, label, back), script=True)

    async def _next(self, item: Judged, by: str, left: int) -> str:
        asked, shown = await run_in_threadpool(_asked, self.sources, item)
        ref = item.ref
        fields = "".join(hidden(name, getattr(ref, name)) for name in
                         ("run", "item", "repetition", "attempt", "check", "kind"))
        if shown is not None:  # the pack's rubric is in view: the label says so
            fields += hidden("rubric_pack", shown.ref) + hidden("rubric_hash",
                                                                prompt_hash_for(shown))
        choices = "".join(
            f'<label><input type="radio" name="verdict" value="{v}" required> {v}</label>'
            for v in LABEL_VERDICTS)
        return (f'<p class="note">{left} verdict(s) left for {e(by)}.</p>'
                f'<section class="panel verdict"><h3>{e(ref.item)}</h3>'
                f'<p class="note">{e(item.case.file)} · run {e(ref.run)} · repetition'
                f" {ref.repetition} · attempt {ref.attempt}</p>{asked}"
                f"{_transcript(item)}</section>"
                '<form method="post" action="/labels/answer" class="stack" id="label-form">'
                f'{hidden("by", by)}{fields}<fieldset><legend>Your verdict</legend>'
                f'<div class="choices">{choices}</div></fieldset>'
                f'<label for="note">Note (why; optional)</label><input type="text"'
                f' id="note" name="note" maxlength="{MAX_NOTE}">'
                '<button type="submit">Submit</button></form>')


ADVISORY = ("Runs with <code>--advisory-judge</code> (<code>EVAL_ADVISORY_JUDGE=1</code>) call"
            " a judge that has not earned trust and record its verdicts as advisory; those"
            " come here to be labelled.")


def _nothing_left(by: str, found: Offered) -> str:
    """Why the queue is empty: all labelled, or no verdict to label (a judge that was not
    trusted is not called, so its runs hold none)."""
    unasked = (f"{found.unasked} judged check(s) of those runs have no verdict: their judge was"
               " not trusted, so it was not called.")
    if found.verdicts == 0 and found.unasked:
        said = ("Nothing to label: the newest stored runs hold no verdict of a judge."
                f" {unasked} {ADVISORY}")
    elif found.verdicts == 0:
        said = ("Nothing to label: the newest stored runs have no judged check (a case's rubric"
                " or a scenario's criteria).")
    else:
        said = (f"Nothing left to label for {e(by)}: every judged verdict of the newest stored"
                " runs has your label." + (f" {unasked} {ADVISORY}" if found.unasked else ""))
    return f'<p id="nothing-left">{said}</p>'


def _number(text: str) -> int:
    """A form's number; 0 (refused by the label's type) when it is not one."""
    n = whole_number(text)
    return 0 if n is None else n


def _who(by: str) -> str:
    return ('<form method="get" action="/labels" class="stack" id="who"><label for="by">'
            f'Your name (kept with your labels)</label><input type="text" id="by" name="by"'
            f' value="{e(by)}" maxlength="{MAX_NAME}" required autocomplete="name">'
            '<button type="submit" class="plain">Label as this name</button></form>')


def _rubric(rubric: str | None, must_not: str | None) -> str:
    return "".join(f'<p class="{cls}"><strong>{name}:</strong> {e(value)}</p>'
                   for cls, name, value in (("rubric", "Rubric", rubric),
                                            ("must-not", "Must not", must_not)) if value)


def _asked(sources: Sources, item: Judged) -> tuple[str, PackPrompt | None]:
    """What the judge was asked to decide, with the rubric the verdict was given under; and
    the pack prompt whose rubric is shown, when an evaluator pack's prompt gave it."""
    judge = item.check.judge
    if judge is not None and judge.pack:
        return _pack_asked(judge.pack, judge.prompt_hash)
    if item.check.kind != "judge":
        return f"<p><strong>The question:</strong> {e(item.check.kind)}</p>", None
    cases, _ = load_cases_by_file(sources.cases, sources.photos)
    case = next((c for c in cases if c.id == item.case.id), None)
    if case is None:
        return '<p class="note">The case is no longer in the case files.</p>', None
    return ('<div class="asked" data-rubric="case"><p class="note">Judged by the case\'s own'
            f" rubric.</p>{_rubric(case.rubric, case.must_not)}</div>", None)


def _pack_asked(ref: str, prompt_hash: str) -> tuple[str, PackPrompt | None]:
    """A pack's verdict: the pack's rubric and must_not, if they are still the ones the
    verdict was given under (the pack prompt's hash is the verdict's)."""
    try:
        pack: PackPrompt | None = load_pack_prompt(ref)
    except PackError:
        pack = None
    if pack is None or prompt_hash_for(pack) != prompt_hash:
        why = "is no longer in evals/judge/packs/" if pack is None else "has changed since"
        return (f'<div class="asked" data-rubric="pack" data-pack="{e(ref)}"><p class="error">'
                f"Judged by the evaluator pack prompt <strong>{e(ref)}</strong>, which {why}"
                " this verdict: the rubric it was given under is not known, so a label of it"
                " does not count for the pack's calibration.</p></div>", None)
    return (f'<div class="asked" data-rubric="pack" data-pack="{e(pack.ref)}"><p><strong>Judged'
            f" by the evaluator pack prompt</strong> {e(pack.ref)} ({e(pack.description)};"
            " evals/judge/packs/), instead of the case's own rubric: judge the reply by the"
            f" pack's rubric.</p>{_rubric(pack.rubric, pack.must_not)}</div>", pack)


def _transcript(item: Judged) -> str:
    attempt = item.attempt
    turns = attempt.turns or [Turn(role="user", content=item.case.prompt),
                              Turn(role="assistant", content=attempt.answer)]
    shown = "".join(f'<div class="turn {e(t.role)}"><strong>{e(t.role)}:</strong>'
                    f" {e(t.content)}</div>" for t in turns)
    calls = "".join(
        f'<div class="call">{e(c.name)}({e(json.dumps(c.arguments, ensure_ascii=False))})'
        f" → {e(json.dumps(c.result, ensure_ascii=False)[:RESULT_CHARS])}</div>"
        for c in attempt.tool_calls)
    docs = "".join(f"<li>{web_link(doc)} — HTTP {e(ev.status)}</li>"
                   for doc, ev in attempt.transcript.evidence.items())
    return (f"<h3>Conversation</h3>{shown}" + (f"<h3>Tool calls</h3>{calls}" if calls else "")
            + (f"<h3>Documents fetched</h3><ul>{docs}</ul>" if docs else ""))


async def _revealed(store: RunStore, label: Label, back: str) -> str:
    """After an answer: the judge's verdict and reason, and everyone's labels of it."""
    record = await store.load_run(label.run)
    judge = next((j for j in judged_verdicts(record) if j.ref.key == label.key), None)
    said = (f"<p>The judge ({e(judge.check.judge.model)}) said <strong>"
            f"{e(judge.check.judge.verdict)}</strong>: {e(judge.check.reason)}</p>"
            if judge and judge.check.judge else "")
    everyone = await labels_of(store, label.ref())
    rows = "".join(f"<li>{e(x.by)}: <strong>{e(x.verdict)}</strong>"
                   + (f" — {e(x.note)}" if x.note else "") + "</li>" for x in everyone)
    answers = {x.verdict for x in everyone} - {"skip"}
    split = ('<p class="error">People disagree on this verdict: it is left out of'
             " calibration and counted.</p>" if len(answers) > 1 else "")
    return (f"<p>Your label: <strong>{e(label.verdict)}</strong>.</p>{said}{split}"
            f"<h3>Labels of this verdict</h3><ul>{rows}</ul>"
            f'<p><a class="button" id="next" href="{e(back)}" autofocus>Next verdict</a></p>')


async def _agreement(store: RunStore) -> str:
    """How many verdicts are labelled, by how many people, and where people disagree."""
    labels = await list_labels(store)
    if not labels:
        return "<h3>Agreement between people</h3><p>No labels yet.</p>"
    said = people_say(labels)
    people = len({label.by for label in labels})
    verdicts = len(said.agreed) + len(said.disagreed) + len(said.only_skipped)
    rows = []
    for key, group in said.disagreed.items():
        who = "; ".join(f"{e(g.by)}: {e(g.verdict)}" + (f" ({e(g.note)})" if g.note else "")
                        for g in group)
        rows.append(f"<li>{e(key[0])}/{e(key[1])} repetition {key[2]} attempt {key[3]}"
                    f" check {key[4]} ({e(group[0].kind)}) — {who}</li>")
    listed = (f'<ul class="disagreements">{"".join(rows)}</ul>' if rows else "")
    return (f'<h3>Agreement between people</h3><p class="counts" id="agreement"><span>'
            f"{len(labels)} labels</span><span>{verdicts} verdicts</span><span>{people}"
            f" people</span><span>{said.several} labelled by several</span><span>"
            f"{len(said.disagreed)} disagreed on</span></p>{listed}"
            '<p class="note">A verdict people disagree on (one pass, one fail) is left out of'
            " <code>calibrate --labels</code> and counted; <code>skip</code> counts for"
            " neither side.</p>")
