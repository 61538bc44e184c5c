"""Google accounts belong to principals under `[http.oauth]` with an outside issuer: through the
real server over HTTP, each principal (a client of a real OpenID provider) reaches only the accounts
it connected and those the person shares with it by name; the person's static token keeps the
person's own. Another principal's account is `not_found`, told apart from no account at all by nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import failure, ok
from tests.oauth.test_oauth import CI_TOKEN, Provider, client_with, new_key, running_provider
from tests.processes import demo_config, free_port, http_server
from tests.servers.fake_google import FakeGmail, FakeGoogle
from tests.servers.gmail.fixtures import plain, sign_in
from tests.servers.google_accounts_fixtures import WORK, put_token, store_token

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
ROBOT_MAIL = "robot@partner.example"


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with running_provider(new_key("k-principals")) as running:
        yield running


def config_for(tmp_path: Path, google: FakeGoogle, provider: Provider, resource: str, extra: str = "") -> Path:
    settings = sign_in(tmp_path, google)  # the person's own `default`, a token file moved in at start
    return demo_config(
        tmp_path,
        f'[google]\nclient_secrets = "{settings["google"]["client_secrets"]}"\napi_endpoint = "{google.url}"\n'
        f"[gmail]\n{extra}"
        f'[http.tokens]\nci = "{CI_TOKEN}"\n'
        f'[http.oauth]\nissuer = "{provider.issuer}"\nresource = "{resource}"\n'
        '[http.oauth.scopes]\n"mcp:read" = ["read_only"]\n"mcp:write" = ["*"]\n',
        servers='["gmail"]',
    )


def connect_robot(tmp_path: Path, robot: FakeGoogle, principal: str) -> dict[str, Any]:
    """What connecting an account leaves in the state store: a token held by `principal`."""
    data = store_token(tmp_path, robot, "ignored")
    (tmp_path / "state" / "google" / "accounts" / "ignored.json").unlink()
    put_token(tmp_path, data, "default", principal)
    return data


async def test_each_principal_reaches_its_own_accounts_and_never_another(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, provider: Provider
) -> None:
    work, robot = google.add_account(WORK), google.add_account(ROBOT_MAIL)
    gmail.add(plain(subject="The person's own"))
    FakeGmail(work).add(plain(subject="Work, shared with other-robot", to=WORK))
    FakeGmail(robot).add(plain(subject="Robot's own", to=ROBOT_MAIL))
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    other = f"other-robot@{provider.issuer}"
    config = config_for(
        tmp_path,
        google,
        provider,
        resource,
        f'[google.accounts.work]\nshared_with = ["{other}"]\n',
    )
    store_token(tmp_path, work, "work")
    own = connect_robot(tmp_path, robot, f"robot@{provider.issuer}")
    with http_server(config, port=port) as base:
        async with client_with(base, CI_TOKEN) as person:  # the person's static token: the person's accounts
            mine = ok(await person.call_tool("gmail_search", {}))
            assert [m["subject"] for m in mine["messages"]] == ["The person's own"]
            assert ok(await person.call_tool("gmail_search", {"account": "work"}))["messages"]
        async with client_with(base, provider.token(resource)) as robot_client:
            found = ok(await robot_client.call_tool("gmail_search", {}))
            assert [m["subject"] for m in found["messages"]] == ["Robot's own"]
            hidden = failure(await robot_client.call_tool("gmail_search", {"account": "work"}))
            nobody = failure(await robot_client.call_tool("gmail_search", {"account": "nosuch"}))
            by_address = failure(await robot_client.call_tool("gmail_search", {"account": "me@example.com"}))
        async with client_with(base, provider.token(resource, client="other-robot")) as other_client:
            shared = ok(await other_client.call_tool("gmail_search", {"account": "work"}))
            assert [m["subject"] for m in shared["messages"]] == ["Work, shared with other-robot"]
            alone = ok(await other_client.call_tool("gmail_search", {}))  # its only account: the shared one
            assert alone["messages"][0]["subject"] == "Work, shared with other-robot"
            robots = failure(await other_client.call_tool("gmail_search", {"account": "default"}))
            robots_address = failure(await other_client.call_tool("gmail_search", {"account": ROBOT_MAIL}))
    assert hidden["kind"] == nobody["kind"] == by_address["kind"] == "not_found"
    assert hidden["message"].replace("'work'", "'nosuch'") == nobody["message"]  # the same words: nothing told
    assert by_address["message"] == nobody["message"].replace("'nosuch'", "'me@example.com'")
    assert WORK not in str(hidden) and "hint" not in hidden
    assert robots["kind"] == robots_address["kind"] == "not_found"
    assert robots["message"].replace("'default'", "'nosuch'") == robots_address["message"].replace(
        repr(ROBOT_MAIL), "'nosuch'"
    )
    lists = [account for account, method in google.requests if method == "gmail.users.messages.list"]
    assert lists.count(ROBOT_MAIL) == 1 and lists.count("me@example.com") == 1  # each mailbox by its own caller
    assert own["refresh_token"] not in str(found)


async def test_a_principal_without_an_account_never_gets_the_persons(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, provider: Provider
) -> None:
    """ATTACK: a principal with no account of its own calls a Google tool on a server whose owner is signed in."""
    gmail.add(plain(subject="Private to the person"))
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    config = config_for(tmp_path, google, provider, resource)
    with http_server(config, port=port) as base:
        async with client_with(base, provider.token(resource)) as robot_client:
            refused = await robot_client.call_tool("gmail_search", {})
            named = failure(await robot_client.call_tool("gmail_search", {"account": "default"}))
    error = failure(refused)
    assert error["kind"] == "not_configured" and "Private to the person" not in str(refused.content)
    assert named["kind"] == "not_configured" and named["message"] == error["message"]  # connect one first
    assert not [request for request in google.requests if request[1] == "gmail.users.messages.list"]
