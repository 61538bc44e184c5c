"""The embedded authorization server's clients, codes and tokens live in the state store: two
servers over one state (two replicas over one PostgreSQL database, or two processes over one
SQLite file) accept what the other issued and refuse what the other already used."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from mcp.server.auth.provider import AuthorizationParams, TokenError
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import AnyUrl

from mcp_tools.oauth.embedded import EmbeddedAuthorizationServer
from mcp_tools.state import derive_key
from mcp_tools.state.oauth import OAuthStore
from mcp_tools.state.store import StateStore

pytestmark = pytest.mark.anyio
OpenStore = Callable[..., StateStore]
ISSUER = "http://127.0.0.1:8080"
RESOURCE = ISSUER + "/mcp"
REDIRECT = "http://127.0.0.1:9/callback"
KEY = derive_key("replicas-share-this-secret-of-32-bytes", "oauth clients")


class Replica:
    """One replica's authorization server over its own connection to the shared state."""

    def __init__(self, state: StateStore) -> None:
        self.state = state
        self.refusals: list[str] = []
        self.server = EmbeddedAuthorizationServer(
            OAuthStore(state, KEY),
            ISSUER,
            RESOURCE,
            ISSUER + "/approvals/consent",
            ["mcp:read", "mcp:write"],
            lambda principal, tool, decision, outcome: self.refusals.append(f"{decision}: {outcome}"),
        )


def replicas(open_store: OpenStore) -> tuple[Replica, Replica]:
    return Replica(open_store()), Replica(open_store())


def client_info(client_id: str = "client-1", **extra: Any) -> OAuthClientInformationFull:
    return OAuthClientInformationFull(
        client_id=client_id,
        redirect_uris=[AnyUrl(REDIRECT)],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        client_name="Replicated client",
        **extra,
    )


async def code_from(asked: Replica, answered: Replica, client: OAuthClientInformationFull) -> str:
    """An authorization request made through one replica, consented to on another's page."""
    consent_url = await asked.server.authorize(
        client,
        AuthorizationParams(
            state="s1",
            scopes=["mcp:read"],
            code_challenge="x" * 43,
            redirect_uri=AnyUrl(REDIRECT),
            redirect_uri_provided_explicitly=True,
            resource=RESOURCE,
        ),
    )
    request_id = consent_url.rsplit("/", 1)[1]
    assert answered.server.consent_request(request_id) is not None
    back = answered.server.answer(request_id, allow=True)
    assert back is not None
    assert asked.server.answer(request_id, allow=True) is None  # a consent is answered once, anywhere
    return parse_qs(urlsplit(back).query)["code"][0]


async def test_a_client_registered_and_a_token_issued_on_one_replica_work_on_the_other(
    open_store: OpenStore,
) -> None:
    first, second = replicas(open_store)
    await first.server.register_client(client_info())
    client = await second.server.get_client("client-1")
    assert client is not None and client.client_name == "Replicated client"
    code = await code_from(first, second, client)
    loaded = await first.server.load_authorization_code(client, code)
    assert loaded is not None
    token = await first.server.exchange_authorization_code(client, loaded)
    accepted = await second.server.load_access_token(token.access_token)
    assert accepted is not None and accepted.client_id == "client-1" and accepted.scopes == ["mcp:read"]
    assert [name for name, _ in second.server.clients()] == ["client-1"]


async def test_attack_a_code_redeemed_on_one_replica_is_refused_on_the_other(open_store: OpenStore) -> None:
    first, second = replicas(open_store)
    await first.server.register_client(client_info())
    client = await first.server.get_client("client-1")
    assert client is not None
    code = await code_from(first, first, client)
    loaded = await first.server.load_authorization_code(client, code)
    assert loaded is not None
    token = await first.server.exchange_authorization_code(client, loaded)
    # the same code presented to the other replica: refused, and what it bought is revoked
    assert await second.server.load_authorization_code(client, code) is None
    with pytest.raises(TokenError):
        await second.server.exchange_authorization_code(client, loaded)
    assert await first.server.load_access_token(token.access_token) is None
    assert any("authorization code replayed" in refusal for refusal in second.refusals)


