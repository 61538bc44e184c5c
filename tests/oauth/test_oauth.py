"""`[http.oauth]`: `serve --http` as a resource server of a real OpenID provider.

The provider is `oidc-provider` (certified OpenID, pinned by `tests/oidc/package-lock.json`,
installed by the first test of a session with `npm ci` into `.pytest-npm/`), run by
`tests/oidc/provider.mjs` on 127.0.0.1 with a resource indicator for our `/mcp`, so it issues
JWT access tokens for it. The test owns the provider's signing key, so the attack tokens below
carry a valid signature wherever the attack is about something else (issuer, audience, expiry).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.harness import failure, ok
from tests.npm_packages import npm_ci
from tests.oauth.clients import MemoryStorage
from tests.processes import ROOT, bearer, cli_in_process, demo_config, free_port, http_server, run_cli

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
PINNED = ROOT / "tests" / "oidc"
MODULE = Path("node_modules", "oidc-provider", "lib", "index.js")
CI_TOKEN = "tok-ci-0123456789abcdef"
SECRET = "secret-for-the-test-client-0123456789"
OTHER_RESOURCE = "https://other.example.org/mcp"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


def install_pinned_provider() -> Path:
    """The pinned oidc-provider's node_modules, installed into .pytest-npm/ once."""
    return npm_ci(PINNED, MODULE) / "node_modules"


def new_key(kid: str) -> Any:
    from joserfc.jwk import RSAKey

    return RSAKey.generate_key(2048, parameters={"kid": kid, "use": "sig", "alg": "RS256"}, private=True)


class Provider:
    def __init__(self, issuer: str, key: Any) -> None:
        self.issuer = issuer
        self.key = key

    def token(self, resource: str, scope: str = "mcp:read mcp:write", client: str = "robot") -> str:
        """A real access token from the provider (client credentials, RFC 8707 resource)."""
        answer = httpx2.post(
            self.issuer + "/token",
            data={"grant_type": "client_credentials", "resource": resource, "scope": scope},
            auth=(client, SECRET),
        )
        assert answer.status_code == 200, answer.text
        return str(answer.json()["access_token"])

    def forge(self, claims: dict[str, Any], key: Any = None, header: dict[str, Any] | None = None) -> str:
        from joserfc import jwt

        key = key or self.key
        return jwt.encode(header or {"alg": "RS256", "kid": key.kid, "typ": "at+jwt"}, claims, key)


