"""The embedded PostgreSQL's handle file."""

import json
import os

from app.db.embedded import HANDLE_FILE, _clear_dead_handles


def test_dead_pids_are_cleared_from_the_handle_file(tmp_path):
    dead = 2**22 + 12345  # above the default pid_max: never a live process
    (tmp_path / HANDLE_FILE).write_text(json.dumps([os.getpid(), dead]))
    _clear_dead_handles(tmp_path)
    assert json.loads((tmp_path / HANDLE_FILE).read_text()) == [os.getpid()]
