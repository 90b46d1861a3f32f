"""app.db's own helpers."""

import psycopg

from app.db import failure


def test_a_failure_is_one_line_naming_its_type_or_the_time_waited():
    exc = psycopg.OperationalError("connection refused\n\tIs the server running?")
    assert failure(exc) == "OperationalError: connection refused"
    assert failure(TimeoutError(), 10.0) == "no answer within 10 s"
    assert failure(TimeoutError()) == "no answer"
    assert failure(OSError()) == "OSError"
