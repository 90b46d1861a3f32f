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
