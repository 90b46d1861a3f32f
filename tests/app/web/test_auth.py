"""Sign-in with the university's provider, and roles from the lab's staff list."""

import os
import time

import httpx
import pytest

from app.settings import Settings
from app.web import create_app
from tests.fake_oidc import CLIENT_ID, CLIENT_SECRET, fake_oidc_provider


async def sign_in(client, provider, user) -> httpx.Response:
    provider.user = user
    start = await client.get("/auth/login")
    assert start.status_code in (302, 307), start.text
    async with httpx.AsyncClient() as browser:  # the provider's own pages
        back = await browser.get(start.headers["location"])
    return await client.get(back.headers["location"])


def oidc(provider, **more):
    return dict(oidc_issuer=provider.issuer, oidc_client_id=CLIENT_ID,
                oidc_client_secret=CLIENT_SECRET, **more)


SAM = {"sub": "u1", "email": "sam@uni.example", "email_verified": True, "name": "Sam"}


async def test_oidc_sign_in_takes_the_role_from_the_staff_list(make, db, tmp_path):
    staff_list = tmp_path / "staff.yaml"
    staff_list.write_text("staff:\n  - Sam.Maker@Uni.example\nsuper_admin: []\n")
    with fake_oidc_provider() as provider:
        settings = dict(oidc_issuer=provider.issuer, oidc_client_id=CLIENT_ID,
                        oidc_client_secret=CLIENT_SECRET, staff_list=staff_list)
        staff_client, _ = make(**settings)
        student_client, _ = make(**settings)
        async with staff_client, student_client:
            assert (await staff_client.get("/api/me")).json()["sign_in"] == "/auth/login"
            done = await sign_in(staff_client, provider, {
                "sub": "u1", "email": "sam.maker@uni.example", "email_verified": True,
                "name": "Sam Maker"})
            assert done.status_code == 303
            await sign_in(student_client, provider, {
                "sub": "u2", "email": "kim@uni.example", "email_verified": True,
                "name": "Kim"})
            staff = (await staff_client.get("/api/me")).json()["signed_in"]
            student = (await student_client.get("/api/me")).json()["signed_in"]
            # a second sign-in of the same account is the same person, with today's role
            staff_list.write_text("staff: []\n")
            again, _ = make(**settings)
            async with again:
                await sign_in(again, provider, {"sub": "u1", "email": "sam.maker@uni.example",
                                                "email_verified": True, "name": "Sam Maker"})
                demoted = (await again.get("/api/me")).json()["signed_in"]
    assert staff == {"name": "Sam Maker", "role": "staff", "title": ""}
    assert student["role"] == "student"
    assert demoted["role"] == "student"
    rows = await db.fetch("SELECT email FROM people WHERE oidc_subject IS NOT NULL ORDER BY id")
    assert [r["email"] for r in rows] == ["sam.maker@uni.example", "kim@uni.example"]


async def test_a_forged_or_replayed_callback_signs_nobody_in(make):
    with fake_oidc_provider() as provider:
        client, _ = make(oidc_issuer=provider.issuer, oidc_client_id=CLIENT_ID,
                         oidc_client_secret=CLIENT_SECRET)
        async with client:
            forged = await client.get("/auth/callback?code=made-up&state=made-up")
            me = (await client.get("/api/me")).json()
    assert forged.status_code == 400 and me["signed_in"] is None
    assert "sign-in failed" in forged.json()["error"]


async def test_an_unverified_email_is_refused(make):
    with fake_oidc_provider() as provider:
        client, _ = make(oidc_issuer=provider.issuer, oidc_client_id=CLIENT_ID,
                         oidc_client_secret=CLIENT_SECRET)
        async with client:
            r = await sign_in(client, provider, {"sub": "u9", "email": "x@uni.example",
                                                 "email_verified": False})
            me = (await client.get("/api/me")).json()
    assert r.status_code == 403 and me["signed_in"] is None


