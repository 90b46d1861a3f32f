"""create_app: the host names the app answers to."""


async def test_a_request_for_another_host_name_is_refused(make):
    """A page whose name rebinds to 127.0.0.1 sends its own Host and a matching Origin."""
    client, model = make(demo_signin=True)
    async with client:
        r = await client.post("/api/session", json={"role": "super_admin"},
                              headers={"host": "rebind.attacker.example:8000",
                                       "origin": "http://rebind.attacker.example:8000"})
    assert r.status_code == 400 and model.requests == []
