"""Starting and stopping the local model server (a fake process stands in for llama.cpp):
clear one-line failures, what the server is told, what it says it spent."""

import sys
import textwrap

import pytest

from app.localmodel.server import LocalModelError, LocalModelServer
from app.serving import free_port

# A stand-in for the model server process: answers /health, exits on SIGTERM.
FAKE = textwrap.dedent("""
    import sys, http.server
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/health" else 404); self.end_headers()
        def log_message(self, *a): pass
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
""")


@pytest.mark.slow
def test_server_lifecycle_with_a_fake_process(tmp_path):
    port = free_port()
    server = LocalModelServer([sys.executable, "-c", FAKE, str(port)], port, tmp_path / "l.log")
    server.start()
    assert server.process is not None and server.process.poll() is None
    assert server.base_url == f"http://127.0.0.1:{port}/v1"
    server.stop()
    assert server.process.poll() is not None
    server.stop()  # stopping twice is harmless


@pytest.mark.slow
def test_a_server_that_dies_is_one_clear_line(tmp_path):
    port = free_port()
    cmd = [sys.executable, "-c", "import sys; print('model file is corrupt'); sys.exit(3)"]
    server = LocalModelServer(cmd, port, tmp_path / "l.log")
    with pytest.raises(LocalModelError, match="exited with code 3: model file is corrupt"):
        server.start()


def test_port_in_use_is_refused(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        server = LocalModelServer([sys.executable, "-c", FAKE, str(port)], port,
                                  tmp_path / "l.log")
        with pytest.raises(LocalModelError, match=f"port {port} on 127.0.0.1 is in use"):
            server.start()


@pytest.mark.slow
def test_not_ready_in_time_is_stopped_and_reported(tmp_path):
    port = free_port()
    server = LocalModelServer([sys.executable, "-c", "import time; time.sleep(60)"], port,
                              tmp_path / "l.log", ready_timeout_s=0.5)
    with pytest.raises(LocalModelError, match="not ready after"):
        server.start()
    assert server.process is not None and server.process.poll() is not None


def _started(tmp_path, monkeypatch, **settings_fields):
    """Start the embedded model with these settings, its assembly and process faked: what it
    was told (command), what it assembled, what it said and the settings it yielded."""
    from types import SimpleNamespace

    from app.localmodel import local_model_settings
    from app.localmodel import server as srv
    from app.settings import Settings

    started, assembled, said = [], [], []

    def fake_assemble(spec, folder, say):
        assembled.append(spec.name)
        return tmp_path / spec.file_name

    monkeypatch.setattr(srv, "assemble", fake_assemble)
    monkeypatch.setattr(srv.LocalModelServer, "start", lambda self: started.append(self))
    monkeypatch.setattr(srv.LocalModelServer, "stop", lambda self: None)
    with local_model_settings(Settings(data_dir=tmp_path, **settings_fields), True,
                              say=said.append) as running:
        (server,) = started
    return SimpleNamespace(command=server.command, assembled=assembled, said=said,
                           running=running)


def test_the_server_is_told_where_prefixes_go_and_how_to_share_its_kv_cache(tmp_path,
                                                                           monkeypatch):
    from app.localmodel.server import MODELS

    started = _started(tmp_path, monkeypatch, local_model_parallel=2,
                       local_model_kv_unified=True)
    spec = MODELS[started.running.local_model]
    folder = tmp_path / "prefix-cache" / spec.sha256[:16]
    command = started.command
    assert command[command.index("--slot-save-path") + 1] == str(folder) and folder.is_dir()
    assert "--kv-unified" in command and command[command.index("--parallel") + 1] == "2"
    assert started.running.local_prefix_cache == str(folder)
    assert started.running.local_model_sha == spec.sha256


def test_speculative_decoding_with_a_draft_model_assembles_and_passes_the_draft(tmp_path,
                                                                                monkeypatch):
    started = _started(tmp_path, monkeypatch, local_model_speculative="draft")
    command, assembled, said = started.command, started.assembled, started.said
    assert assembled == ["qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct"]
    draft = command[command.index("--draft-model") + 1]
    assert draft == str(tmp_path / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
    assert "--ngram" not in command
    assert any("speculative decoding: draft" in line for line in said)


def test_ngram_speculation_needs_no_draft_model(tmp_path, monkeypatch):
    started = _started(tmp_path, monkeypatch, local_model_speculative="ngram")
    command, assembled = started.command, started.assembled
    assert assembled == ["qwen2.5-coder-1.5b-instruct"]
    assert "--ngram" in command and "--draft-model" not in command


def test_speculation_is_off_by_default(tmp_path, monkeypatch):
    started = _started(tmp_path, monkeypatch)
    command, assembled, said = started.command, started.assembled, started.said
    assert assembled == ["qwen2.5-coder-1.5b-instruct"]
    assert "--ngram" not in command and "--draft-model" not in command
    assert not any("speculative" in line for line in said)


def test_an_unknown_draft_model_is_refused_naming_the_setting(tmp_path, monkeypatch):
    from app.localmodel.server import LocalModelError

    with pytest.raises(LocalModelError, match="unknown LOCAL_MODEL_DRAFT 'nope'; known: qwen"):
        _started(tmp_path, monkeypatch, local_model_speculative="draft",
                 local_model_draft="nope")


METRICS_SERVER = textwrap.dedent("""
    import sys, http.server
    BODY = sys.argv[2].encode()
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            found = self.path == "/metrics" and BODY
            self.send_response(200 if found or self.path == "/health" else 404)
            self.end_headers()
            if found:
                self.wfile.write(BODY)
        def log_message(self, *a): pass
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
""")


LLAMA_METRICS = """# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 250000
llamacpp:prompt_seconds_total 738
llamacpp:tokens_predicted_total 12345
llamacpp:tokens_predicted_seconds_total 1086
llamacpp:requests_processing 0
"""


@pytest.mark.slow
@pytest.mark.parametrize("body, expected", [
    (LLAMA_METRICS, "local model: served 250,000 prompt tokens in 12.3 min of prefill and"
                    " generated 12,345 tokens in 18.1 min (every job)"),
    ("", None),  # no /metrics endpoint (404)
    (LLAMA_METRICS.replace("1086", "many"), None),  # a counter that is not a number
    ("\n".join(LLAMA_METRICS.splitlines()[:4]), None),  # counters missing
])
def test_what_the_server_spent_its_time_on_comes_from_its_own_counters(tmp_path, body,
                                                                       expected):
    from app.localmodel.server import served_line

    port = free_port()
    server = LocalModelServer([sys.executable, "-c", METRICS_SERVER, str(port), body], port,
                              tmp_path / "l.log")
    server.start()
    try:
        assert served_line(f"http://127.0.0.1:{port}") == expected
    finally:
        server.stop()
    assert served_line(f"http://127.0.0.1:{port}") is None  # a server that is gone