async def test_sign_in_is_a_clear_404_when_not_configured(make):
    client, _ = make()
    async with client:
        r = await client.get("/auth/login")
    assert r.status_code == 404 and "OIDC_ISSUER" in r.json()["error"]


@pytest.mark.parametrize(("text", "message"), [
    ("[]", "expected a mapping"),
    ("wizard: [a@b.c]", "unknown role 'wizard'"),
    ("staff: not-a-list", "staff must be a list of e-mail addresses"),
    ("staff: [: bad", "cannot read the staff list"),
    ('staff: ["\\u212Aim@uni.example"]', "staff: '.u212aim@uni.example' changes under NFKC"),
])
def test_a_bad_staff_list_is_named(tmp_path, text, message):
    from app.web.auth import StaffListError, load_staff_list

    path = tmp_path / "staff.yaml"
    path.write_text(text)
    with pytest.raises(StaffListError, match=message) as err:
        load_staff_list(path)
    assert str(path) in str(err.value)


async def test_someone_removed_from_the_staff_list_loses_the_role_at_once(make, tmp_path):
    staff_list = tmp_path / "staff.yaml"
    staff_list.write_text("staff: [sam@uni.example]\n")
    with fake_oidc_provider() as provider:
        client, _ = make(**oidc(provider, staff_list=staff_list))
        async with client:
            await sign_in(client, provider, SAM)
            before = (await client.get("/api/me")).json()["signed_in"]["role"]
            staff_list.write_text("staff: []\n")
            os.utime(staff_list, (time.time() + 5, time.time() + 5))  # a later mtime
            after = (await client.get("/api/me")).json()["signed_in"]["role"]
    assert (before, after) == ("staff", "student")


async def test_a_staff_list_broken_after_start_makes_sign_in_a_clear_503(make, tmp_path):
    staff_list = tmp_path / "staff.yaml"
    staff_list.write_text("staff: []\n")
    with fake_oidc_provider() as provider:
        client, _ = make(**oidc(provider, staff_list=staff_list))
        staff_list.write_text("staff: [: broken")
        os.utime(staff_list, (time.time() + 5, time.time() + 5))
        async with client:
            r = await sign_in(client, provider, SAM)
    assert r.status_code == 503 and "staff list" in r.json()["error"]


def test_a_broken_staff_list_or_demo_beside_oidc_stops_the_app_at_start(settings, tmp_path):
    from app.web.auth import StaffListError

    broken = tmp_path / "staff.yaml"
    broken.write_text("wizards: []")
    with pytest.raises(StaffListError, match="unknown role 'wizards'"):
        create_app(Settings(**{**settings.model_dump(), "staff_list": broken}))
    with pytest.raises(ValueError, match="cannot be on beside"):
        create_app(Settings(**{**settings.model_dump(), "demo_signin": True,
                               "oidc_issuer": "http://127.0.0.1:9", "oidc_client_id": "x",
                               "oidc_client_secret": "y"}))


async def test_an_address_without_email_verified_is_refused_unless_the_lab_says_so(make):
    unverified = {"sub": "u3", "email": "x@uni.example", "name": "X"}
    with fake_oidc_provider() as provider:
        strict, _ = make(**oidc(provider))
        trusting, _ = make(**oidc(provider, oidc_email_verified=True))
        async with strict, trusting:
            refused = await sign_in(strict, provider, unverified)
            accepted = await sign_in(trusting, provider, unverified)
    assert refused.status_code == 403 and accepted.status_code == 303


async def test_an_address_linked_to_another_account_is_a_clear_409(make):
    with fake_oidc_provider() as provider:
        first, _ = make(**oidc(provider))
        second, _ = make(**oidc(provider))
        async with first, second:
            await sign_in(first, provider, SAM)
            r = await sign_in(second, provider, {**SAM, "sub": "someone-else"})
    assert r.status_code == 409 and "another account" in r.json()["error"]


