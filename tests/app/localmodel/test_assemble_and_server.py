import hashlib
import sys
import textwrap

import pytest

from app.localmodel.assemble import ModelAssemblyError, ModelSpec, verify
from app.localmodel.server import LocalModelError, LocalModelServer, free_port


def spec_for(data: bytes) -> ModelSpec:
    return ModelSpec("m", "m.gguf", "pkg", 1, len(data), hashlib.sha256(data).hexdigest())


def test_checksum_good_and_corrupted(tmp_path):
    data = b"GGUF" + bytes(range(256)) * 64
    good = tmp_path / "m.gguf"
    good.write_bytes(data)
    verify(good, spec_for(data))
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(data[:-1] + b"\x00")
    with pytest.raises(ModelAssemblyError, match="checksum mismatch"):
        verify(bad, spec_for(data))


def test_missing_part_package_says_what_to_do(tmp_path):
    from app.localmodel.assemble import assemble

    spec = ModelSpec("m", "m.gguf", "no_such_model_part_pkg", 2, 1, "x")
    with pytest.raises(ModelAssemblyError, match="run `make eval`"):
        assemble(spec, tmp_path, say=lambda s: None)


# A stand-in for the model server process: answers /health, exits on SIGTERM.
FAKE = textwrap.dedent("""
    import sys, http.server
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/health" else 404); self.end_headers()
        def log_message(self, *a): pass
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
""")


def test_server_lifecycle_with_a_fake_process(tmp_path):
    port = free_port()
    server = LocalModelServer([sys.executable, "-c", FAKE, str(port)], port, tmp_path / "l.log")
    server.start()
    assert server.process is not None and server.process.poll() is None
    assert server.base_url == f"http://127.0.0.1:{port}/v1"
    server.stop()
    assert server.process.poll() is not None
    server.stop()  # stopping twice is harmless


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


def test_not_ready_in_time_is_stopped_and_reported(tmp_path):
    port = free_port()
    server = LocalModelServer([sys.executable, "-c", "import time; time.sleep(60)"], port,
                              tmp_path / "l.log", ready_timeout_s=0.5)
    with pytest.raises(LocalModelError, match="not ready after"):
        server.start()
    assert server.process is not None and server.process.poll() is not None


def test_the_server_is_told_where_prefixes_go_and_how_to_share_its_kv_cache(tmp_path,
                                                                           monkeypatch):
    from app.localmodel import local_model_settings
    from app.localmodel import server as srv
    from app.settings import Settings

    started = []
    monkeypatch.setattr(srv, "assemble", lambda spec, folder, say: tmp_path / "m.gguf")
    monkeypatch.setattr(srv.LocalModelServer, "start", lambda self: started.append(self))
    monkeypatch.setattr(srv.LocalModelServer, "stop", lambda self: None)
    settings = Settings(data_dir=tmp_path, local_model_parallel=2, local_model_kv_unified=True)
    with local_model_settings(settings, True, say=lambda *a: None) as running:
        (server,) = started
        spec = srv.MODELS[settings.local_model]
    folder = tmp_path / "prefix-cache" / spec.sha256[:16]
    command = server.command
    assert command[command.index("--slot-save-path") + 1] == str(folder) and folder.is_dir()
    assert "--kv-unified" in command and command[command.index("--parallel") + 1] == "2"
    assert running.local_prefix_cache == str(folder) and running.local_model_sha == spec.sha256
