"""Google tokens live in the state store: token files of an older version are moved in once, the
server refreshes and stores there, replicas over one PostgreSQL database share each account's
token, and no token reaches a result, an audit row or a log line."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.core.tooling import Environment
from mcp_tools.state import credentials_key
from mcp_tools.state.google_tokens import SealedTokens
from mcp_tools.state.store import StateStore
from tests.harness import build_app, connect, failure, make_config, ok, text_of
from tests.servers.fake_google import FakeGmail, FakeGoogle
from tests.servers.gmail.fixtures import plain, sign_in
from tests.servers.google_accounts_fixtures import WORK, stored_accounts, stored_token, two_accounts

pytestmark = pytest.mark.anyio
OpenStore = Callable[..., StateStore]
SECRET = "replicas-share-this-secret-of-32-bytes"


@pytest.fixture
def work(google: FakeGoogle) -> FakeGoogle:
    return google.add_account(WORK)


@pytest.fixture
def work_gmail(work: FakeGoogle) -> FakeGmail:
    return FakeGmail(work)


TOKEN = {"refresh_token": "1//refresh-token-value", "token": "ya29.access", "scopes": ["s"], "account": "a@x.org"}


async def test_token_files_of_an_older_version_are_moved_into_the_state_store_once(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, work: FakeGoogle, work_gmail: FakeGmail
):
    gmail.add(plain(subject="Home"))
    work_gmail.add(plain(subject="Office", to=WORK))
    settings = two_accounts(tmp_path, google, work)
    files = [tmp_path / "state" / "google" / "token.json", tmp_path / "state" / "google" / "accounts" / "work.json"]
    before = [json.loads(path.read_text()) for path in files]
    async with connect(tmp_path, settings) as client:
        assert ok(await client.call_tool("gmail_search", {}))["messages"][0]["subject"] == "Home"
        assert ok(await client.call_tool("gmail_search", {"account": "work"}))["messages"][0]["subject"] == "Office"
    assert not any(path.exists() for path in files)  # read once: nothing left to read again
    assert stored_accounts(tmp_path) == ["default", "work"]
    assert [stored_token(tmp_path, label)["refresh_token"] for label in ("default", "work")] == [
        data["refresh_token"] for data in before
    ]
    async with connect(tmp_path, settings) as client:  # the next start finds them in the store
        assert ok(await client.call_tool("gmail_search", {"account": "work"}))["messages"][0]["subject"] == "Office"


async def test_attack_an_upstream_that_echoes_the_tokens_reaches_no_result_audit_row_or_log(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, caplog: pytest.LogCaptureFixture
):
    """ATTACK: Google (or a proxy in its place) echoes the access and refresh tokens back."""
    stored = gmail.add(plain())
    settings = sign_in(tmp_path, google)
    token = stored_token(tmp_path)
    secrets = [token["token"], token["refresh_token"]]
    google.fail("gmail.users.messages.get", 400, times=1, message=f"bad token {secrets[0]} / {secrets[1]}")
    app = build_app(make_config(tmp_path, settings))
    caplog.set_level(logging.DEBUG)
    try:
        async with connect(tmp_path, app=app) as client:
            refused = await client.call_tool("gmail_read", {"id": stored.id})
            gmail.add(plain(subject=f"Your token is {secrets[1]}", body=f"and {secrets[0]}"))
            found = await client.call_tool("gmail_search", {})
        rows = json.dumps([row.__dict__ for row in app.store.tail(50)], default=str)
    finally:
        app.store.close()
    assert failure(refused)["kind"] == "invalid_arguments" and ok(found)["messages"]
    for secret in secrets:
        assert secret not in text_of(refused) and secret not in text_of(found)
        assert secret not in json.dumps(found.structured_content) and secret not in rows
        assert secret not in caplog.text


@pytest.fixture
def slots(open_store: OpenStore) -> Callable[[], Any]:
    """Token slots of one account on separate replicas over one state."""
    from mcp_tools.servers.google.tokens import TokenSlot

    def slot(label: str = "default", principal: str = "") -> TokenSlot:
        env = Environment(Path("/nonexistent"), Path("/nonexistent"), state_secret=SECRET, state_store=open_store())
        return TokenSlot(env, label, principal)

    return slot


def test_replicas_share_each_principals_tokens_sealed(open_store: OpenStore, slots: Callable[..., Any]) -> None:
    first, second = slots(), slots()
    assert first.write(TOKEN) == 1
    assert second.read() == TOKEN and second.version() == 1
    refreshed = {**TOKEN, "token": "ya29.refreshed"}
    assert second.write(refreshed) == 2  # a refresh on the other replica
    assert first.version() == 2 and first.read() == refreshed  # the first one sees it changed and loads it
    bob = slots("default", "https://idp.example|bob")
    with pytest.raises(LookupError):
        bob.read()  # another principal's account of the same label is not his
    bob.write({**TOKEN, "refresh_token": "1//bobs"})
    store = open_store()
    assert store.google_labels("") == ["default"] and store.google_labels("https://idp.example|bob") == ["default"]
    raw = store.google_token("", "default")
    assert raw is not None and "refresh-token-value" not in raw[0] and "ya29" not in raw[0]
    with pytest.raises(ValueError, match="do not open"):
        SealedTokens(store, credentials_key("another-secret-of-at-least-32-bytes!")).read("", "default")
    assert first.forget() and not second.forget()
    assert store.google_labels("") == [] and bob.read()["refresh_token"] == "1//bobs"


def test_a_refresh_on_one_replica_is_used_by_the_other_without_refreshing_again(
    open_store: OpenStore, slots: Callable[..., Any], google: FakeGoogle
) -> None:
    import datetime as dt

    from mcp_tools.servers.google import scopes
    from mcp_tools.servers.google.account import GoogleAccount
    from mcp_tools.servers.google.config import GoogleConfig

    client_id, _ = google.add_client()
    access, refresh = google.issue([scopes.GMAIL_READONLY], seconds=1)
    expired = (dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)).isoformat()
    config = GoogleConfig()  # the token names its OAuth client (an imported sign-in)
    data = {
        "token": access,
        "refresh_token": refresh,
        "token_uri": google.url + "token",
        "client_id": client_id,
        "client_secret": google.clients[client_id],
        "scopes": [scopes.GMAIL_READONLY],
        "expiry": expired,
    }
    first, second = slots(), slots()
    first.write(data)
    one = GoogleAccount(config, first, [scopes.GMAIL_READONLY])
    other = GoogleAccount(config, second, [scopes.GMAIL_READONLY])
    assert one.credentials().token != access
    assert other.credentials().token == one.credentials().token  # loaded from the store, not refreshed
    assert len([r for r in google.token_requests if r["grant_type"] == "refresh_token"]) == 1


def test_a_sign_in_state_is_taken_once_on_any_replica_and_not_after_it_expires(open_store: OpenStore) -> None:
    """ATTACK: the callback's state replayed on another replica, or used after it expired."""
    now = [1000.0]
    first, second = open_store(clock=lambda: now[0]), open_store(clock=lambda: now[0])
    first.begin_google_sign_in("a" * 64, "bob@https://idp.example", "default", "{}", 600)
    assert second.take_google_sign_in("a" * 64) == ("bob@https://idp.example", "default", "{}")
    assert first.take_google_sign_in("a" * 64) is None and second.take_google_sign_in("a" * 64) is None
    first.begin_google_sign_in("b" * 64, "bob@https://idp.example", "default", "{}", 600)
    now[0] += 601
    assert second.take_google_sign_in("b" * 64) is None  # expired: nothing to take
    for index in range(7):  # a principal keeps at most five waiting: the oldest go
        first.begin_google_sign_in(f"{index}" * 64, "eve@https://idp.example", "default", "{}", 600 + index)
    assert [second.take_google_sign_in(f"{index}" * 64) is not None for index in range(7)] == [False, False] + [
        True
    ] * 5


