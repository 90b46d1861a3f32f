import asyncio
import datetime
import socket
import ssl
import time

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from app.capabilities import ToolError
from app.capabilities.read_page import check_url, fetch_page

PUBLIC_IP = "93.184.216.34"
OTHER_IP = "151.101.1.69"


def resolver(table):
    async def resolve(host, port):
        return table[host]
    return resolve


def rebinding(first, then):
    """A DNS that answers `first` once and `then` ever after: the rebinding attack."""
    calls = []

    async def resolve(host, port):
        calls.append(host)
        return [first] if len(calls) == 1 else [then]
    resolve.calls = calls
    return resolve


class Internet(httpx.AsyncBaseTransport):
    """The test's internet: a request to a public test address is served by `public`; any other
    goes out through a real transport, and so through the system resolver."""

    def __init__(self, public):
        self.public = public
        self.out = httpx.AsyncHTTPTransport()
        self.sent = []

    async def handle_async_request(self, request):
        self.sent.append(request)
        if request.url.host in (PUBLIC_IP, OTHER_IP):
            return await self.public.handle_async_request(request)
        return await self.out.handle_async_request(request)

    async def aclose(self):
        await self.out.aclose()


class ToLoopback(httpx.AsyncBaseTransport):
    """A real transport that connects to 127.0.0.1 whatever address the request names."""

    def __init__(self, verify):
        self.out = httpx.AsyncHTTPTransport(verify=verify)
        self.sent = []

    async def handle_async_request(self, request):
        self.sent.append(request.url.host)
        request.url = request.url.copy_with(host="127.0.0.1")
        return await self.out.handle_async_request(request)

    async def aclose(self):
        await self.out.aclose()


class Loopback:
    """A server on 127.0.0.1 that records the request heads that reach it."""

    def __init__(self):
        self.heads = []
        self.port = 0

    async def handle(self, reader, writer):
        try:
            self.heads.append(await reader.readuntil(b"\r\n\r\n"))
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 15\r\n"
                         b"connection: close\r\n\r\nloopback secret")
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


@pytest.fixture
async def loopback():
    srv = Loopback()
    server = await asyncio.start_server(srv.handle, "127.0.0.1", 0)
    srv.port = server.sockets[0].getsockname()[1]
    yield srv
    server.close()
    await server.wait_closed()


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


@pytest.mark.parametrize(
    "address",
    [
        "::127.0.0.1",  # IPv4-compatible
        "::169.254.169.254",
        "::ffff:127.0.0.1",  # IPv4-mapped
        "::ffff:10.0.0.1",
        "::ffff:0:7f00:1",  # IPv4-translated (SIIT) form of 127.0.0.1
        "64:ff9b::169.254.169.254",  # NAT64 well-known prefix
        "64:ff9b::10.0.0.1",
        "64:ff9b::127.0.0.1",
        "64:ff9b:1::808:808",  # local-use NAT64: the layout is local, so refused outright
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
        "2002:c0a8:1::1",  # 6to4 of 192.168.0.1
        "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1
        "ff0e::1",  # global-scope multicast
    ],
)
async def test_ipv6_forms_embedding_a_non_public_ipv4_address_are_refused(address):
    with pytest.raises(ToolError, match="non-public address"):
        await check_url("http://v6.example/", resolver({"v6.example": [address]}))


@pytest.mark.parametrize(
    "url",
    [
        "http://[::127.0.0.1]/",
        "http://[::ffff:127.0.0.1]:8000/admin",
        "http://[64:ff9b::169.254.169.254]/latest/meta-data",
        "http://[2002:7f00:1::1]/",
    ],
)
async def test_ipv6_literals_embedding_loopback_are_refused_with_the_real_resolver(url):
    with pytest.raises(ToolError, match="non-public"):
        await check_url(url)


@pytest.mark.parametrize("address", ["64:ff9b::808:808", "::ffff:8.8.8.8", "2002:808:808::1"])
async def test_ipv6_forms_of_a_global_ipv4_address_pass_and_are_the_address_to_use(address):
    assert await check_url("http://v6.example/", resolver({"v6.example": [address]})) == address