@contextmanager
def running_provider(key: Any, port: int | None = None, interactive: bool = False) -> Iterator[Provider]:
    """oidc-provider on 127.0.0.1 (a free port, or `port`), signing with `key`.

    `interactive`: its login and consent forms and open client registration, for the SDK's client.
    """
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        pytest.skip("oidc-provider needs Node.js and npm on PATH (Debian: apt-get install nodejs npm)")
    modules = install_pinned_provider()
    config = {
        "port": port,
        "interactive": interactive,
        "signing_key": key.as_dict(private=True),
        "scopes": ["mcp:read", "mcp:write"],
        "clients": [
            {
                "client_id": name,
                "client_secret": SECRET,
                "grant_types": ["client_credentials"],
                "redirect_uris": [],
                "response_types": [],
                "scope": "mcp:read mcp:write",
            }
            for name in ("robot", "other-robot")
        ],
        "resources": {OTHER_RESOURCE: {"scope": "mcp:read"}},
        "loopback_mcp": {"scope": "mcp:read mcp:write"},
    }
    process = subprocess.Popen(
        [node, str(PINNED / "provider.mjs"), str(modules)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(config))
        process.stdin.close()
        line = process.stdout.readline()
        assert line, f"oidc-provider did not start: {process.stderr.read() if process.stderr else ''}"
        yield Provider(json.loads(line)["issuer"], key)
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with running_provider(new_key("k1")) as running:
        yield running


PORT = free_port()
RESOURCE = f"http://127.0.0.1:{PORT}/mcp"


def oauth_config(tmp_path: Path, issuer: str, extra: str = "", resource: str = RESOURCE) -> Path:
    return demo_config(
        tmp_path,
        f'[http.tokens]\nci = "{CI_TOKEN}"\n'
        f'[http.oauth]\nissuer = "{issuer}"\nresource = "{resource}"\n{extra}'
        '[http.oauth.scopes]\n"mcp:read" = ["read_only"]\n"mcp:write" = ["*"]\n',
    )


@pytest.fixture(scope="module")
def server(provider: Provider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    config = oauth_config(tmp_path_factory.mktemp("oauth"), provider.issuer)
    with http_server(config, port=PORT) as base:
        yield base, config


@asynccontextmanager
async def client_with(base: str, token: str) -> Any:
    async with (
        httpx2.AsyncClient(headers=bearer(token), timeout=30) as http,
        Client(streamable_http_client(base + "/mcp", http_client=http)) as client,  # type: ignore[arg-type]
    ):
        yield client


def audit_rows(config: Path) -> list[dict[str, Any]]:
    done = cli_in_process(config, "audit", "--json", "--tail", "500")
    return [json.loads(line) for line in done.stdout.splitlines()]


def post_init(base: str, token: str | None) -> httpx2.Response:
    headers = {**MCP_HEADERS, **(bearer(token) if token is not None else {})}
    return httpx2.post(base + "/mcp", json=INIT, headers=headers)


def test_metadata_names_the_issuer(server: tuple[str, Path], provider: Provider) -> None:
    base, _ = server
    answer = httpx2.get(base + "/.well-known/oauth-protected-resource/mcp")
    assert answer.status_code == 200
    metadata = answer.json()
    assert metadata["resource"] == RESOURCE
    assert metadata["authorization_servers"] == [provider.issuer]  # exactly: clients compare it
    assert set(metadata["scopes_supported"]) == {"mcp:read", "mcp:write"}


def test_no_token_gets_the_challenge_clients_follow(server: tuple[str, Path]) -> None:
    base, _ = server
    answer = post_init(base, None)
    assert answer.status_code == 401
    challenge = answer.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="http://127.0.0.1:{PORT}/.well-known/oauth-protected-resource/mcp"' in challenge


async def test_a_real_access_token_signs_in_and_names_the_principal(
    server: tuple[str, Path], provider: Provider
) -> None:
    base, config = server
    async with client_with(base, provider.token(RESOURCE)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"demo_echo", "demo_note"} <= names
        result = await client.call_tool("demo_echo", {"text": "hi"})
        assert not result.is_error
    rows = [row for row in audit_rows(config) if row["tool"] == "demo.echo"]
    assert rows and rows[-1]["principal"] == f"robot@{provider.issuer}"


async def test_an_approval_is_bound_to_the_subject_that_asked(server: tuple[str, Path], provider: Provider) -> None:
    base, config = server
    arguments = {"target": "bound-to-robot"}
    async with client_with(base, provider.token(RESOURCE)) as robot:
        asked = failure(await robot.call_tool("demo_erase", arguments))
        assert asked["kind"] == "approval_required"
        assert cli_in_process(config, "approvals", "approve", asked["approval_id"]).returncode == 0
        async with client_with(base, provider.token(RESOURCE, client="other-robot")) as other:
            stolen = failure(await other.call_tool("demo_erase", arguments))
        assert stolen["kind"] == "approval_required" and stolen["approval_id"] != asked["approval_id"]
        assert ok(await robot.call_tool("demo_erase", arguments)) == {"erased": "bound-to-robot"}
    rows = [row for row in audit_rows(config) if row.get("arguments") == arguments]
    who = [(row["principal"].split("@")[0], row["decision"]) for row in rows]
    assert who == [
        ("robot", "approval_required"),
        ("other-robot", "approval_required"),
        ("robot", "approved_out_of_band"),
    ]


async def test_static_tokens_keep_working_beside_oauth(server: tuple[str, Path]) -> None:
    base, _ = server
    async with client_with(base, CI_TOKEN) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"demo_echo", "demo_note"} <= names
    assert post_init(base, "tok-ci-wrong").status_code == 401


async def test_a_read_scope_lists_only_read_tools_and_a_write_call_gets_403(
    server: tuple[str, Path], provider: Provider
) -> None:
    base, config = server
    token = provider.token(RESOURCE, scope="mcp:read")
    async with client_with(base, token) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "demo_echo" in names and "demo_note" not in names and "demo_erase" not in names
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "demo_note", "arguments": {}}}
    answer = httpx2.post(base + "/mcp", json=call, headers={**MCP_HEADERS, **bearer(token)})
    assert answer.status_code == 403
    challenge = answer.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="mcp:write"' in challenge
    assert any(r["decision"] == "insufficient_scope" and r["tool"] == "demo.note" for r in audit_rows(config))


