"""A command timed as a whole process: its figures from rusage, and (in a process of its own)
the CPU of what it leaves running counted."""

import json
import subprocess
import sys
import textwrap
import types

import pytest

from evals.bench.processes import Timed, timed
from evals.settings import PROJECT_ROOT


def usage(user, system, maxrss_kib):
    return types.SimpleNamespace(ru_utime=user, ru_stime=system, ru_maxrss=maxrss_kib)


def test_a_runs_figures_add_the_cpu_of_what_it_left_running_and_take_the_largest_rss():
    got = timed(2.5, 0, usage(1.5, 0.25, 400 * 1024), [usage(0.25, 0.125, 30 * 1024)],
                left_names=["postgres"])
    assert got == Timed(2.5, 2.125, 400.0, 0, 0.375, ("postgres",))
    alone = timed(1.0, 1, usage(0.5, 0.5, 1024))
    assert (alone.cpu_s, alone.rss_mib, alone.left_cpu_s, alone.code) == (1.0, 1.0, 0.0, 1)
    # Another process of the tree may be the largest.
    assert timed(1.0, 0, usage(0.1, 0.1, 1024), [usage(0, 0, 2048)]).rss_mib == 2.0


# The runs: one whose child leaves a grandchild burning 0.3 s of CPU after the child exits,
# and one that fails. In a process of its own, which becomes the grandchild's reaper (never
# pytest's: it would reap other tests' orphans).
CHILD = textwrap.dedent("""\
    import json, sys
    from pathlib import Path
    from evals.bench.processes import adopt_orphans, run_timed

    burn = "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.3: pass"
    leave = f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {burn!r}])"
    fail = "import sys; print('it broke', file=sys.stderr); sys.exit(3)"
    assert adopt_orphans()
    out = Path(sys.argv[1])
    got = [run_timed([sys.executable, "-c", code], {}, out, out / name, set(), 60)
           for name, code in (("leave", leave), ("fail", fail))]
    print(json.dumps([[t.cpu_s, t.left_cpu_s, len(t.left), t.code, t.timed_out] for t in got]))
""")


@pytest.mark.slow
def test_the_cpu_of_what_a_run_leaves_running_is_counted(tmp_path):
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True,
                          text=True, timeout=120, cwd=PROJECT_ROOT)
    assert done.returncode == 0, done.stderr
    (cpu, left_cpu, left, code, killed), failed = json.loads(done.stdout)
    assert (left, code, killed) == (1, 0, False)
    assert left_cpu >= 0.25 and cpu >= left_cpu
    assert failed[3] == 3 and failed[2] == 0
    assert (tmp_path / "fail" / "stderr").read_text() == "it broke\n"


def test_a_run_is_timed_its_output_kept_and_one_that_overruns_is_killed(tmp_path):
    import psutil

    from evals.bench.processes import run_timed

    others = {c.pid for c in psutil.Process().children()}  # this worker's own (a server)
    done = run_timed([sys.executable, "-c", "import sys; print('out'); sys.exit(4)"], {},
                     tmp_path, tmp_path / "done", others, 60)
    assert (done.code, done.timed_out, done.left, done.still_running) == (4, False, (), 0)
    assert done.wall_s > 0 and done.cpu_s > 0 and done.rss_mib > 1
    assert (tmp_path / "done" / "stdout").read_text() == "out\n"
    overran = run_timed(["sleep", "30"], {}, tmp_path, tmp_path / "overran", others, 0.3)
    assert overran.timed_out and overran.code == -9 and overran.wall_s < 30
