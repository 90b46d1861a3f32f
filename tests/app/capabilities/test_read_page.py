import httpx
import pytest

from app.capabilities import ToolError
from app.capabilities.read_page import check_url, fetch_page


def resolver(table):
    async def resolve(host, port):
        return table[host]
    return resolve


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://localhost/", "127.0.0.1"),
        ("http://intranet.example/", "10.1.2.3"),
        ("http://router.example/", "192.168.0.1"),
        ("http://metadata.example/latest/meta-data", "169.254.169.254"),
        ("http://v6.example/", "::1"),
        ("http://ula.example/", "fd00::1"),
        ("http://cgnat.example/", "100.64.0.1"),
    ],
)
async def test_non_public_addresses_are_refused(url, address):
    host = httpx.URL(url).host
    with pytest.raises(ToolError, match="non-public address"):
        await check_url(url, resolver({host: [address]}))


async def test_a_host_with_any_private_address_is_refused():
    table = {"mixed.example": ["93.184.216.34", "10.0.0.1"]}
    with pytest.raises(ToolError, match="non-public"):
        await check_url("http://mixed.example/", resolver(table))


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://x.example/", "http:///nohost"])
async def test_only_http_urls_with_a_host(url):
    with pytest.raises(ToolError, match="only http"):
        await check_url(url, resolver({}))


async def test_loopback_literal_is_refused_with_the_real_resolver():
    with pytest.raises(ToolError, match="non-public"):
        await check_url("http://127.0.0.1:8000/admin")


async def test_a_redirect_to_a_private_address_is_rechecked_and_refused():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"location": "http://internal.example/secret"})

    table = {"public.example": ["93.184.216.34"], "internal.example": ["10.0.0.5"]}
    with pytest.raises(ToolError, match="internal.example resolves to a non-public"):
        await fetch_page("http://public.example/", resolver=resolver(table),
                         transport=httpx.MockTransport(handler))


async def test_a_public_page_is_read_as_text():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/html"},
                              text="<html><script>x()</script><p>Form 4 resin</p></html>")

    page = await fetch_page("http://public.example/", resolver=resolver(
        {"public.example": ["93.184.216.34"]}), transport=httpx.MockTransport(handler))
    assert page["text"] == "Form 4 resin"
