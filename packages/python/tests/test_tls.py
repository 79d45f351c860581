"""The kit's own httpx clients share one SSL context, whose trust anchors are read at the first TLS
connection (issue 41, point 4): creating a token manager and a client reads no CA bundle (a tool on
the loopback sandbox over http never reads one), and a TLS connection still verifies the server's
certificate and name against what httpx's default context trusts (``SSL_CERT_FILE``, else certifi).
"""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tenant_integration import AsyncClient, AsyncTokenManager, Client, TokenManager
from tenant_integration._tls import _TrustOnFirstHandshake, shared_context

TENANT = "https://acme.tenant.test"
OPTIONS: dict[str, Any] = {
    "base_url": TENANT,
    "client_id": "demo",
    "redirect_uri": "http://127.0.0.1:53682/callback",
    "scopes": ["profile:read"],
}


def context_of(http: httpx.Client | httpx.AsyncClient) -> object:
    transport: Any = http._transport
    return transport._pool._ssl_context


async def test_the_kits_clients_share_one_context_and_an_http_client_of_yours_keeps_its_own() -> None:
    with TokenManager(**OPTIONS) as manager, Client(base_url=TENANT, auth=manager) as client:
        assert context_of(manager._http.client) is shared_context()
        assert context_of(client._http) is shared_context()
    async with AsyncTokenManager(**OPTIONS) as async_manager:
        await async_manager.is_signed_in()
        async with AsyncClient(base_url=TENANT, auth=async_manager) as async_client:
            assert context_of(async_manager._http._client()) is shared_context()
            assert context_of(async_client._http) is shared_context()
    with httpx.Client() as yours, Client(base_url=TENANT, http_client=yours) as client:
        assert context_of(client._http) is not shared_context()
    context = shared_context()
    assert isinstance(context, ssl.SSLContext)
    assert (context.verify_mode, context.check_hostname) == (ssl.CERT_REQUIRED, True)


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A loopback HTTPS server answering 200 ``ok``, its self-signed certificate for 127.0.0.1 in a file."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            try:
                with server_context.wrap_socket(connection, server_side=True) as tls:
                    tls.recv(65536)
                    tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            except (OSError, ssl.SSLError):
                pass  # a client that refused the certificate

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{listener.getsockname()[1]}/", cert
    listener.close()
    thread.join(timeout=5)


def test_the_trust_anchors_are_read_at_the_first_tls_connection_and_verify_the_server(
    tls_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, cert = tls_server
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    context = _TrustOnFirstHandshake(ssl.PROTOCOL_TLS_CLIENT)
    with httpx.Client(verify=context) as http:
        assert context.cert_store_stats()["x509_ca"] == 0, "nothing is read before a TLS connection"
        assert http.get(url).text == "ok"
    assert context.cert_store_stats()["x509_ca"] == 1


def test_a_server_the_trust_anchors_do_not_vouch_for_is_refused(
    tls_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = tls_server
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    context = _TrustOnFirstHandshake(ssl.PROTOCOL_TLS_CLIENT)  # certifi's bundle: not the test's certificate
    with httpx.Client(verify=context) as http, pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        http.get(url)
    assert context.cert_store_stats()["x509_ca"] > 100
