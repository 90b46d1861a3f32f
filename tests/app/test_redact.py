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


# A key as providers issue them: random letters and digits behind a known prefix.
KEY = "sk-proj-Xa9fB2kLmQ7rT4vWyZ3cD8eF"
KEYS = {"OPENAI_API_KEY": KEY}


def test_a_piece_of_a_secret_inside_a_sentence_is_removed():
    # As a judge's reason paraphrases it: a piece of the key mid-sentence, at no quote's edge.
    reason = f"The answer gives the visitor the key {KEY[8:24]} and should not."
    assert redact(reason, KEYS) == "The answer gives the visitor the key [redacted] and should not."
    assert redact(f"it begins {KEY[:18]} then", KEYS) == "it begins [redacted] then"


def test_a_secret_split_into_words_lowercased_or_without_its_underscores_is_removed():
    # As the catalogue search's note lists the words no record has (lowercased, sorted).
    words = ", ".join(sorted(w.lower() for w in KEY.split("-")))
    note = f"No catalogue record mentions: {words}. The catalogue lists 2 machines."
    redacted = redact(note, KEYS)
    assert KEY[8:].lower() not in redacted and "[redacted]" in redacted
    assert redacted.startswith("No catalogue record mentions: ") and \
        redacted.endswith(". The catalogue lists 2 machines.")
    # As a check quotes an answer whose markup dropped a key's underscores.
    underscored = "tok_Xa9fB2kL_mQ7rT4vW_yZ3cD8eF"
    assert redact("does not name Form 4: “your token is tokXa9fB2kLmQ7rT4vWyZ3cD8eF, keep it”",
                  {"SERVICE_TOKEN": underscored}) == \
        "does not name Form 4: “your token is [redacted], keep it”"
    # The words of a secret split by spaces, in JSON as the artifact writes it.
    text = json.dumps({"unknown_words": ["xa9fb2klmq7rt4vwyz3cd8ef", "proj", "sk"]})
    assert json.loads(redact(text, KEYS)) == {"unknown_words": ["[redacted]", "proj", "sk"]}


def test_pieces_never_join_across_json_strings_nor_break_the_json():
    text = json.dumps({"a": KEY[8:16], "b": KEY[16:24]})  # two halves, each too short alone
    assert json.loads(redact(text, KEYS)) == {"a": KEY[8:16], "b": KEY[16:24]}


def test_ordinary_text_and_an_address_s_public_parts_stay():
    url = "postgresql://evals:Xa9fB2kLmQ7rT4vW@localhost:5432/evals"
    env = {"DATABASE_URL": url}
    # A URL's password is its secret: the scheme, host and port are in every error message.
    assert redact("the store (PostgreSQL on localhost:5432) is down", env) == \
        "the store (PostgreSQL on localhost:5432) is down"
    assert redact("password Xa9fB2kLmQ7rT4vW leaked", env) == "password [redacted] leaked"
    # Nine letters or digits of a key are too few to tell from ordinary text.
    assert redact(f"part {KEY[8:17]} only", KEYS) == f"part {KEY[8:17]} only"


def test_a_conninfo_s_password_is_its_secret_not_its_folder():
    # DATABASE_URL as libpq key=value pairs, the server in a folder whose name is a word the
    # assistant says: the words stay, the password goes.
    info = "user=evals dbname=store host=/srv/makerspace-tests/pg password=Xa9fB2kLmQ7rT4vW"
    env = {"DATABASE_URL": info}
    said = "You are the assistant of the university's makerspace.\nThe MakerLAB is open."
    assert redact(said, env) == said
    assert redact("password Xa9fB2kLmQ7rT4vW leaked", env) == "password [redacted] leaked"
    assert redact(f"the store ({info}) is down", env) == "the store ([redacted]) is down"
    # Any other value of it is secret too (sslpassword, a key libpq adds later).
    more = {"DATABASE_URL": "host=/srv/x dbname=y password=pw sslpassword=Kq7ZpW3xR9mT2vLb"}
    assert redact("it said Kq7ZpW3xR9mT2vLb here", more) == "it said [redacted] here"
    uri = {"DATABASE_URL": "postgresql://evals@localhost/store?sslpassword=Kq7ZpW3xR9mT2vLb"}
    assert redact("it said Kq7ZpW3xR9mT2vLb here", uri) == "it said [redacted] here"
    assert redact("the store (PostgreSQL on localhost) is down", uri) == \
        "the store (PostgreSQL on localhost) is down"
    # A value with "=" that is no conninfo (a key's padding, a pair libpq does not know, text
    # that cannot be encoded) is secret whole, and redacting never fails on it.
    assert redact("x", {"API_KEY": "abc\udcffdef=ghi=jk"}) == "x"
    for value in ("c2stYWJjZGVmZ2hpams=", "token=Zq81mXr2Pa7Lc0vN"):
        assert redact(f"is {value[:12]}...", {"API_KEY": value}) == "is [redacted]..."
