"""What a running operation shows and hears: progress on stderr, and Ctrl-C or SIGTERM as a
graceful stop."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from evals.execute.runner import GRACE_S


def progress_bar(total: int, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> Callable[[str | None], None]:
    """Progress on stderr, called with "STATUS id" per finished item (None at the end). On a
    terminal, a bar with the time left; otherwise (a CI log) one line per finished item:
    status, id, elapsed, items left and the estimated time left."""
    out = stream or sys.stderr
    if out.isatty():
        # tqdm is imported only for a terminal: a log never needs it.
        from tqdm import tqdm

        bar = tqdm(total=total, unit="case", file=out, leave=False,
                   bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, {remaining} left]"
                              " {postfix}")

        def tick(item: str | None) -> None:
            if item is None:
                bar.close()
            else:
                bar.set_postfix_str(item)
                bar.update(1)

        return tick
    started = clock()
    done = [0]

    def line(item: str | None) -> None:
        if item is None:
            return
        done[0] += 1
        elapsed = clock() - started
        left = max(total - done[0], 0)
        eta = elapsed / done[0] * left
        print(f"[{done[0]}/{total}] {item}  {_clock(elapsed)} elapsed · {left} left ·"
              f" about {_clock(eta)} to go", file=out, flush=True)

    return line


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}:{secs:02d}"


@contextmanager
def stop_on_signals(stop: asyncio.Event) -> Iterator[dict[str, signal.Signals]]:
    """Ctrl-C or SIGTERM stops the run gracefully: no new model call, items in flight get
    GRACE_S, what finished is kept. Yields what was received."""
    loop = asyncio.get_running_loop()
    got: dict[str, signal.Signals] = {}
    if threading.current_thread() is not threading.main_thread():
        yield got  # signals reach the main thread only: its own code stops a run from there
        return

    def handler(sig: signal.Signals) -> None:
        if "signal" not in got:
            got["signal"] = sig
            print(f"\n{sig.name}: stopping: no new model call; cases in flight get"
                  f" {GRACE_S:.0f} s", file=sys.stderr)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, handler, sig)
    try:
        yield got
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def received(got: dict[str, signal.Signals]) -> int | None:
    """The signal that stopped the operation, if one did."""
    return int(got["signal"]) if "signal" in got else None