def test_a_read_scope_cannot_run_tools_as_text_calls(server: tuple[str, Path], provider: Provider) -> None:
    base, config = server
    reply = '<tool_call>{"name": "demo_note", "arguments": {"key": "k", "text": "t"}}</tool_call>'
    narrow = httpx2.post(
        base + "/text-calls", json={"reply": reply}, headers=bearer(provider.token(RESOURCE, "mcp:read"))
    )
    assert narrow.status_code == 403 and 'scope="mcp:write"' in narrow.headers["www-authenticate"]
    wide = httpx2.post(base + "/text-calls", json={"reply": reply}, headers=bearer(provider.token(RESOURCE)))
    assert wide.status_code == 200
    assert any(r["decision"] == "insufficient_scope" and "/text-calls" in r["outcome"] for r in audit_rows(config))


def _now() -> int:
    return int(time.time())


def _claims(provider: Provider, **changes: Any) -> dict[str, Any]:
    claims = {
        "iss": provider.issuer,
        "sub": "mallory",
        "aud": RESOURCE,
        "scope": "mcp:read mcp:write",
        "iat": _now(),
        "exp": _now() + 300,
        "client_id": "robot",
    }
    claims.update(changes)
    return {key: value for key, value in claims.items() if value is not None}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _alg_none(provider: Provider) -> str:
    header = _b64(json.dumps({"alg": "none", "typ": "at+jwt"}).encode())
    return f"{header}.{_b64(json.dumps(_claims(provider)).encode())}."


def _hs256_with_public_key(provider: Provider) -> str:
    from cryptography.hazmat.primitives import serialization
    from joserfc.jwk import RSAKey

    public = RSAKey.import_key(provider.key.as_dict(private=False))
    pem = public.public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    header = _b64(json.dumps({"alg": "HS256", "kid": "k1", "typ": "at+jwt"}).encode())
    body = _b64(json.dumps(_claims(provider)).encode())
    signature = hmac.new(pem, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{_b64(signature)}"


def _own_key_in_header(provider: Provider) -> str:
    from joserfc.jwk import ECKey

    key = ECKey.generate_key("P-256", private=True)
    return provider.forge(_claims(provider), key, {"alg": "ES256", "typ": "at+jwt", "jwk": key.as_dict(private=False)})


ATTACKS = {
    "another audience (a real token)": lambda p: p.token(OTHER_RESOURCE, scope="mcp:read"),
    "expired": lambda p: p.forge(_claims(p, exp=_now() - 3600, iat=_now() - 7200)),
    "not yet valid": lambda p: p.forge(_claims(p, nbf=_now() + 3600)),
    "unknown signing key": lambda p: p.forge(_claims(p), key=new_key("k2")),
    "a known kid, another key": lambda p: p.forge(_claims(p), key=new_key("k1")),
    "alg none": _alg_none,
    "its own key in the header (jwk)": _own_key_in_header,
    "HS256 signed with the public key": _hs256_with_public_key,
    "wrong issuer": lambda p: p.forge(_claims(p, iss="http://127.0.0.1:1/evil")),
    "no audience": lambda p: p.forge(_claims(p, aud=None)),
    "no expiry": lambda p: p.forge(_claims(p, exp=None)),
    "sender-constrained (cnf), sent without its proof": lambda p: p.forge(_claims(p, cnf={"jkt": _b64(b"k" * 32)})),
    "garbage": lambda p: "not-a-token",
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_attack_tokens_are_refused_and_audited(server: tuple[str, Path], provider: Provider, attack: str) -> None:
    base, config = server
    token = ATTACKS[attack](provider)
    before = len([r for r in audit_rows(config) if r["decision"] == "token_refused"])
    answer = post_init(base, token)
    assert answer.status_code == 401, attack
    assert 'error="invalid_token"' in answer.headers["www-authenticate"]
    assert token not in answer.text
    refused = [r for r in audit_rows(config) if r["decision"] == "token_refused"]
    assert len(refused) == before + 1
    assert token not in json.dumps(refused)


def test_a_missing_required_scope_is_refused_and_audited(provider: Provider, tmp_path: Path) -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    config = oauth_config(tmp_path, provider.issuer, 'required_scopes = ["mcp:read"]\n', resource)
    with http_server(config, port=port) as base:
        assert post_init(base, provider.token(resource, scope="mcp:write")).status_code == 401
        assert post_init(base, provider.token(resource, scope="mcp:read")).status_code == 200
        missing = post_init(base, None)
        assert 'scope="mcp:read"' in missing.headers["www-authenticate"]
    assert any(r["decision"] == "token_refused" and "mcp:read" in r["outcome"] for r in audit_rows(config))


def test_calls_per_minute_answer_429_with_retry_after(provider: Provider, tmp_path: Path) -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    config = oauth_config(tmp_path, provider.issuer, "calls_per_minute = 2\n", resource)
    token = provider.token(resource)
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "demo_echo", "arguments": {}}}
    headers = {**MCP_HEADERS, **bearer(token)}
    with http_server(config, port=port) as base:
        statuses = [httpx2.post(base + "/mcp", json=call, headers=headers).status_code for _ in range(3)]
        assert 429 not in statuses[:2] and statuses[2] == 429
        limited = httpx2.post(base + "/mcp", json=call, headers=headers)
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        other = httpx2.post(base + "/mcp", json=call, headers={**MCP_HEADERS, **bearer(CI_TOKEN)})
        assert other.status_code != 429  # the limit is per principal
    assert any(r["decision"] == "rate_limited" for r in audit_rows(config))


