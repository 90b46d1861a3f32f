"""The one retry policy: how long it waits."""

import app.chat.retry as retry
from app.chat.retry import ProviderError


def test_a_long_retry_after_is_capped(monkeypatch):
    from tenacity import RetryCallState

    monkeypatch.setattr(retry, "RETRY_AFTER_CAP_S", 3.0)
    state = RetryCallState(None, None, (), {})
    state.set_exception((ProviderError, ProviderError("rate_limit", "x", retry_after_s=600),
                         None))
    assert retry._wait(state) == 3.0


def test_every_retry_waits_what_the_provider_asked_else_backs_off(monkeypatch):
    from app.chat.retry import retry_wait_s

    monkeypatch.setattr(retry, "RETRY_AFTER_CAP_S", 60.0)
    monkeypatch.setattr(retry, "RETRY_WAIT_MIN_S", 1.0)
    monkeypatch.setattr(retry, "RETRY_WAIT_MAX_S", 20.0)

    assert retry_wait_s(5.0, 1) == 5.0
    assert retry_wait_s(0.0, 3) == 0.0
    assert retry_wait_s(10_000.0, 1) == retry.RETRY_AFTER_CAP_S
    waits = [retry_wait_s(None, 1) for _ in range(50)]
    assert all(retry.RETRY_WAIT_MIN_S / 2 <= w <= retry.RETRY_WAIT_MIN_S for w in waits)
    assert max(retry_wait_s(None, 4) for _ in range(50)) > retry.RETRY_WAIT_MIN_S
