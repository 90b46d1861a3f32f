"""Ctrl-C and SIGTERM in a real child process: what finished is kept, nothing is left behind,
and `resume` runs the rest into the same run."""

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from app.settings import PROJECT_ROOT
from tests.fake_openai import completion, fake_openai_server

ROOT = PROJECT_ROOT
CASES = "honest-absence,lab-identity"


def slow(body):
    return 0.3, completion("We don't have that machine here.")


def child_env(info, base, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_", "EVAL_"))}
    env.update({"DATABASE_URL": info, "MODEL_CHAT": "openai/fake", "MODEL_API_BASE": base,
                "OPENAI_API_KEY": "sk-test", "DATA_DIR": str(tmp_path / "data"),
                "EVAL_CONCURRENCY": "1", "PYTHONWARNINGS": "ignore"})
    return env


@contextmanager
def scratch(server_conninfo):
    name = f"test_stop_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_conninfo, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_conninfo(server_conninfo, dbname=name)
    finally:
        with psycopg.connect(server_conninfo, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def wait_for_a_stored_case(info, deadline_s=90):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        with psycopg.connect(info) as conn:
            try:
                n = conn.execute("SELECT count(*) FROM eval_cases").fetchone()[0]
            except psycopg.errors.UndefinedTable:
                n = 0
        if n:
            return
        time.sleep(0.2)
    raise AssertionError("no case was stored in time")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_run_keeps_what_finished_and_leaves_nothing(server_conninfo, tmp_path, sig):
    artifact = tmp_path / "run.json"
    with scratch(server_conninfo) as info:
        with fake_openai_server(slow) as (base, _):
            env = child_env(info, base, tmp_path)
            child = subprocess.Popen(
                [sys.executable, "-m", "evals", "run", "--cases", CASES,
                 "--artifact", str(artifact)], cwd=ROOT, env=env,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                wait_for_a_stored_case(info)
                child.send_signal(sig)
                out, err = child.communicate(timeout=60)
            finally:
                child.kill()
            assert child.returncode == 128 + int(sig), err
            assert f"{sig.name}: stopping" in err and "python -m evals resume" in err
            record = json.loads(artifact.read_text())
            assert record["status"] == "interrupted" and record["unfinished"]
            assert len(record["cases"]) + len(record["unfinished"]) == 10
            with psycopg.connect(info) as conn:
                status = conn.execute("SELECT status FROM eval_runs").fetchone()[0]
            assert status == "interrupted"
            with psycopg.connect(server_conninfo) as conn:
                left = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s",
                                    (f"eval\\_p{child.pid}\\_%",)).fetchall()
            assert left == []
            assert not list(Path("/tmp").glob(f"eval-blobs-p{child.pid}-*"))
            if sig == signal.SIGTERM:
                resumed = subprocess.run(
                    [sys.executable, "-m", "evals", "resume", "--artifact", str(artifact)],
                    cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
                assert "resuming run" in resumed.stdout, resumed.stderr
                done = json.loads(artifact.read_text())
                assert done["status"] == "complete" and done["unfinished"] == []
                assert done["run_id"] == record["run_id"] and len(done["cases"]) == 10
