"""Sessions end on the server: signing out, the demo sign-in turned off, and age."""

import pytest


async def test_signing_out_ends_the_session_for_every_copy_of_the_cookie(make):
    client, _ = make(demo_signin=True)
    async with client:
        await client.post("/api/session", json={"role": "super_admin"})
        copied = dict(client.cookies)
        await client.post("/api/session", json={"role": None})
    thief, _ = make(demo_signin=True)
    async with thief:
        thief.cookies.update(copied)
        me = (await thief.get("/api/me")).json()
    assert me["signed_in"] is None


async def test_a_demo_session_ends_when_the_demo_sign_in_is_turned_off(make):
    demo, _ = make(demo_signin=True)
    async with demo:
        await demo.post("/api/session", json={"role": "super_admin"})
        cookie = dict(demo.cookies)
    later, _ = make()  # the same SESSION_SECRET, demo sign-in off
    async with later:
        later.cookies.update(cookie)
        me = (await later.get("/api/me")).json()
    assert me["signed_in"] is None


async def test_a_session_expires(make, db):
    client, _ = make(demo_signin=True, session_max_age_s=60)
    async with client:
        await client.post("/api/session", json={"role": "staff"})
        assert (await client.get("/api/me")).json()["signed_in"]["role"] == "staff"
        await db.execute("UPDATE sessions SET created_at = now() - interval '2 minutes'")
        assert (await client.get("/api/me")).json()["signed_in"] is None


def test_without_session_secret_one_is_made_once_under_the_data_folder(settings, tmp_path):
    from app.web import create_app

    unset = settings.model_copy(update={"session_secret": None})
    first = create_app(unset).state.secret
    again = create_app(unset).state.secret  # a restart on the same data folder
    path = tmp_path / "session-secret"
    assert first == again and len(first) == 32
    assert path.stat().st_mode & 0o777 == 0o600
    assert create_app(settings).state.secret == b"test-secret"  # SESSION_SECRET wins


def test_processes_starting_at_once_agree_on_the_secret(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from app.web.sessions import persistent_secret

    path = tmp_path / "data" / "session-secret"
    with ThreadPoolExecutor(8) as pool:
        secrets = set(pool.map(lambda _: persistent_secret(path), range(32)))
    assert len(secrets) == 1
    assert sorted(p.name for p in path.parent.iterdir()) == ["session-secret"]


@pytest.mark.parametrize(("mode", "text", "message"), [
    (0o644, "ab" * 32, "readable by others"),
    (0o600, "not hex", "not a session secret"),
    (0o600, "", "not a session secret"),
])
def test_a_secret_file_open_to_others_or_damaged_is_refused_by_name(tmp_path, mode, text,
                                                                     message):
    from app.web.sessions import SessionSecretError, persistent_secret

    path = tmp_path / "session-secret"
    path.write_text(text)
    path.chmod(mode)
    with pytest.raises(SessionSecretError, match=message) as err:
        persistent_secret(path)
    assert str(path) in str(err.value)


def _session_cookie(response):
    cookies = [v for k, v in response.headers.multi_items()
               if k == "set-cookie" and v.startswith("session=")]
    assert len(cookies) == 1
    return [part.strip().lower() for part in cookies[0].split(";")]


@pytest.mark.parametrize(("public_url", "secure"), [
    (None, False), ("http://lab.uni.example", False), ("https://lab.uni.example", True)])
async def test_the_cookie_is_strict_http_only_and_lasts_as_long_as_the_session(
        make, public_url, secure):
    client, _ = make(demo_signin=True, session_max_age_s=3600, public_url=public_url)
    async with client:
        r = await client.post("/api/session", json={"role": "staff"})
    attributes = _session_cookie(r)
    assert "samesite=strict" in attributes and "httponly" in attributes
    assert "max-age=3600" in attributes
    assert ("secure" in attributes) is secure


def test_a_public_url_that_is_not_an_address_is_refused():
    from pydantic import ValidationError

    from app.settings import Settings

    for bad in ("lab.uni.example", "ftp://lab.uni.example", "https://"):
        with pytest.raises(ValidationError, match="public_url"):
            Settings(public_url=bad)


def test_a_secret_that_cannot_be_made_or_read_is_refused_by_name(tmp_path):
    from app.web.sessions import SessionSecretError, persistent_secret

    nowhere = tmp_path / "data"
    nowhere.symlink_to(tmp_path / "gone" / "data")  # a data folder that cannot be made
    taken = tmp_path / "file"
    taken.write_text("")  # a file where the data folder should be
    for path, message in ((nowhere / "session-secret", "cannot make the session secret"),
                          (taken / "session-secret", "cannot read the session secret")):
        with pytest.raises(SessionSecretError, match=message) as err:
            persistent_secret(path)
        assert str(path) in str(err.value)
