"""`[http.oauth] embedded = true`: the server is its own authorization server, for one person.

The SDK's own OAuth client signs in end to end (registration, the consent on the approvals
page, PKCE, tokens); then the attacks on the flow, by hand, each refused and audited.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.oauth.clients import MemoryStorage
from tests.processes import bearer, cli_in_process, demo_config, free_port, http_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
REDIRECT_URI = "http://127.0.0.1:1/callback"  # never opened: the browser stops at it
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


class Server:
    def __init__(self, base: str, config: Path, state_url: str | None = None) -> None:
        self.base = base
        self.config = config
        self.resource = base + "/mcp"
        self.state_url = state_url

    def stored(self) -> bytes:
        """Everything the state keeps of the OAuth flow, as bytes to search."""
        if self.state_url is None:
            state = self.config.parent / "state"
            return b"".join(path.read_bytes() for path in sorted(state.glob("policy.sqlite3*")))
        import psycopg

        with psycopg.connect(self.state_url) as db:
            rows = [
                db.execute(f"SELECT * FROM {table}").fetchall()  # type: ignore[call-overload]
                for table in ("oauth_clients", "oauth_requests", "oauth_grants")
            ]
        return json.dumps(rows, default=str).encode()

    def browser(self) -> httpx2.Client:
        """A browser signed in to the approvals page, as the person who runs the server."""
        browser = httpx2.Client(timeout=30)
        link = cli_in_process(self.config, "approvals", "login", "--http").stdout.strip()
        assert browser.get(link).status_code == 200
        return browser

    def consent(self, browser: httpx2.Client, authorize_url: str, allow: bool = True) -> dict[str, str]:
        """Follows the authorization request to the consent page, answers, returns the redirect's query."""
        asked = browser.get(authorize_url)
        assert asked.status_code in (302, 303), asked.text
        page = browser.get(urljoin(authorize_url, asked.headers["location"]))
        assert page.status_code == 200, page.text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
        action = re.search(r'<form method="post" action="([^"]+)"', page.text)
        assert csrf and action
        answered = browser.post(
            urljoin(str(page.url), action[1]),
            data={"csrf": csrf[1], "answer": "allow" if allow else "deny"},
            headers={"Origin": self.base},
        )
        target = re.search(r'url=([^"]+)"', answered.text)
        assert target, answered.text
        back = target[1].replace("&amp;", "&")
        assert back.startswith(REDIRECT_URI)
        return {k: v[0] for k, v in parse_qs(urlsplit(back).query).items()}

    def audit(self) -> list[dict[str, Any]]:
        done = cli_in_process(self.config, "audit", "--json", "--tail", "500")
        return [json.loads(line) for line in done.stdout.splitlines()]

    def refusals(self) -> list[str]:
        return [row["outcome"] for row in self.audit() if row["decision"] == "oauth_refused"]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The embedded authorization server keeping its clients and tokens in the SQLite state file,
    then in a PostgreSQL state."""
    tmp_path = tmp_path_factory.mktemp("embedded")
    port = free_port()
    state_url = request.getfixturevalue("postgres_server").create_database() if request.param != "sqlite" else None
    state = f'[state]\nurl = "{state_url}"\nsecret = "{secrets.token_hex(32)}"\n' if state_url else ""
    config = demo_config(
        tmp_path,
        # every request comes from 127.0.0.1: the attacks below outrun one address's minute
        f'[http]\npublic_requests_per_minute = 100000\n[http.oauth]\nembedded = true\nresource = "http://127.0.0.1:{port}/mcp"\n'
        '[http.oauth.scopes]\n"mcp:read" = ["read_only"]\n"mcp:write" = ["*"]\n' + state,
    )
    with http_server(config, port=port) as base:
        yield Server(base, config, state_url)


async def test_the_sdks_oauth_client_signs_in_with_the_persons_consent(server: Server) -> None:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
    from pydantic import AnyUrl

    browser = server.browser()
    answered: dict[str, str] = {}

    async def open_in_browser(url: str) -> None:
        answered.update(server.consent(browser, url))

    async def callback() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=answered["code"], state=answered.get("state"), iss=answered.get("iss"))

    auth = OAuthClientProvider(
        server_url=server.resource,
        client_metadata=OAuthClientMetadata(
            redirect_uris=[AnyUrl(REDIRECT_URI)],
            client_name="Test <b>client</b>",
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=MemoryStorage(),
        redirect_handler=open_in_browser,
        callback_handler=callback,
    )
    async with (
        httpx2.AsyncClient(auth=auth, timeout=30) as http,
        Client(streamable_http_client(server.resource, http_client=http)) as client,  # type: ignore[arg-type]
    ):
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"demo_echo", "demo_note"} <= names
        assert not (await client.call_tool("demo_echo", {"text": "hi"})).is_error
    rows = [row for row in server.audit() if row["tool"] == "demo.echo"]
    assert rows and rows[-1]["principal"] == f"owner@{server.base}"
    assert "code" in answered and answered.get("iss") == server.base
    stored = server.stored()
    assert answered["code"].encode() not in stored  # kept hashed
    assert auth.context.current_tokens is not None
    assert auth.context.current_tokens.access_token.encode() not in stored


# -- the flow by hand, for the attacks --------------------------------------------------------


def register(server: Server, redirect_uri: str = REDIRECT_URI) -> str:
    answer = httpx2.post(
        server.base + "/register",
        json={
            "redirect_uris": [redirect_uri],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "client_name": "attack tests",
        },
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["client_id"])


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def authorize_url(server: Server, client_id: str, challenge: str | None, **extra: str) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "state": "s1",
        "resource": server.resource,
        **({"code_challenge": challenge, "code_challenge_method": "S256"} if challenge else {}),
        **extra,
    }
    return str(httpx2.URL(server.base + "/authorize", params=params))


def code_for(server: Server, client_id: str, challenge: str) -> str:
    return server.consent(server.browser(), authorize_url(server, client_id, challenge))["code"]


def exchange(server: Server, client_id: str, code: str, verifier: str | None, **extra: str) -> httpx2.Response:
    data = {"grant_type": "authorization_code", "code": code, "client_id": client_id, "redirect_uri": REDIRECT_URI}
    if verifier is not None:
        data["code_verifier"] = verifier
    return httpx2.post(server.base + "/token", data={**data, **extra})


def refresh(server: Server, client_id: str, token: str) -> httpx2.Response:
    data = {"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id}
    return httpx2.post(server.base + "/token", data=data)


def signs_in(server: Server, access_token: str) -> bool:
    answer = httpx2.post(server.resource, json=INIT, headers={**MCP_HEADERS, **bearer(access_token)})
    return answer.status_code == 200


def test_a_replayed_code_is_refused_and_what_it_bought_is_revoked(server: Server) -> None:
    client_id = register(server)
    verifier, challenge = pkce()
    code = code_for(server, client_id, challenge)
    first = exchange(server, client_id, code, verifier)
    assert first.status_code == 200, first.text
    assert signs_in(server, first.json()["access_token"])
    before = len(server.refusals())
    replay = exchange(server, client_id, code, verifier)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert not signs_in(server, first.json()["access_token"])
    assert refresh(server, client_id, first.json()["refresh_token"]).status_code == 400
    assert len(server.refusals()) > before and any("replayed" in r for r in server.refusals())


def test_a_refresh_token_reused_after_rotation_revokes_the_family(server: Server) -> None:
    client_id = register(server)
    verifier, challenge = pkce()
    tokens = exchange(server, client_id, code_for(server, client_id, challenge), verifier).json()
    rotated = refresh(server, client_id, tokens["refresh_token"])
    assert rotated.status_code == 200 and rotated.json()["refresh_token"] != tokens["refresh_token"]
    assert signs_in(server, rotated.json()["access_token"])
    reused = refresh(server, client_id, tokens["refresh_token"])
    assert reused.status_code == 400
    assert refresh(server, client_id, rotated.json()["refresh_token"]).status_code == 400
    assert not signs_in(server, rotated.json()["access_token"])
    assert any("reused after rotation" in r for r in server.refusals())


def test_a_redirect_uri_other_than_the_registered_one_is_refused(server: Server) -> None:
    client_id = register(server)
    verifier, challenge = pkce()
    other = authorize_url(server, client_id, challenge, redirect_uri="https://evil.example/callback")
    answer = server.browser().get(other)
    assert answer.status_code == 400 and "evil.example" not in answer.headers.get("location", "")
    code = code_for(server, client_id, challenge)
    swapped = exchange(server, client_id, code, verifier, redirect_uri="http://127.0.0.1:2/callback")
    assert swapped.status_code == 400
    assert sum("/authorize" in r for r in server.refusals()) >= 1
    assert any("redirect_uri" in r for r in server.refusals())


def test_pkce_is_required_and_only_s256(server: Server) -> None:
    client_id = register(server)
    verifier, challenge = pkce()
    browser = server.browser()
    for url in (
        authorize_url(server, client_id, None),
        authorize_url(server, client_id, None, code_challenge=verifier, code_challenge_method="plain"),
    ):
        answer = browser.get(url)
        assert answer.status_code in (302, 303, 400)
        assert "/approvals/consent/" not in answer.headers.get("location", "")
        if answer.status_code != 400:
            assert "error=" in answer.headers["location"]
    code = code_for(server, client_id, challenge)
    assert exchange(server, client_id, code, None).status_code == 400  # no verifier
    assert exchange(server, client_id, code, verifier + "x").status_code == 400  # the wrong one
    assert exchange(server, client_id, code, verifier).status_code == 200  # the code survived both
    refused = server.refusals()
    assert any("code_verifier" in r or "verifier" in r for r in refused)
    assert any("code_challenge" in r for r in refused)


def test_a_denied_consent_returns_access_denied_and_no_code(server: Server) -> None:
    client_id = register(server)
    _, challenge = pkce()
    answer = server.consent(server.browser(), authorize_url(server, client_id, challenge), allow=False)
    assert answer.get("error") == "access_denied" and "code" not in answer


def test_consent_needs_the_owners_sign_in(server: Server) -> None:
    client_id = register(server)
    _, challenge = pkce()
    stranger = httpx2.Client(timeout=30)
    asked = stranger.get(authorize_url(server, client_id, challenge))
    page = stranger.get(urljoin(server.base, asked.headers["location"]))
    assert page.status_code == 401 and 'name="csrf"' not in page.text
    request_id = asked.headers["location"].rsplit("/", 1)[1]
    post = stranger.post(
        f"{server.base}/approvals/consent/{request_id}", data={"answer": "allow"}, headers={"Origin": server.base}
    )
    assert post.status_code == 401


# -- Client ID Metadata Documents ---------------------------------------------------------------


def tls_files(directory: Path) -> tuple[Path, Path, Path]:
    """A CA and a certificate for 127.0.0.1 it signed: (ca.pem, cert.pem, key.pem)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mcp-tools test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = directory / "ca.pem", directory / "cert.pem", directory / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return paths