def test_replicas_sharing_a_postgresql_state_share_each_principals_calls_per_minute(
    provider: Provider, postgres_url: str, tmp_path: Path
) -> None:
    resource = f"http://127.0.0.1:{free_port()}/mcp"  # the balancer's address, in front of both
    state = f'[state]\nurl = "{postgres_url}"\nsecret = "replicas-share-this-secret-of-32-bytes"\n'
    configs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        config = oauth_config(tmp_path / name, provider.issuer, "calls_per_minute = 3\n", resource)
        config.write_text(config.read_text() + state)
        configs.append(config)
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "demo_echo", "arguments": {}}}
    headers = {**MCP_HEADERS, **bearer(provider.token(resource))}
    with http_server(configs[0]) as first, http_server(configs[1]) as second:
        statuses = [httpx2.post(base + "/mcp", json=call, headers=headers).status_code for base in (first, second) * 2]
        assert 429 not in statuses[:3] and statuses[3] == 429  # three calls in all, not three a replica
        limited = httpx2.post(first + "/mcp", json=call, headers=headers)
        assert limited.status_code == 429 and 1 <= int(limited.headers["retry-after"]) <= 61
        other = httpx2.post(second + "/mcp", json=call, headers={**MCP_HEADERS, **bearer(CI_TOKEN)})
        assert other.status_code != 429  # the limit is per principal
    assert any(r["decision"] == "rate_limited" for r in audit_rows(configs[1]))


def test_an_http_issuer_off_loopback_is_refused(tmp_path: Path) -> None:
    config = demo_config(tmp_path, f'[http.oauth]\nissuer = "http://login.example.org"\nresource = "{RESOURCE}"\n')
    done = run_cli(config, "doctor")
    assert done.returncode != 0
    assert "https://" in done.stdout + done.stderr


