"""The embedded PostgreSQL: its handle file and its start."""

import json
import os

from app.db.embedded import HANDLE_FILE, _clear_dead_handles


def test_dead_pids_are_cleared_from_the_handle_file(tmp_path):
    dead = 2**22 + 12345  # above the default pid_max: never a live process
    (tmp_path / HANDLE_FILE).write_text(json.dumps([os.getpid(), dead]))
    _clear_dead_handles(tmp_path)
    assert json.loads((tmp_path / HANDLE_FILE).read_text()) == [os.getpid()]


def test_the_server_is_started_under_a_lock_that_other_starters_wait_for(tmp_path, monkeypatch):
    import fcntl

    from app.db import embedded

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))  # start_embedded sets it; restored after
    import pgserver

    held = []

    class Server:
        def get_uri(self):
            return "postgresql://embedded"

    def get_server(pgdata, cleanup_mode):
        with (tmp_path / embedded.START_LOCK).open("a") as other:
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held.append(pgdata)
        return Server()

    monkeypatch.setattr(pgserver, "get_server", get_server)
    assert embedded.start_embedded(tmp_path) == "postgresql://embedded"
    assert held == [str(tmp_path / "pg")]
