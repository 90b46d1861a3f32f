"""A free port: the one preferred when nothing listens there, another when something does;
and which process listens on a port."""

import os
import socket

from starlette.applications import Starlette

from app.serving import free_port, listens, serve_in_thread


def test_the_preferred_port_when_it_is_free_and_another_when_it_is_taken():
    port = free_port()
    assert free_port(prefer=port) == port
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        other = free_port(prefer=port)
    assert other != port and other > 0


def test_a_held_socket_keeps_its_port_from_another_asker_until_it_is_served():
    import httpx
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from app.serving import bound_socket, serve_in_thread

    held = bound_socket()
    port = held.getsockname()[1]
    assert free_port(prefer=port) != port  # bound, not yet served: taken all the same
    app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("ok"))])
    with serve_in_thread(app, sock=held) as base:
        assert base == f"http://127.0.0.1:{port}"
        assert httpx.get(base + "/").text == "ok"
    assert held.fileno() == -1  # closed with the server


def test_a_port_is_said_to_be_listened_on_by_the_process_that_does():
    with serve_in_thread(Starlette()) as base:
        port = int(base.rsplit(":", 1)[1])
        assert listens(os.getpid(), port)
        assert not listens(os.getpid(), free_port())
    assert not listens(os.getpid(), port)  # stopped
    assert not listens(2**22 + 1, port)  # no such process