def test_opaque_tokens_are_introspected(provider: Provider, tmp_path: Path) -> None:
    port = free_port()
    resource = f"http://localhost:{port}/mcp"
    extra = f'introspection_client_id = "robot"\nintrospection_client_secret = "{SECRET}"\n'
    config = oauth_config(tmp_path, provider.issuer, extra, resource)
    token = provider.token(resource)
    assert token.count(".") != 2  # opaque: only the issuer can say what it means
    with http_server(config, port=port) as base:
        assert post_init(base, token).status_code == 200
        assert post_init(base, token + "x").status_code == 401
        another = provider.token(f"http://localhost:{free_port()}/mcp")  # active, for another audience
        assert post_init(base, another).status_code == 401
    refused = [r for r in audit_rows(config) if r["decision"] == "token_refused"]
    assert [r["outcome"] for r in refused] == ["token is not active", "token is for another audience"]
    assert SECRET not in json.dumps(audit_rows(config))


def introspections(provider: Provider, token: str) -> int:
    """How often the provider was asked about `token` (its test hook counts them)."""
    answer = httpx2.get(provider.issuer + "/test/introspections", params={"token": token})
    return int(answer.json()["count"])


def test_one_opaque_token_is_introspected_once_for_many_requests(provider: Provider, tmp_path: Path) -> None:
    port = free_port()
    resource = f"http://localhost:{port}/mcp"
    extra = f'introspection_client_id = "robot"\nintrospection_client_secret = "{SECRET}"\n'
    config = oauth_config(tmp_path, provider.issuer, extra, resource)
    token, other = provider.token(resource), provider.token(resource)
    log = tmp_path / "server.log"
    with http_server(config, port=port, log=log):
        base = f"http://127.0.0.1:{port}"
        assert [post_init(base, token).status_code for _ in range(5)] == [200] * 5
        assert post_init(base, other).status_code == 200
        assert post_init(base, other + "x").status_code == 401
        assert post_init(base, other + "x").status_code == 401  # a refusal is not kept: asked again
    assert introspections(provider, token) == 1
    assert introspections(provider, other) == 1
    assert introspections(provider, other + "x") == 2
    assert token not in log.read_text() and other not in log.read_text()
    assert token not in json.dumps(audit_rows(config))


def test_an_introspected_read_scope_reaches_only_read_tools(provider: Provider, tmp_path: Path) -> None:
    port = free_port()
    resource = f"http://localhost:{port}/mcp"
    extra = f'introspection_client_id = "robot"\nintrospection_client_secret = "{SECRET}"\n'
    config = oauth_config(tmp_path, provider.issuer, extra, resource)
    token = provider.token(resource, scope="mcp:read")
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "demo_note", "arguments": {}}}
    with http_server(config, port=port) as base:
        answer = httpx2.post(base + "/mcp", json=call, headers={**MCP_HEADERS, **bearer(token)})
        assert answer.status_code == 403 and 'scope="mcp:write"' in answer.headers["www-authenticate"]
        wide = httpx2.post(base + "/mcp", json=call, headers={**MCP_HEADERS, **bearer(provider.token(resource))})
        assert wide.status_code != 403
    assert any(r["decision"] == "insufficient_scope" and r["tool"] == "demo.note" for r in audit_rows(config))


