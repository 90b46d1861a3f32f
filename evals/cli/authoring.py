"""The commands that help write cases: prompt (what the assistant is told), draft (cases
drafted by a model), from-conversations (cases from stored conversations), mcp (the same as
MCP tools)."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from app.settings import Settings
from evals.cli.runs import eval_settings, run_closing
from evals.execute.harness import EvalEnv


@asynccontextmanager
async def fixture_env(settings: Settings) -> AsyncIterator[EvalEnv]:
    """The eval fixtures (demo catalogue, manuals served over HTTP) on a fresh database."""
    from app.db import resolve_conninfo
    from app.manuals.embed import default_embedder
    from evals.execute.harness import eval_env

    url = settings.database_url.get_secret_value() if settings.database_url else None
    async with eval_env(resolve_conninfo(url, settings.data_dir), settings,
                        default_embedder()) as env:
        yield env


async def told_for(settings: Settings, role: str | None, page: str,
                   selection: list[str] | None = None) -> Any:
    """What the assistant is told for this audience and page, composed on the fixtures
    (PromptError for an unknown role, page or selection)."""
    from evals.authoring.told import told

    async with fixture_env(settings) as env:
        return await told(env, role, page, selection)


async def draft_for(settings: Settings, role: str | None, page: str, count: int,
                    capability: str | None) -> tuple[Any, Any]:
    """What the assistant is told, and the drafts the `draft` job writes from it."""
    from app.chat.models import model_for_job
    from evals.authoring.draft import draft_cases

    what = await told_for(settings, role, page)
    return what, await draft_cases(model_for_job(settings, "draft"), what, count, capability)


def prompt(args: argparse.Namespace) -> int:
    """`python -m evals prompt [--as ROLE] [--page PATH] [--selection NAMES] [--json]`."""
    import json

    from evals.authoring.told import PromptError

    async def body() -> int:
        try:
            result = await told_for(eval_settings(), args.as_, args.page,
                                    _names(args.selection))
        except PromptError as exc:
            print(exc, file=sys.stderr)
            return 2
        print(json.dumps(result.as_dict(), indent=2) if args.json else result.as_text())
        return 0

    return run_closing(body())


def draft(args: argparse.Namespace) -> int:
    """`python -m evals draft [--as ROLE] [--page PATH] [--capability NAME] [--count 8]
    [--out FILE]`: drafts for a person to review."""
    from app.chat.models import ModelCallError
    from app.localmodel import local_model_settings, uses_local_model
    from app.localmodel.server import LocalModelError
    from evals.authoring.draft import DraftError, kinds_for, render
    from evals.authoring.told import PromptError
    from evals.report.console import write_atomically

    try:
        kinds_for(args.count, [])  # the count, before anything starts
    except DraftError as exc:
        print(exc, file=sys.stderr)
        return 2
    settings = eval_settings()

    async def body(settings: Settings) -> int:
        try:
            what, result = await draft_for(settings, args.as_, args.page, args.count,
                                           args.capability)
        except (PromptError, DraftError, ModelCallError) as exc:
            print(exc, file=sys.stderr)
            return 2
        text = render(result, what, dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"))
        if args.out:
            write_atomically(args.out, text)
            print(f"drafts: {args.out}")
        else:
            print(text)
        print(f"{len(result.cases)} valid · {len(result.rejected)} rejected · missing:"
              f" {', '.join(result.missing) or 'none'}", file=sys.stderr)
        return 0

    try:
        with local_model_settings(settings, uses_local_model(settings, None, "draft")) as s:
            return run_closing(body(s))
    except LocalModelError as exc:
        print(f"local model: {exc}", file=sys.stderr)
        return 2


def from_conversations(args: argparse.Namespace) -> int:
    """`python -m evals from-conversations [--since DATE] [--count 10] [--out FILE]`: cases
    from the app's stored conversations (those whose person consented), no model involved."""
    import yaml

    from app.db import Database, resolve_conninfo
    from evals.authoring.from_conversations import NoConversations, make_cases
    from evals.report.console import write_atomically

    if not 1 <= args.count <= 200:
        print(f"--count must be 1 to 200, not {args.count}", file=sys.stderr)
        return 2
    settings = eval_settings()
    url = settings.database_url.get_secret_value() if settings.database_url else None

    async def body() -> int:
        db = Database(resolve_conninfo(url, settings.data_dir), max_size=2)
        await db.open()
        try:
            made = await make_cases(db, args.count, args.since)
        except NoConversations as exc:
            print(exc, file=sys.stderr)
            return 2
        finally:
            await db.close()
        if made.photos and args.out is None:
            dropped = [c for c in made.cases if "photos" in c[1]]
            made.cases = [c for c in made.cases if "photos" not in c[1]]
            made.left_out.append(f"{len(dropped)} photo case(s): their photos need --out to"
                                 " be written beside the cases")
        text = ("# Cases from stored conversations (people who consented); review each, then"
                " move it to evals/cases/.\n"
                + "".join(f"\n# kind: {kind}\n" + yaml.safe_dump(
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
        scrubbed = ", ".join(f"{n} {what}" for what, n in sorted(made.scrubbed.items()))
        print(f"{len(made.cases)} case(s) · contact details replaced: {scrubbed or 'none'}",
              file=sys.stderr)
        for line in made.left_out:
            print(f"left out: {line}", file=sys.stderr)
        return 0

    return run_closing(body())


def mcp(args: argparse.Namespace) -> int:
    """`python -m evals mcp`: the eval tools over MCP (stdio)."""
    from evals.cli.mcp import serve

    return serve()


def _names(value: str | None) -> list[str] | None:
    return [n.strip() for n in value.split(",") if n.strip()] if value else None


def add_parsers(sub: Any) -> None:
    roles = ["student", "staff", "super_admin"]
    pr = sub.add_parser("prompt", help="what the assistant is told for an audience and page")
    pr.add_argument("--as", dest="as_", choices=roles, help="the audience (default: anonymous)")
    pr.add_argument("--page", default="/", help="the page path, e.g. /tools/form-4")
    pr.add_argument("--selection", help="rows selected on the page, by name, comma-separated")
    pr.add_argument("--json", action="store_true", help="print JSON")
    dr = sub.add_parser("draft", help="draft cases with the draft model, for review")
    dr.add_argument("--as", dest="as_", choices=roles, help="the audience (default: anonymous)")
    dr.add_argument("--page", default="/", help="the page path, e.g. /tools/form-4")
    dr.add_argument("--capability", help="further cases go to this capability's own risks")
    dr.add_argument("--count", type=int, default=8, help="how many cases (1 to 25)")
    dr.add_argument("--out", type=Path, help="write the drafts here (default: print them)")
    fc = sub.add_parser("from-conversations",
                        help="cases from stored conversations (with consent), no model")
    fc.add_argument("--since", type=_date, help="only turns from this date (YYYY-MM-DD)")
    fc.add_argument("--count", type=int, default=10, help="how many cases (1 to 200)")
    fc.add_argument("--out", type=Path, help="write the cases here (default: print them)")
    sub.add_parser("mcp", help="the eval tools as an MCP server on stdio")


def _date(value: str) -> dt.datetime:
    try:
        return dt.datetime.fromisoformat(value).replace(tzinfo=dt.UTC)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {value!r}") from None
