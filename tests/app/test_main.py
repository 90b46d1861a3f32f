"""`python -m app serve` as an operator runs it: SIGTERM leaves nothing running."""

import os
import signal
import subprocess
import sys
import time

import httpx
import psutil
import pytest

from app.serving import free_port, listens


def postgres_of(pgdata):
    return [p for p in psutil.process_iter(["cmdline"])
            if str(pgdata) in " ".join(p.info["cmdline"] or [])]


def serve_env(tmp_path) -> dict[str, str]:
    """`serve`'s environment: the data folder under tmp_path, the embedded PostgreSQL."""
    env = {**os.environ, "DATA_DIR": str(tmp_path), "MODEL_CHAT": "openai/none",
           "MODEL_API_BASE": "http://127.0.0.1:9/v1"}
    env.pop("DATABASE_URL", None)
    return env


def serve_until_healthy(tmp_path, env, wait_s=60, tries=3):
    """`python -m app serve` started, once it listens and /healthz answers (its log read out
    otherwise). The port free_port chose is let go before serve binds it: another worker's
    server may be given it meanwhile (then serve cannot bind it, and starts again on another),
    and may answer /healthz (so only serve's own listening counts)."""
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", str(port)],
                                env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + wait_s
    # One client for every try: a new one each try made an SSL context each.
    with httpx.Client(timeout=1) as client:
        while True:
            try:
                if client.get(f"http://127.0.0.1:{port}/healthz").status_code == 200 and \
                        listens(proc.pid, port):
                    return proc, log
            except httpx.HTTPError:
                pass
            if proc.poll() is not None and tries > 1 and \
                    "address already in use" in log.read_text():
                return serve_until_healthy(tmp_path, env, wait_s, tries - 1)
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(log.read_text())
            time.sleep(0.1)


def sigterm_leaves_no_postgres(proc, tmp_path) -> None:
    """SIGTERM ends serve with 143, and within 10 s no PostgreSQL of tmp_path's runs."""
    try:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 10
    while postgres_of(tmp_path / "pg") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert postgres_of(tmp_path / "pg") == []


@pytest.mark.slow
def test_sigterm_stops_the_embedded_postgres_it_started(tmp_path):
    proc, _ = serve_until_healthy(tmp_path, serve_env(tmp_path))
    try:
        assert postgres_of(tmp_path / "pg")  # it did start one
    except BaseException:
        proc.kill()
        raise
    sigterm_leaves_no_postgres(proc, tmp_path)


KILLED_RUN = """
import os, sys, tempfile, time
from pathlib import Path
import psycopg
from app.db import resolve_conninfo
uri = resolve_conninfo(None, Path(sys.argv[1]))
with psycopg.connect(uri, autocommit=True) as admin:
    admin.execute(f'CREATE DATABASE "eval_p{os.getpid()}_killed"')
folder = tempfile.mkdtemp(prefix=f"eval-blobs-p{os.getpid()}-")
print(uri, folder, flush=True)
time.sleep(600)
"""


@pytest.mark.slow
def test_serve_removes_what_a_killed_process_left_and_ends_its_orphaned_postgres(tmp_path):
    import psycopg

    env = serve_env(tmp_path)
    killed = subprocess.Popen([sys.executable, "-c", KILLED_RUN, str(tmp_path)], env=env,
                              stdout=subprocess.PIPE, text=True)
    try:
        uri, folder = killed.stdout.readline().split()
    finally:
        killed.kill()  # SIGKILL: no exit handler runs
        killed.wait()
        killed.stdout.close()
    assert postgres_of(tmp_path / "pg")  # left running, owned by no live process
    proc, log = serve_until_healthy(tmp_path, env, wait_s=90)
    try:
        with psycopg.connect(uri) as conn:
            left = conn.execute("SELECT datname FROM pg_database WHERE datname = %s",
                                (f"eval_p{killed.pid}_killed",)).fetchall()
        assert left == [], log.read_text()
        assert not os.path.exists(folder)  # (another test's start may have removed them first)
    except BaseException:
        proc.kill()
        raise
    sigterm_leaves_no_postgres(proc, tmp_path)


JOIN = ("import sys, time; from pathlib import Path; from app.db.embedded import start_embedded;"
        " start_embedded(Path(sys.argv[1])); print('joined', flush=True); time.sleep(600)")


@pytest.mark.slow
def test_sigterm_stops_the_postgres_it_started_though_a_killed_process_had_joined(tmp_path):
    env = serve_env(tmp_path)
    proc, _ = serve_until_healthy(tmp_path, env)
    try:
        joiner = subprocess.Popen([sys.executable, "-c", JOIN, str(tmp_path)], env=env,
                                  stdout=subprocess.PIPE, text=True)
        assert joiner.stdout is not None and joiner.stdout.readline().strip() == "joined"
        joiner.kill()  # its pid stays in pgserver's handle file
        joiner.wait(timeout=10)
        joiner.stdout.close()
    except BaseException:
        proc.kill()
        raise
    sigterm_leaves_no_postgres(proc, tmp_path)


def _probe_scheme(options) -> str:
    """The scheme an app served with uvicorn `options` sees for a request from 127.0.0.1
    that says (in X-Forwarded-Proto) it came over https."""
    import threading

    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    async def scheme(request):
        return PlainTextResponse(request.url.scheme)

    port = free_port()
    config = uvicorn.Config(Starlette(routes=[Route("/", scheme)]), **{
        **options, "host": "127.0.0.1", "port": port, "log_level": "error"})
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        return httpx.get(f"http://127.0.0.1:{port}/",
                         headers={"X-Forwarded-Proto": "https"}).text
    finally:
        server.should_exit = True
        thread.join(timeout=5)


@pytest.mark.parametrize(("allowed", "scheme"), [
    (None, "http"), ("10.0.0.1", "http"), ("127.0.0.1", "https")])
def test_forwarded_headers_are_trusted_only_from_forwarded_allow_ips(monkeypatch, tmp_path,
                                                                     allowed, scheme):
    from app import __main__ as entry
    from app.settings import get_settings

    captured: dict = {}
    monkeypatch.setattr(entry.uvicorn, "run", lambda app, **options: captured.update(options))
    monkeypatch.setattr(entry.signal, "signal", lambda *a: None)  # keep pytest's handlers
    for name, value in {"DATA_DIR": str(tmp_path), "MODEL_CHAT": "openai/none",
                        "MODEL_API_BASE": "http://127.0.0.1:9/v1",
                        "FORWARDED_ALLOW_IPS": allowed}.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    try:
        assert entry.main(["serve", "--port", str(free_port())]) == 0
    finally:
        get_settings.cache_clear()
    assert _probe_scheme(captured) == scheme


def test_a_session_secret_open_to_others_stops_serve_with_its_path(monkeypatch, tmp_path,
                                                                   capsys):
    from app import __main__ as entry
    from app.settings import get_settings

    secret = tmp_path / "session-secret"
    secret.write_text("ab" * 32)
    secret.chmod(0o644)
    monkeypatch.setattr(entry.uvicorn, "run", lambda app, **options: None)
    monkeypatch.setattr(entry.signal, "signal", lambda *a: None)
    monkeypatch.setenv("DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MODEL_CHAT", "openai/none")
    monkeypatch.setenv("MODEL_API_BASE", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("SESSION_SECRET", raising=False)
    get_settings.cache_clear()
    try:
        assert entry.main(["serve", "--port", str(free_port())]) == 2
    finally:
        get_settings.cache_clear()
    assert f"{secret}: the session secret is readable by others" in capsys.readouterr().err
