"""A command timed as a whole process, for the benches that compare tools by what a person
waits for and what the machine spends: wall from spawn to exit, CPU (user + system) of the
process and every descendant, and peak RSS.

rusage from wait4 covers the process and the children it waited for. What it leaves running
when it exits (a database server it started and stops on its way out, say) would escape it:
this process makes itself their reaper (Linux's child subreaper, `adopt_orphans`), so they
become its children when their parent exits, and `run_timed` waits for them and adds their
CPU. Peak RSS is that of the largest one process of the tree, as rusage reports it, not a sum.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import psutil

LEFT_WAIT_S = 30.0  # how long what a run left running may take to exit
PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


class Usage(Protocol):
    """The fields of a `resource.struct_rusage` that are read."""

    @property
    def ru_utime(self) -> float: ...
    @property
    def ru_stime(self) -> float: ...
    @property
    def ru_maxrss(self) -> int: ...


@dataclass(frozen=True)
class Timed:
    """One run: wall from spawn to exit, CPU of its whole tree, the peak RSS of its largest
    process, the CPU of the processes it left running (part of `cpu_s`) and their names, how
    many of those had not exited LEFT_WAIT_S after it (their CPU is not counted), its exit
    code, and whether it was killed for taking too long."""

    wall_s: float
    cpu_s: float
    rss_mib: float
    code: int
    left_cpu_s: float = 0.0
    left: tuple[str, ...] = ()
    still_running: int = 0
    timed_out: bool = False


def timed(wall_s: float, code: int, usage: Usage, left: Sequence[Usage] = (), *,
          left_names: Sequence[str] = (), still_running: int = 0,
          timed_out: bool = False) -> Timed:
    """A run's figures from the rusage of the process (its waited children included, as
    wait4 gives it) and of each process it left running. Linux gives ru_maxrss in KiB."""
    left_cpu = sum(u.ru_utime + u.ru_stime for u in left)
    return Timed(wall_s, usage.ru_utime + usage.ru_stime + left_cpu,
                 max([usage.ru_maxrss, *(u.ru_maxrss for u in left)]) / 1024, code, left_cpu,
                 tuple(left_names), still_running, timed_out)


def adopt_orphans() -> bool:
    """Make this process the parent of what its descendants leave running when they exit
    (Linux's child subreaper), so their CPU can be counted; False where it cannot be."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0


def reap_left(keep: set[int]) -> tuple[list[Usage], list[str], int]:
    """Wait (up to LEFT_WAIT_S) for the processes a run left running, now this process's
    children (all but `keep`): their rusage, their names, and how many still run."""
    children = [c for c in psutil.Process().children() if c.pid not in keep]
    names = []
    for child in children:
        try:
            names.append(child.name())
        except psutil.Error:
            names.append(str(child.pid))
    pending = {c.pid for c in children}
    usages: list[Usage] = []
    deadline = time.monotonic() + LEFT_WAIT_S
    while pending:
        for pid in list(pending):
            try:
                done, _, usage = os.wait4(pid, os.WNOHANG)
            except ChildProcessError:
                pending.discard(pid)
                continue
            if done:
                usages.append(usage)
                pending.discard(pid)
        if not pending or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    return usages, names, len(pending)


def run_timed(argv: list[str], env: dict[str, str], cwd: Path, out_dir: Path,
              keep: set[int], timeout_s: float) -> Timed:
    """Start `argv` fresh, its output to `out_dir`/stdout and stderr, wait for it and for
    what it leaves running, and time it; killed (its process group) after `timeout_s`.
    `keep`: this process's other children, which are not the run's."""
    out_dir.mkdir(parents=True, exist_ok=True)
    killed = threading.Event()

    def stop(pid: int) -> None:
        killed.set()
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it exited meanwhile

    with (out_dir / "stdout").open("wb") as out, (out_dir / "stderr").open("wb") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=err,
                                start_new_session=True)
        timer = threading.Timer(timeout_s, stop, (proc.pid,))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - started
    proc.returncode = code = os.waitstatus_to_exitcode(status)  # waited: Popen must not
    left, names, still = reap_left(keep)
    return timed(wall, code, usage, left, left_names=names, still_running=still,
                 timed_out=killed.is_set())
