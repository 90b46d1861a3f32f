"""The commands that help write cases and scenarios: prompt (what the assistant is told), draft
(cases drafted by a model), prepare (scenarios drafted by a model), from-conversations (cases
from stored conversations)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import yaml

from app.chat.models import ChatModel, ModelCallError, model_for_job, model_id_for
from app.db import Database
from app.db.roles import APP_ROLE
from app.localmodel import local_model_settings, uses_local_model
from app.localmodel.server import LocalModelError
from app.settings import Settings
from evals.api.budget import budget, guarded, say_spent
from evals.api.setup import app_settings, open_store, run_closing
from evals.authoring.draft import CONCURRENCY as DRAFT_CONCURRENCY
from evals.authoring.draft import DraftError, draft_for, kinds_for, render
from evals.authoring.from_conversations import NoConversations, make_cases
from evals.authoring.pii import KINDS as PII_KINDS
from evals.authoring.prepare import MAX_COUNT as PREPARE_MAX
from evals.authoring.prepare import Prepared, PrepareError, plan, prepare_scenarios
from evals.authoring.prepared import edited, read_suite
from evals.authoring.prepared import render as render_prepared
from evals.authoring.told import PromptError, fixture_env, told_for
from evals.cli.common import CliError, Commands, add_spend_flags, date_arg
from evals.execute.cache import CacheUse, cached, call_cache
from evals.execute.guard import Spend
from evals.record.artifact import write_atomically
from evals.record.call_cache import CallCache
from evals.record.online import ONLINE_KINDS
from evals.settings import POLICIES, SCENARIOS_DIR, Policy, conninfo, eval_settings

T = TypeVar("T")

ROLES = ["student", "staff", "super_admin"]


def register(sub: Commands) -> None:
    pr = sub.add_parser("prompt", help="what the assistant is told for an audience and page")
    pr.add_argument("--as", dest="as_", choices=ROLES, help="the audience (default: anonymous)")
    pr.add_argument("--page", default="/", help="the page path, e.g. /tools/form-4")
    pr.add_argument("--selection", help="rows selected on the page, by name, comma-separated")
    pr.add_argument("--json", action="store_true", help="print JSON")
    pr.set_defaults(handler=prompt)
    dr = sub.add_parser("draft", help="draft cases with the draft model, for review")
    dr.add_argument("--as", dest="as_", choices=ROLES, help="the audience (default: anonymous)")
    dr.add_argument("--page", default="/", help="the page path, e.g. /tools/form-4")
    dr.add_argument("--capability", help="further cases go to this capability's own risks")
    dr.add_argument("--count", type=int, default=8, help="how many cases (1 to 25)")
    dr.add_argument("--out", type=Path, help="write the drafts here (default: print them)")
    dr.add_argument("--cache", choices=POLICIES, default=eval_settings().cache,
                    help="the model-call cache (EVAL_CACHE): reuse gives the drafts of the"
                         " same request again; refresh asks the model anew")
    add_spend_flags(dr)
    dr.set_defaults(handler=draft)
    pp = sub.add_parser("prepare", help="prepare scenarios with the draft model, for review")
    pp.add_argument("--capability", help="only this capability's scenarios (default: every"
                                         " capability's)")
    pp.add_argument("--as", dest="as_", choices=ROLES,
                    help="the audience (default: per capability, the least privileged one"
                         " offered it)")
    pp.add_argument("--page", help="the page path (default: per capability, the first page"
                                   " it is offered on)")
    pp.add_argument("--count", type=int, default=3,
                    help=f"scenarios per capability (1 to {PREPARE_MAX})")
    pp.add_argument("--out", type=Path, help="write the scenarios here, never under"
                                             " evals/scenarios/ (default: print them)")
    pp.add_argument("--cache", choices=POLICIES, default=eval_settings().cache,
                    help="the model-call cache (EVAL_CACHE), as for draft")
    add_spend_flags(pp)
    pp.set_defaults(handler=prepare)
    fc = sub.add_parser("from-conversations",
                        help="cases from stored conversations (with consent), no model")
    fc.add_argument("--since", type=date_arg, help="only turns from this date (YYYY-MM-DD)")
    fc.add_argument("--count", type=int, default=10, help="how many cases (1 to 200)")
    fc.add_argument("--out", type=Path, help="write the cases here (default: print them)")
    fc.add_argument("--turns", type=turn_ids, metavar="ID[,ID…]",
                    help="a case of each of these turns instead (the failing turns `online`"
                         " lists), with the online checks that failed on it; consent and"
                         " personal data as for any case")
    fc.set_defaults(handler=from_conversations)


def prompt(args: argparse.Namespace) -> int:
    """`python -m evals prompt [--as ROLE] [--page PATH] [--selection NAMES] [--json]`."""
    names = [n.strip() for n in args.selection.split(",") if n.strip()] \
        if args.selection else None
    try:
        result = run_closing(told_for(app_settings(), args.as_, args.page, names))
    except PromptError as exc:
        raise CliError(str(exc)) from exc
    print(json.dumps(result.as_dict(), indent=2) if args.json else result.as_text())
    return 0


def draft(args: argparse.Namespace) -> int:
    """`python -m evals draft [--as ROLE] [--page PATH] [--capability NAME] [--count 8]
    [--out FILE]`: drafts for a person to review."""
    try:
        kinds_for(args.count, [])  # the count, before anything starts
    except DraftError as exc:
        raise CliError(str(exc)) from exc
    (what, result), spend = _drafting(app_settings(), args, lambda s, calls, model: draft_for(
        s, args.as_, args.page, args.count, args.capability, model,
        calls=CacheUse(calls, args.cache)))
    text = render(result, what, dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"))
    if args.out:
        write_atomically(args.out, text)
        print(f"drafts: {args.out}")
    else:
        print(text)
    print(f"{len(result.cases)} valid · {len(result.rejected)} rejected · missing:"
          f" {', '.join(result.missing) or 'none'}", file=sys.stderr)
    return _spent(spend)


def _drafting(settings: Settings, args: argparse.Namespace,
              work: Callable[[Settings, CallCache | None, ChatModel], Coroutine[Any, Any, T]]
              ) -> tuple[T, Spend]:
    """A drafting job (draft, prepare) and what it spent: the embedded model's server when
    the draft job is it, the draft model guarded by the command's budget (`--max-cost`: a
    model with no known price refused under it before any call, unless `--allow-unpriced`),
    and the call cache in the run store, closed however the job ends; a failure a person can
    act on is a CliError."""
    policy: Policy = args.cache
    spend = budget(args.max_cost, [("draft model", model_id_for(settings, "draft"))],
                   allow_unpriced=args.allow_unpriced)

    async def body(s: Settings) -> T:
        async with open_store(s) as store:
            calls = call_cache(store.db, policy)
            try:
                model = guarded(model_for_job(s, "draft"), spend, "draft",
                                DRAFT_CONCURRENCY)
                return await work(s, calls, model)
            except (PromptError, DraftError, ModelCallError) as exc:
                raise CliError(str(exc)) from exc
            finally:
                if calls is not None:
                    await calls.close()

    try:
        with local_model_settings(settings, uses_local_model(settings, None, "draft")) as s:
            return run_closing(body(s)), spend
    except LocalModelError as exc:
        raise CliError(f"local model: {exc}") from exc


def prepare(args: argparse.Namespace) -> int:
    """`python -m evals prepare [--capability NAME] [--as ROLE] [--page PATH] [--count 3]
    [--out FILE]`: scenarios for a person to review, never written into evals/scenarios/."""
    if args.out is not None:
        _refuse_out(args.out)
    suite = read_suite(SCENARIOS_DIR)
    try:
        targets, in_suite, unoffered = plan(args.capability, args.count, suite, args.as_,
                                            args.page)
    except PrepareError as exc:
        raise CliError(str(exc)) from exc
    async def work(s: Settings, calls: CallCache | None, chosen: ChatModel) -> Prepared:
        async with fixture_env(s) as env:
            # As `draft`: the fixtures' blob server is a constant in the keys.
            model = cached(chosen, calls, job="draft", policy=args.cache,
                           blob_base=env.library.store.base_url)
            return await prepare_scenarios(model, env, targets, suite)

    result, spend = _drafting(app_settings(), args, work) if targets else \
        (Prepared(model="(no model asked)"), None)
    text = render_prepared(result.scenarios, result.rejected, result.missing, in_suite,
                           unoffered, result.model,
                           dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"))
    if args.out:
        write_atomically(args.out, text)
        print(f"scenarios: {args.out}")
    else:
        print(text)
    print(f"{len(result.scenarios)} valid · {len(result.rejected)} rejected · {len(in_suite)}"
          f" in the suite already · missing: {', '.join(result.missing) or 'none'}",
          file=sys.stderr)
    return _spent(spend)


def _spent(spend: Spend | None) -> int:
    """What a drafting job spent, on stderr; 1 when its cap kept drafts from being asked."""
    if spend is None:
        return 0
    say_spent(spend)
    return 1 if spend.calls_refused else 0


def _refuse_out(out: Path) -> None:
    """Prepare never writes into the suite, nor over a scenario a person wrote or edited."""
    if out.resolve().is_relative_to(SCENARIOS_DIR.resolve()):
        raise CliError(f"--out {out}: prepare never writes under {SCENARIOS_DIR} (every file"
                       " there runs); write elsewhere, review, then move the scenarios you"
                       " keep")
    kept = edited(out)
    if kept:
        raise CliError(f"--out {out}: prepare does not write over a scenario a person wrote or"
                       " edited; move it, or give another --out:\n" + "\n".join(
                           f"  {line}" for line in kept))


def turn_ids(value: str) -> list[int]:
    parts = [v.strip() for v in value.split(",") if v.strip()]
    if not all(p.isascii() and p.isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"turn ids are numbers: {value!r}")
    ids = [int(p) for p in parts]
    if not ids:
        raise argparse.ArgumentTypeError("name at least one turn id")
    return ids


async def failed_online(settings: Settings, ids: list[int]) -> dict[int, list[str]]:
    """Each turn's online checks that failed (stored by `online`); a turn none failed on, or
    never checked, gets every online check, for its reviewer to keep what applies."""
    async with open_store(settings) as store:
        verdicts = await store.online_verdicts()
    failed: dict[int, list[str]] = {i: [] for i in ids}
    for v in verdicts:
        if v.turn_id in failed and v.verdict == "fail" and v.kind not in failed[v.turn_id]:
            failed[v.turn_id].append(v.kind)
    return {i: kinds or list(ONLINE_KINDS) for i, kinds in failed.items()}


def from_conversations(args: argparse.Namespace) -> int:
    """`python -m evals from-conversations [--since DATE] [--count 10] [--out FILE]`: cases
    from the app's stored conversations (those whose person consented), no model involved."""
    if not 1 <= args.count <= 200:
        raise CliError(f"--count must be 1 to 200, not {args.count}")
    settings = app_settings()

    async def body() -> int:
        db = Database(conninfo(settings), max_size=2, role=APP_ROLE)  # reads the app's rows
        await db.open()
        try:
            flagged = await failed_online(settings, args.turns) if args.turns else None
            made = await make_cases(db, args.count, args.since, flagged)
        except NoConversations as exc:
            raise CliError(str(exc)) from exc
        finally:
            await db.close()
        if made.photos and args.out is None:
            dropped = [c for c in made.cases if "photos" in c[1]]
            made.cases = [c for c in made.cases if "photos" not in c[1]]
            made.left_out.append(f"{len(dropped)} photo case(s): their photos need --out to"
                                 " be written beside the cases")
        text = ("# Cases from stored conversations (people who consented); review each, then"
                " move it to evals/cases/.\n"
                + "".join(f"\n# kind: {kind}\n"
                          + "".join(f"# tool call: {' '.join(line.splitlines())}\n"
                                    for line in made.calls.get(case["id"], []))
                          + yaml.safe_dump(
                    [case], allow_unicode=True, sort_keys=False, width=100)
                    for kind, case in made.cases))
        if args.out is not None:
            write_atomically(args.out, text)
            if made.photos:
                folder = args.out.with_name(args.out.stem + "-photos")
                folder.mkdir(exist_ok=True)
                for name, data in made.photos.items():
                    (folder / name).write_bytes(data)
                print(f"photos: {folder} (move them to evals/fixtures/photos/ with their"
                      " cases)")
            print(f"cases: {args.out}")
        else:
            print(text)
        scrubbed = ", ".join(f"{made.scrubbed[what]} {what}" for what in PII_KINDS)
        print(f"{len(made.cases)} case(s) · personal data replaced: {scrubbed}",
              file=sys.stderr)
        for what, why in made.unsure.items():
            print(f"could not rule out ({what}): {why}; review the cases", file=sys.stderr)
        for line in made.left_out:
            print(f"left out: {line}", file=sys.stderr)
        if made.held_back:
            print(f"held back for review: {len(made.held_back)} case(s) where a name may be"
                  " left that no detector resolved; none of them was written",
                  file=sys.stderr)
        for line in made.held_back:
            print(f"held back: {line}", file=sys.stderr)
        return 0

    return run_closing(body())
