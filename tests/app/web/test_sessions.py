"""Sessions end on the server: signing out, the demo sign-in turned off, and age."""


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
