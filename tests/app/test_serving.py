"""A free port: the one preferred when nothing listens there, another when something does."""

import socket

from app.serving import free_port


def test_the_preferred_port_when_it_is_free_and_another_when_it_is_taken():
    port = free_port()
    assert free_port(prefer=port) == port
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        other = free_port(prefer=port)
    assert other != port and other > 0