def test_a_principals_open_sign_ins_are_listed_for_it_alone_and_never_used_up(open_store: OpenStore) -> None:
    """What the approvals page shows a principal: its own live sign-ins, on any replica; listing takes none."""
    now = [1000.0]
    first, second = open_store(clock=lambda: now[0]), open_store(clock=lambda: now[0])
    first.begin_google_sign_in("a" * 64, "bob@https://idp.example", "default", '{"n": 1}', 600)
    first.begin_google_sign_in("b" * 64, "bob@https://idp.example", "work", '{"n": 2}', 900)
    first.begin_google_sign_in("c" * 64, "eve@https://idp.example", "default", '{"n": 3}', 600)
    listed = second.google_sign_ins_of("bob@https://idp.example")
    assert listed == [("work", '{"n": 2}', 1900.0), ("default", '{"n": 1}', 1600.0)]
    assert second.google_sign_ins_of("bob@https://idp.example") == listed  # nothing was used up
    assert second.google_sign_ins_of("") == [] and second.google_sign_ins_of("nobody") == []
    assert second.take_google_sign_in("a" * 64) is not None
    now[0] += 700  # `default`'s was used, then `work`'s alone is live
    assert [label for label, _, _ in first.google_sign_ins_of("bob@https://idp.example")] == ["work"]
    assert [label for label, _, _ in first.google_sign_ins_of("eve@https://idp.example")] == []