class Clock:
    """The resource server's clock, moved by the test instead of waited for."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def introspecting_server(provider: Provider, clock: Clock, **settings: Any) -> tuple[Any, str]:
    """A `ResourceServer` that introspects at the provider, and the resource its tokens must name."""
    from mcp_tools.oauth.resource import ResourceServer
    from mcp_tools.oauth.settings import OAuthSettings

    resource = f"http://localhost:{free_port()}/mcp"
    options = OAuthSettings.model_validate(
        {
            "issuer": provider.issuer,
            "resource": resource,
            "introspection_client_id": "robot",
            "introspection_client_secret": SECRET,
            **settings,
        }
    )
    return ResourceServer(options, clock=clock), resource


def revoke(provider: Provider, token: str) -> None:
    answer = httpx2.post(provider.issuer + "/token/revocation", data={"token": token}, auth=("robot", SECRET))
    assert answer.status_code == 200, answer.text


async def test_concurrent_requests_with_one_token_share_one_introspection(provider: Provider) -> None:
    import asyncio

    server, resource = introspecting_server(provider, Clock())
    token = provider.token(resource)
    accepted = await asyncio.gather(*[server.check(token) for _ in range(8)])
    assert {found.subject for found in accepted} == {"robot"}
    assert introspections(provider, token) == 1


async def test_an_introspected_token_is_not_served_from_the_cache_once_it_expires(provider: Provider) -> None:
    from mcp_tools.oauth.resource import TokenRefused

    clock = Clock()
    server, resource = introspecting_server(provider, clock, introspection_cache_seconds=3600, leeway_seconds=0)
    token = provider.token(resource)  # lives 300 seconds at the provider
    first = await server.check(token)
    await server.check(token)
    assert introspections(provider, token) == 1
    clock.now = first.expires_at + 1
    with pytest.raises(TokenRefused, match="token expired"):
        await server.check(token)
    assert introspections(provider, token) == 2  # asked again: the cached answer ended at exp
    assert len(server.introspected) == 0


async def test_a_token_revoked_at_the_issuer_is_refused_once_the_cache_time_passes(provider: Provider) -> None:
    from mcp_tools.oauth.resource import TokenRefused

    clock = Clock()
    server, resource = introspecting_server(provider, clock, introspection_cache_seconds=60)
    token = provider.token(resource)
    await server.check(token)
    revoke(provider, token)
    await server.check(token)  # the documented trade-off: up to introspection_cache_seconds
    clock.now += 61
    with pytest.raises(TokenRefused, match="not active"):
        await server.check(token)
    with pytest.raises(TokenRefused, match="not active"):
        await server.check(token)  # and a refusal is not kept in place of the answer
    assert introspections(provider, token) == 3


async def test_a_cache_time_of_zero_asks_the_issuer_every_time(provider: Provider) -> None:
    from mcp_tools.oauth.resource import TokenRefused

    server, resource = introspecting_server(provider, Clock(), introspection_cache_seconds=0)
    token = provider.token(resource)
    await server.check(token)
    await server.check(token)
    revoke(provider, token)
    with pytest.raises(TokenRefused, match="not active"):
        await server.check(token)
    assert introspections(provider, token) == 3 and len(server.introspected) == 0


async def test_the_cache_keeps_its_entries_and_drops_the_least_recently_used(provider: Provider) -> None:
    server, resource = introspecting_server(provider, Clock(), introspection_cache_entries=2)
    first, second, third = (provider.token(resource) for _ in range(3))
    for token in (first, second, first, third):  # `second` is now the least recently used
        await server.check(token)
    assert len(server.introspected) == 2
    await server.check(first)
    await server.check(second)
    assert [introspections(provider, token) for token in (first, second, third)] == [1, 2, 1]


async def test_the_cache_holds_hashes_of_tokens_and_nothing_logs_a_token(
    provider: Provider, caplog: pytest.LogCaptureFixture
) -> None:
    from mcp_tools.oauth.resource import TokenRefused

    caplog.set_level("DEBUG")
    server, resource = introspecting_server(provider, Clock())
    token = provider.token(resource)
    await server.check(token)
    with pytest.raises(TokenRefused):
        await server.check(token + "x")
    assert server.introspected.keys() == [hashlib.sha256(token.encode()).digest()]
    held = repr(vars(server)) + repr(vars(server.introspected))
    assert token not in held and token.encode() not in b"".join(server.introspected.keys())
    assert token not in caplog.text


async def test_a_sender_constrained_opaque_token_is_refused_without_its_proof(provider: Provider) -> None:
    """A DPoP-bound token, stolen without its private key, is not a bearer token here."""
    from joserfc import jwt
    from joserfc.jwk import ECKey

    from mcp_tools.oauth.resource import TokenRefused

    server, resource = introspecting_server(provider, Clock())
    key = ECKey.generate_key("P-256", private=True)
    proof = jwt.encode(
        {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.as_dict(private=False)},
        {"htm": "POST", "htu": provider.issuer + "/token", "iat": _now(), "jti": _b64(hashlib.sha256(b"1").digest())},
        key,
    )
    answer = httpx2.post(
        provider.issuer + "/token",
        data={"grant_type": "client_credentials", "resource": resource, "scope": "mcp:read mcp:write"},
        auth=("robot", SECRET),
        headers={"DPoP": proof},
    )
    assert answer.status_code == 200 and answer.json()["token_type"] == "DPoP", answer.text
    with pytest.raises(TokenRefused, match="bearer"):
        await server.check(answer.json()["access_token"])
    assert len(server.introspected) == 0


def test_a_rotated_signing_key_is_fetched_when_a_token_names_it(tmp_path: Path) -> None:
    issuer_port, port = free_port(), free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    config = oauth_config(tmp_path, f"http://127.0.0.1:{issuer_port}", "jwks_min_refresh_seconds = 0\n", resource)
    with http_server(config, port=port) as base:
        with running_provider(new_key("old"), issuer_port) as before:
            assert post_init(base, before.token(resource)).status_code == 200  # the server now holds "old"
        with running_provider(new_key("new"), issuer_port) as after:
            assert post_init(base, after.token(resource)).status_code == 200  # "new" is fetched on sight
            forged = after.forge(_claims(after, aud=resource), key=new_key("unpublished"))
            assert post_init(base, forged).status_code == 401
    outcomes = [r["outcome"] for r in audit_rows(config) if r["decision"] == "token_refused"]
    assert outcomes == ["token signed by an unknown key"]


REDIRECT_URI = "http://127.0.0.1:1/callback"  # never opened: the browser below stops at it


class Browser:
    """A person at the provider's login and consent forms, as the SDK's client sends them there."""

    def __init__(self, login: str) -> None:
        self.login = login
        self.result: Any = None

    async def open(self, url: str) -> None:
        import re
        from urllib.parse import parse_qs, urljoin, urlsplit

        from mcp.shared.auth import AuthorizationCodeResult

        async with httpx2.AsyncClient(timeout=30) as http:
            answer = await http.get(url)
            for _ in range(20):
                location = answer.headers.get("location")
                if location is not None:
                    target = urljoin(str(answer.url), location)
                    if target.startswith(REDIRECT_URI):
                        query = {k: v[0] for k, v in parse_qs(urlsplit(target).query).items()}
                        assert "code" in query, query
                        self.result = AuthorizationCodeResult(
                            code=query["code"], state=query.get("state"), iss=query.get("iss")
                        )
                        return
                    answer = await http.get(target)
                    continue
                form = re.search(r'<form[^>]*action="([^"]+)"[^>]*>(.*?)</form>', answer.text, re.S)
                assert form is not None, answer.text[:2000]
                fields = dict(re.findall(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"', form[2]))
                fields.update({"login": self.login, "password": "anything"} if 'name="login"' in form[2] else {})
                answer = await http.post(urljoin(str(answer.url), form[1]), data=fields)
        raise AssertionError("the provider never redirected back")

    async def callback(self) -> Any:
        assert self.result is not None
        return self.result


async def test_the_sdks_oauth_client_signs_in_at_the_provider_end_to_end(tmp_path: Path) -> None:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata
    from pydantic import AnyUrl

    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    with running_provider(new_key("k1"), interactive=True) as idp:
        config = oauth_config(tmp_path, idp.issuer, "", resource)
        browser = Browser("alice")
        auth = OAuthClientProvider(
            server_url=resource,
            client_metadata=OAuthClientMetadata(
                redirect_uris=[AnyUrl(REDIRECT_URI)],
                client_name="mcp-tools tests",
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                token_endpoint_auth_method="none",
            ),
            storage=MemoryStorage(),
            redirect_handler=browser.open,
            callback_handler=browser.callback,
        )
        with http_server(config, port=port):
            async with (
                httpx2.AsyncClient(auth=auth, timeout=30) as http,
                Client(streamable_http_client(resource, http_client=http)) as client,  # type: ignore[arg-type]
            ):
                names = {tool.name for tool in (await client.list_tools()).tools}
                assert {"demo_echo", "demo_note"} <= names
                assert not (await client.call_tool("demo_echo", {"text": "hi"})).is_error
    rows = [row for row in audit_rows(config) if row["tool"] == "demo.echo"]
    assert rows and rows[-1]["principal"] == f"alice@{idp.issuer}"