async def test_a_host_with_any_private_address_is_refused():
    table = {"mixed.example": ["93.184.216.34", "10.0.0.1"]}
    with pytest.raises(ToolError, match="non-public"):
        await check_url("http://mixed.example/", resolver(table))


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://x.example/", "http:///nohost"])
async def test_only_http_urls_with_a_host(url):
    with pytest.raises(ToolError, match="only http"):
        await check_url(url, resolver({}))


@pytest.mark.parametrize(("url", "reason"), [("http://x.example:abc/", "not a valid URL"),
                                             ("http://x.example:99999/", "out of range")])
async def test_malformed_urls_are_tool_errors(url, reason):
    with pytest.raises(ToolError, match=reason):
        await fetch_page(url, resolver=resolver({}))


async def test_loopback_literal_is_refused_with_the_real_resolver():
    with pytest.raises(ToolError, match="non-public"):
        await check_url("http://127.0.0.1:8000/admin")


async def test_a_rebinding_dns_answer_never_reaches_loopback(loopback, monkeypatch):
    # Were the client to resolve the name itself, the system resolver would say 127.0.0.1.
    real_getaddrinfo = socket.getaddrinfo

    def rebound(host, *args, **kwargs):
        if host in ("rebind.example", b"rebind.example"):
            host = "127.0.0.1"
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebound)
    internet = Internet(httpx.MockTransport(lambda request: httpx.Response(200, text="public")))
    resolve = rebinding(PUBLIC_IP, "127.0.0.1")

    page = await fetch_page(f"http://rebind.example:{loopback.port}/", resolver=resolve,
                            transport=internet)

    assert page["text"] == "public"
    assert loopback.heads == []
    assert resolve.calls == ["rebind.example"]
    [sent] = internet.sent
    assert sent.url.host == PUBLIC_IP
    assert sent.headers["host"] == f"rebind.example:{loopback.port}"


async def test_each_redirect_hop_is_resolved_checked_and_pinned():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == PUBLIC_IP:
            return httpx.Response(302, headers={"location": "https://other.example/next"})
        return httpx.Response(200, text="arrived")

    internet = Internet(httpx.MockTransport(handler))
    table = {"public.example": [PUBLIC_IP], "other.example": [OTHER_IP]}
    page = await fetch_page("http://public.example/start", resolver=resolver(table),
                            transport=internet)

    assert page == {"url": "https://other.example/next", "text": "arrived"}
    assert [str(r.url) for r in internet.sent] == [f"http://{PUBLIC_IP}/start",
                                                   f"https://{OTHER_IP}/next"]
    assert [r.headers["host"] for r in internet.sent] == ["public.example", "other.example"]
    assert internet.sent[1].extensions["sni_hostname"] == "other.example"


@pytest.mark.parametrize(
    "location",
    ["http://127.0.0.1:{port}/", "http://[::127.0.0.1]:{port}/",
     "http://[::ffff:127.0.0.1]:{port}/", "http://rebind.example:{port}/"],
)
async def test_a_redirect_to_loopback_is_refused(loopback, location):
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"location": location.format(port=loopback.port)})

    table = {"public.example": [PUBLIC_IP], "127.0.0.1": ["127.0.0.1"],
             "::127.0.0.1": ["::127.0.0.1"], "::ffff:127.0.0.1": ["::ffff:127.0.0.1"],
             "rebind.example": ["127.0.0.1"]}
    with pytest.raises(ToolError, match="non-public address"):
        await fetch_page("http://public.example/", resolver=resolver(table),
                         transport=Internet(httpx.MockTransport(handler)))
    assert loopback.heads == []


