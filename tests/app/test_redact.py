import json

from app.redact import redact

SECRET = "sk-secret-password-0123456789"
ENV = {"OPENAI_API_KEY": SECRET, "HOME": "/root"}


def test_a_whole_secret_and_a_bearer_credential_are_replaced():
    assert redact(f"key {SECRET} at /root", ENV) == "key [redacted] at /root"
    assert redact("Authorization: Bearer abcdefgh12345", ENV) == \
        "Authorization: Bearer [redacted]"


def test_a_secret_cut_at_the_end_of_a_quoted_excerpt_is_removed():
    # As the answer checks quote an answer: the first 160 characters and an ellipsis.
    quoted = f"missing ['x'] in “the key is {SECRET[:11]}…”"
    assert redact(quoted, ENV) == "missing ['x'] in “the key is [redacted]…”"
    assert redact(f"“…ends with {SECRET[:8]}”", ENV) == "“…ends with [redacted]”"
    assert redact(f"cut: {SECRET[:14]}...", ENV) == "cut: [redacted]..."
    assert redact(f"the tail {SECRET[:9]}", ENV) == "the tail [redacted]"  # the text's end


def test_a_secret_cut_at_the_start_of_a_quoted_excerpt_is_removed():
    assert redact(f"contains 'a': “…{SECRET[-12:]} and more…”", ENV) == \
        "contains 'a': “…[redacted] and more…”"
    assert redact(f"{SECRET[-10:]} was the end of the log", ENV) == \
        "[redacted] was the end of the log"  # the text's start


def test_a_cut_secret_is_removed_from_json_as_the_artifact_and_the_tools_write_it():
    reason = {"reason": f"missing ['x'] in “key {SECRET[:11]}…”"}
    for text in (json.dumps(reason), json.dumps(reason, ensure_ascii=False)):
        assert SECRET[:11] not in redact(text, ENV)
        assert json.loads(redact(text, ENV))["reason"] == "missing ['x'] in “key [redacted]…”"


def test_short_fragments_and_fragments_inside_a_sentence_stay():
    # Seven characters is too short to tell from ordinary text; a prefix that runs on into
    # other characters is not a cut secret.
    assert redact(f"“{SECRET[:7]}…”", ENV) == f"“{SECRET[:7]}…”"
    assert redact(f"{SECRET[:10]}XYZ and on", ENV) == f"{SECRET[:10]}XYZ and on"
    assert redact("“nothing secret here…”", ENV) == "“nothing secret here…”"


def test_the_secrets_read_once_redact_as_the_environment_does():
    from app.redact import secret_values

    secrets = secret_values({**ENV, "SHORT_TOKEN": "abc", "DATABASE_URL": "postgres://u:pw@h"})
    assert secrets == {"OPENAI_API_KEY": SECRET, "DATABASE_URL": "postgres://u:pw@h"}
    text = f"key {SECRET} and postgres://u:pw@h"
    assert redact(text, secrets) == redact(text, ENV | {"DATABASE_URL": "postgres://u:pw@h"}) \
        == "key [redacted] and [redacted]"