async def test_an_address_that_only_lowers_to_a_staff_address_is_refused(make, db, tmp_path,
                                                                         caplog):
    """U+212A KELVIN SIGN lowers to a plain k: the staff list must not be fooled by it, nor
    by other compatibility characters (a ligature, a long s)."""
    staff_list = tmp_path / "staff.yaml"
    staff_list.write_text("staff: [kim@uni.example, ff@uni.example, sam@uni.example]\n")
    with fake_oidc_provider() as provider:
        kim, _ = make(**oidc(provider, staff_list=staff_list))
        refused = []
        async with kim:
            await sign_in(kim, provider, {"sub": "real-kim", "email": "kim@uni.example",
                                          "email_verified": True, "name": "Kim"})
            for n, email in enumerate(["\u212aim@uni.example", "\ufb00@uni.example",
                                       "\u017fam@uni.example"]):
                other, _ = make(**oidc(provider, staff_list=staff_list))
                async with other:
                    caplog.clear()
                    r = await sign_in(other, provider, {"sub": f"other-{n}", "email": email,
                                                        "email_verified": True, "name": "X"})
                    refused.append((r.status_code, (await other.get("/api/me")).json()))
                    assert "reads as another one" in r.json()["error"]
                    lines = [rec for rec in caplog.records if rec.name == "app.web"]
                    assert len(lines) == 1 and lines[0].exc_info is None
            kim_now = (await kim.get("/api/me")).json()["signed_in"]
    for status, me in refused:
        assert status == 400 and me["signed_in"] is None
    assert kim_now == {"name": "Kim", "role": "staff", "title": ""}
    rows = await db.fetch("SELECT email FROM people WHERE oidc_subject IS NOT NULL")
    assert [r["email"] for r in rows] == ["kim@uni.example"]


async def test_an_address_in_capitals_is_the_same_person_and_role(make, db, tmp_path):
    staff_list = tmp_path / "staff.yaml"
    staff_list.write_text("staff: [Sam@Uni.Example]\n")
    with fake_oidc_provider() as provider:
        client, _ = make(**oidc(provider, staff_list=staff_list))
        async with client:
            r = await sign_in(client, provider, {**SAM, "email": "SAM@UNI.EXAMPLE"})
            me = (await client.get("/api/me")).json()["signed_in"]
    assert r.status_code == 303 and me["role"] == "staff"
    assert (await db.fetchone("SELECT email FROM people WHERE oidc_subject IS NOT NULL"))[
        "email"] == "sam@uni.example"


@pytest.mark.parametrize("fault", ["forge", "garbled"])
async def test_a_forged_or_garbled_id_token_is_a_400_with_one_log_line(make, caplog, fault):
    with fake_oidc_provider() as provider:
        setattr(provider, fault, True)
        client, _ = make(**oidc(provider))
        async with client:
            caplog.clear()
            r = await sign_in(client, provider, SAM)
            me = (await client.get("/api/me")).json()
    assert r.status_code == 400 and "sign-in failed" in r.json()["error"]
    assert me["signed_in"] is None
    lines = [rec for rec in caplog.records if rec.levelname in ("WARNING", "ERROR")]
    assert len(lines) == 1 and lines[0].exc_info is None
    assert "sign-in failed" in lines[0].getMessage()


async def test_sign_in_proves_its_code_with_pkce(make):
    with fake_oidc_provider() as provider:
        provider.require_pkce = True
        client, _ = make(**oidc(provider))
        async with client:
            r = await sign_in(client, provider, SAM)
    assert provider.challenges == ["S256"]
    assert r.status_code == 303


async def test_the_callback_address_comes_from_public_url(make):
    with fake_oidc_provider() as provider:
        client, _ = make(**oidc(provider, public_url="https://lab.uni.example"))
        async with client:
            start = await client.get("/auth/login")
    assert "redirect_uri=https%3A%2F%2Flab.uni.example%2Fauth%2Fcallback" in \
        start.headers["location"]