async def test_a_redirect_to_a_private_address_is_rechecked_and_refused():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"location": "http://internal.example/secret"})

    table = {"public.example": ["93.184.216.34"], "internal.example": ["10.0.0.5"]}
    with pytest.raises(ToolError, match="internal.example resolves to a non-public"):
        await fetch_page("http://public.example/", resolver=resolver(table),
                         transport=httpx.MockTransport(handler))


def _certificate(tmp_path, name):
    """A CA's PEM, and the cert and key files of a certificate it signs for `name`."""
    now = datetime.datetime.now(datetime.UTC)
    day = datetime.timedelta(days=1)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "read_page test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(1)
          .not_valid_before(now - day).not_valid_after(now + day)
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False,
                                       False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                         critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
            .not_valid_before(now - day).not_valid_after(now + day)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    return ca.public_bytes(serialization.Encoding.PEM).decode(), tmp_path


@pytest.mark.parametrize(("served_name", "readable"),
                         [("public.example", True), ("elsewhere.example", False)])
async def test_https_goes_to_the_checked_address_but_sni_and_certificate_use_the_name(
        tmp_path, loopback, served_name, readable):
    ca_pem, files = _certificate(tmp_path, served_name)
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(files / "cert.pem", files / "key.pem")
    sni = []
    server_tls.sni_callback = lambda sock, name, ctx: sni.append(name)
    server = await asyncio.start_server(loopback.handle, "127.0.0.1", 0, ssl=server_tls)
    port = server.sockets[0].getsockname()[1]
    transport = ToLoopback(verify=ssl.create_default_context(cadata=ca_pem))
    url = f"https://public.example:{port}/manual"
    try:
        if readable:
            page = await fetch_page(url, resolver=resolver({"public.example": [PUBLIC_IP]}),
                                    transport=transport)
            assert page["text"] == "loopback secret"
            assert b"\r\nhost: public.example:%d\r\n" % port in loopback.heads[0].lower()
        else:
            with pytest.raises(ToolError, match="CERTIFICATE_VERIFY_FAILED"):
                await fetch_page(url, resolver=resolver({"public.example": [PUBLIC_IP]}),
                                 transport=transport)
            assert loopback.heads == []
    finally:
        server.close()
        await server.wait_closed()
    assert transport.sent == [PUBLIC_IP]
    assert sni == ["public.example"]


async def test_a_page_past_the_byte_cap_is_refused():
    async def body():
        for _ in range(20):
            yield b"x" * 1000

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body())

    with pytest.raises(ToolError, match="larger than 8000 bytes"):
        await fetch_page("http://public.example/", max_bytes=8000, transport=httpx.MockTransport(
            handler), resolver=resolver({"public.example": [PUBLIC_IP]}))


async def test_a_server_that_trickles_bytes_is_cut_off_at_the_deadline():
    async def trickle():
        while True:
            yield b"x"
            await asyncio.sleep(0.02)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=trickle())

    started = time.monotonic()
    with pytest.raises(ToolError, match="not read within 0.3 s"):
        await fetch_page("http://public.example/", deadline_s=0.3, transport=httpx.MockTransport(
            handler), resolver=resolver({"public.example": [PUBLIC_IP]}))
    assert time.monotonic() - started < 2


async def test_a_slow_resolver_counts_against_the_deadline():
    async def slow(host, port):
        await asyncio.sleep(5)
        return [PUBLIC_IP]

    with pytest.raises(ToolError, match="not read within"):
        await fetch_page("http://public.example/", deadline_s=0.2, resolver=slow)


async def test_a_connection_failure_is_a_tool_error():
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    with pytest.raises(ToolError, match="could not read .*connection refused"):
        await fetch_page("http://public.example/", transport=httpx.MockTransport(handler),
                         resolver=resolver({"public.example": [PUBLIC_IP]}))


async def test_a_public_page_is_read_as_text():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/html"},
                              text="<html><script>x()</script><p>Form 4 resin</p></html>")

    page = await fetch_page("http://public.example/", resolver=resolver(
        {"public.example": ["93.184.216.34"]}), transport=httpx.MockTransport(handler))
    assert page["text"] == "Form 4 resin"
