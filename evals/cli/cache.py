"""`python -m evals cache stats|clear`: the model-call cache in the run store."""

from __future__ import annotations

import argparse

from app.settings import Settings
from evals.api.setup import in_store, open_store
from evals.cli.common import Commands
from evals.record import call_cache
from evals.settings import eval_settings


def register(sub: Commands) -> None:
    cache = sub.add_parser("cache", help="the model-call cache: what it holds, or clear it")
    what = cache.add_subparsers(dest="cache_command", required=True)
    what.add_parser("stats", help="entries, size and age, per model").set_defaults(
        handler=stats)
    clear = what.add_parser("clear", help="remove entries (a run going on sees misses)")
    clear.add_argument("--model", help="only this model's entries (as `cache stats` names it)")
    clear.add_argument("--expired", action="store_true",
                       help="only hosted entries past EVAL_CACHE_TTL")
    clear.set_defaults(handler=clear_command)


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB" if n >= 1 << 20 else f"{n / 1024:.1f} kB"


def stats(args: argparse.Namespace) -> int:
    env = eval_settings()

    async def body(settings: Settings) -> int:
        async with open_store(settings) as store:
            s = await call_cache.stats(store.db, env.cache_ttl)
        if not s.entries:
            print("the call cache is empty")
            return 0
        print(f"{s.entries} entries, {_size(s.bytes)} of {env.cache_max_mb} MB"
              f" · {s.pinned} of a checksum-pinned local model (never expire)"
              f" · {s.expired} expired (hosted, older than {env.cache_ttl / 86400:g} days)")
        print(f"oldest {s.oldest:%Y-%m-%d %H:%M %Z} · newest {s.newest:%Y-%m-%d %H:%M %Z}")
        for model, n, size in s.by_model:
            print(f"  {model:<48} {n:>7} entries  {_size(size):>9}")
        return 0

    return in_store(body)


def clear_command(args: argparse.Namespace) -> int:
    env = eval_settings()

    async def body(settings: Settings) -> int:
        async with open_store(settings) as store:
            n = await call_cache.clear(store.db, model=args.model, expired_only=args.expired,
                                       ttl_s=env.cache_ttl)
        which = " expired" if args.expired else ""
        print(f"removed {n}{which} entr{'y' if n == 1 else 'ies'}"
              + (f" of {args.model}" if args.model else "") + " from the call cache")
        return 0

    return in_store(body)