@contextmanager
def documents_served(directory: Path, documents: dict[str, dict[str, Any]]) -> Iterator[tuple[str, Path]]:
    """An https server on 127.0.0.1 answering each path with its JSON document; yields (base, ca.pem)."""
    import ssl
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    ca, cert, key = tls_files(directory)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            document = documents.get(self.path)
            body = json.dumps(document).encode()
            self.send_response(200 if document is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{httpd.server_address[1]}", ca
    finally:
        httpd.shutdown()
        httpd.server_close()


async def test_a_client_named_by_its_metadata_document_signs_in(tmp_path: Path) -> None:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
    from pydantic import AnyUrl

    documents: dict[str, dict[str, Any]] = {}
    with documents_served(tmp_path, documents) as (origin, ca):
        client_id = origin + "/client.json"
        documents["/client.json"] = {
            "client_id": client_id,
            "client_name": "A client by its document",
            "redirect_uris": [REDIRECT_URI],
            "token_endpoint_auth_method": "none",
        }
        documents["/impostor.json"] = {"client_id": client_id, "redirect_uris": [REDIRECT_URI]}
        port = free_port()
        config = demo_config(tmp_path, f'[http.oauth]\nembedded = true\nresource = "http://127.0.0.1:{port}/mcp"\n')
        with http_server(config, port=port, SSL_CERT_FILE=str(ca)) as base:
            server = Server(base, config)
            metadata = httpx2.get(base + "/.well-known/oauth-authorization-server").json()
            assert metadata["client_id_metadata_document_supported"] is True
            browser = server.browser()
            answered: dict[str, str] = {}

            async def open_in_browser(url: str) -> None:
                answered.update(server.consent(browser, url))

            async def callback() -> AuthorizationCodeResult:
                return AuthorizationCodeResult(
                    code=answered["code"], state=answered.get("state"), iss=answered.get("iss")
                )

            auth = OAuthClientProvider(
                server_url=server.resource,
                client_metadata=OAuthClientMetadata(
                    redirect_uris=[AnyUrl(REDIRECT_URI)], token_endpoint_auth_method="none"
                ),
                storage=MemoryStorage(),
                redirect_handler=open_in_browser,
                callback_handler=callback,
                client_metadata_url=client_id,
            )
            async with (
                httpx2.AsyncClient(auth=auth, timeout=30) as http,
                Client(streamable_http_client(server.resource, http_client=http)) as client,  # type: ignore[arg-type]
            ):
                try:
                    result = await client.call_tool("demo_echo", {"text": "hi"})
                except Exception as exc:
                    raise AssertionError(
                        repr(getattr(exc, "message", exc)) + repr(getattr(exc, "data", None))
                    ) from None
                assert not result.is_error
            _, challenge = pkce()
            impostor = httpx2.get(authorize_url(server, origin + "/impostor.json", challenge))
            assert impostor.status_code == 400  # a document that names another URL is nobody
            assert any("does not name its own URL" in r for r in server.refusals())


def test_the_person_sees_the_clients_signed_in_and_revokes_one(server: Server) -> None:
    client_id = register(server)
    verifier, challenge = pkce()
    tokens = exchange(server, client_id, code_for(server, client_id, challenge), verifier).json()
    assert signs_in(server, tokens["access_token"])
    browser = server.browser()
    page = browser.get(server.base + "/approvals/").text
    assert client_id in page and "attack tests" in page
    assert "<b>client</b>" not in page  # a client's own name is shown escaped, never as markup
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf
    forged = httpx2.post(
        server.base + "/approvals/clients/revoke",
        data={"csrf": csrf[1], "client_id": client_id},
        headers={"Origin": server.base},
    )
    assert forged.status_code == 401 and signs_in(server, tokens["access_token"])  # no session, no revocation
    revoked = browser.post(
        server.base + "/approvals/clients/revoke",
        data={"csrf": csrf[1], "client_id": client_id},
        headers={"Origin": server.base},
        follow_redirects=False,
    )
    assert revoked.status_code == 303
    assert not signs_in(server, tokens["access_token"])
    assert refresh(server, client_id, tokens["refresh_token"]).status_code in (400, 401)
    assert client_id not in browser.get(server.base + "/approvals/").text
    assert any(r["decision"] == "oauth_client_revoked" for r in server.audit())