async def test_attack_a_refresh_token_rotated_on_one_replica_is_refused_on_the_other(open_store: OpenStore) -> None:
    first, second = replicas(open_store)
    await first.server.register_client(client_info())
    client = await first.server.get_client("client-1")
    assert client is not None
    code = await code_from(first, second, client)
    loaded = await second.server.load_authorization_code(client, code)
    assert loaded is not None
    issued = await second.server.exchange_authorization_code(client, loaded)
    assert issued.refresh_token is not None
    old = await first.server.load_refresh_token(client, issued.refresh_token)
    assert old is not None
    rotated = await first.server.exchange_refresh_token(client, old, [])
    assert await second.server.load_access_token(rotated.access_token) is not None
    # the rotated-away refresh token, replayed on the other replica: refused, the family revoked
    assert await second.server.load_refresh_token(client, issued.refresh_token) is None
    with pytest.raises(TokenError):
        await second.server.exchange_refresh_token(client, old, [])
    assert await first.server.load_access_token(rotated.access_token) is None
    assert any("refresh token reused" in refusal for refusal in second.refusals)


def test_attack_of_two_replicas_redeeming_one_code_at_once_exactly_one_wins(open_store: OpenStore) -> None:
    stores = [OAuthStore(open_store(), KEY) for _ in range(2)]
    for round_ in range(10):
        stores[0].put_grant(f"code-{round_}", "code", "client-1", f"family-{round_}", {}, 300)
    won: list[bool] = []
    lock = threading.Lock()

    def redeem(store: OAuthStore, start: threading.Barrier) -> None:
        for round_ in range(10):
            start.wait()
            result = store.use_grant(f"code-{round_}", "code")
            with lock:
                won.append(result)

    start = threading.Barrier(2)
    threads = [threading.Thread(target=redeem, args=(store, start)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert won.count(True) == 10 and won.count(False) == 10


async def test_stored_codes_tokens_and_client_secrets_are_not_readable_in_the_database(
    open_store: OpenStore,
) -> None:
    first, second = replicas(open_store)
    await first.server.register_client(client_info(client_secret="client-secret-value-0123456789"))
    client = await second.server.get_client("client-1")
    assert client is not None and client.client_secret == "client-secret-value-0123456789"
    code = await code_from(first, first, client)
    loaded = await first.server.load_authorization_code(client, code)
    assert loaded is not None
    token = await first.server.exchange_authorization_code(client, loaded)
    with first.state.reading() as db:
        stored = json.dumps(
            [
                [list(row) for row in db.execute(f"SELECT * FROM {table}").fetchall()]
                for table in ("oauth_clients", "oauth_grants", "oauth_requests")
            ]
        )
    for secret in (code, token.access_token, token.refresh_token or "-", "client-secret-value", "Replicated client"):
        assert secret not in stored
    # without the shared secret the client does not open: it is unknown, never half-read
    assert OAuthStore(second.state, None).get_client("client-1") is None
    assert (
        OAuthStore(second.state, derive_key("another-secret-of-at-least-32-bytes!", "oauth clients")).get_client(
            "client-1"
        )
        is None
    )


OLD_SCHEMA = """
CREATE TABLE clients (client_id TEXT PRIMARY KEY, info TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE requests (id_sha256 TEXT PRIMARY KEY, data TEXT NOT NULL, expires REAL NOT NULL);
CREATE TABLE grants (sha256 TEXT PRIMARY KEY, kind TEXT NOT NULL, client_id TEXT NOT NULL, family TEXT NOT NULL,
    data TEXT NOT NULL, expires REAL NOT NULL, used REAL, revoked REAL);
"""


async def test_clients_and_tokens_of_an_older_oauth_file_move_into_the_state_store(
    open_store: OpenStore, tmp_path: Path
) -> None:
    from mcp_tools.state.oauth import digest

    old = tmp_path / "oauth.sqlite3"
    with sqlite3.connect(old) as db:
        db.executescript(OLD_SCHEMA)
        db.execute("INSERT INTO clients VALUES (?, ?, 0)", ("old-client", client_info("old-client").model_dump_json()))
        data = {"client_id": "old-client", "scopes": ["mcp:read"], "resource": RESOURCE, "subject": "owner"}
        db.execute(
            "INSERT INTO grants VALUES (?, 'access', 'old-client', 'f1', ?, 9e12, NULL, NULL)",
            (digest("old-access-token"), json.dumps({**data, "expires_at": None, "token": ""})),
        )
    replica = Replica(open_store())
    assert OAuthStore(replica.state, KEY).import_file(old) == 2
    assert not old.exists() and (tmp_path / "oauth.sqlite3.imported").exists()
    assert await replica.server.get_client("old-client") is not None
    assert await replica.server.load_access_token("old-access-token") is not None
    with replica.state.reading() as db:  # moved in sealed, like every client registered since
        assert "Replicated client" not in db.execute("SELECT info FROM oauth_clients").fetchone()[0]
    assert OAuthStore(replica.state, KEY).import_file(old) == 0  # once


def test_an_unreadable_older_oauth_file_is_left_alone_and_the_server_goes_on(
    open_store: OpenStore, tmp_path: Path
) -> None:
    old = tmp_path / "oauth.sqlite3"
    old.write_bytes(b"not a database, " * 512)
    store = OAuthStore(open_store(), KEY)
    assert store.import_file(old) == 0
    assert old.exists()  # kept for the person to look at
    store.put_client("fresh", {"client_id": "fresh"})
    assert store.get_client("fresh") == {"client_id": "fresh"}


def test_a_state_file_from_before_the_oauth_limits_gains_their_columns(tmp_path: Path) -> None:
    """The SQLite side of migration 0011: a client that holds tokens counts as consented to,
    one that never did expires, and waiting requests are counted per client."""
    from mcp_tools.state.sqlite import PolicyStore

    path = tmp_path / "policy.sqlite3"
    with sqlite3.connect(path) as db:  # the oauth tables as an older version wrote them
        db.executescript(
            "CREATE TABLE oauth_clients (client_id TEXT PRIMARY KEY, info TEXT NOT NULL, created REAL NOT NULL);"
            "CREATE TABLE oauth_requests (id_sha256 TEXT PRIMARY KEY, data TEXT NOT NULL, expires REAL NOT NULL);"
            "CREATE TABLE oauth_grants (sha256 TEXT PRIMARY KEY, kind TEXT NOT NULL, client_id TEXT NOT NULL, "
            "family TEXT NOT NULL, data TEXT NOT NULL, expires REAL NOT NULL, used REAL, revoked REAL);"
        )
        db.execute("INSERT INTO oauth_clients VALUES ('holder', '{\"client_id\": \"holder\"}', 0)")
        db.execute("INSERT INTO oauth_clients VALUES ('idle', '{\"client_id\": \"idle\"}', 0)")
        db.execute("INSERT INTO oauth_grants VALUES ('h', 'refresh', 'holder', 'f', '{}', 9e12, NULL, NULL)")
    store = OAuthStore(PolicyStore(path), None)
    assert store.get_client("holder", 3600) == {"client_id": "holder"}
    assert store.get_client("idle", 3600) is None  # registered long ago, never consented to
    assert store.has_consented("holder") and not store.has_consented("idle")
    for n in range(3):
        store.put_request(f"r{n}", {"client_id": "holder"}, 600, most=10, most_per_client=2)
    assert [store.get_request(f"r{n}") is not None for n in range(3)] == [False, True, True]
    OAuthStore(PolicyStore(path), None)  # a second start changes nothing
