"""A principal of `[http.oauth]` connects its own Google account from a hosted client: the error of
its first Google call carries a sign-in link (Google's consent with PKCE and a single-use state),
and Google's answer comes back to the server's own `/google/callback`. Through the real server over
HTTP, with principals of a real OpenID provider and the fake Google's consent and token endpoints
(which verify PKCE as Google does)."""

from __future__ import annotations

import html
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import mcp_types as types
import pytest

from tests.approvals.helpers import http_client
from tests.harness import failure, ok
from tests.oauth.test_oauth import Provider, client_with, new_key, running_provider
from tests.processes import free_port, http_server
from tests.servers.fake_google import FakeGmail, FakeGoogle
from tests.servers.gmail.fixtures import plain
from tests.servers.google.test_google_principals import config_for
from tests.servers.google_accounts_fixtures import stored_accounts

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
SCOPE = "https://www.googleapis.com/auth/"
ROBOT_MAIL, OTHER_MAIL = "robot@partner.example", "other@partner.example"


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with running_provider(new_key("k-connect")) as running:
        yield running


def stored_address(tmp_path: Path, principal: str) -> Any:
    """The address stored with `principal`'s `default` account."""
    from mcp_tools.state.google_tokens import SealedTokens
    from mcp_tools.state.sqlite import PolicyStore

    store = PolicyStore(tmp_path / "state" / "policy.sqlite3")
    try:
        found = SealedTokens(store, None).read(principal, "default")
    finally:
        store.close()
    assert found is not None
    return found[0].get("account")


def consent(google: FakeGoogle, link: str, account: str) -> str:
    """The person agrees at Google's consent screen as `account`: where Google sends the browser."""
    google.signed_in_as = account
    answer = httpx2.get(link, follow_redirects=False)
    assert answer.status_code == 302, answer.text
    return str(answer.headers["location"])


async def test_two_principals_each_connect_their_own_account_and_the_callback_refuses_attacks(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, provider: Provider
) -> None:
    FakeGmail(google.add_account(ROBOT_MAIL)).add(plain(subject="Robot's mail", to=ROBOT_MAIL))
    FakeGmail(google.add_account(OTHER_MAIL)).add(plain(subject="Other's mail", to=OTHER_MAIL))
    gmail.add(plain(subject="The person's own"))
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    robot, other = f"robot@{provider.issuer}", f"other-robot@{provider.issuer}"
    with http_server(config_for(tmp_path, google, provider, resource), port=port) as base:
        async with (
            client_with(base, provider.token(resource)) as robot_client,
            client_with(base, provider.token(resource, client="other-robot")) as other_client,
        ):
            asked = failure(await robot_client.call_tool("gmail_search", {}))
            assert asked["kind"] == "not_configured" and "sign_in_url" in asked["hint"]
            link = asked["sign_in_url"]
            query = parse_qs(urlsplit(link).query)
            assert query["code_challenge_method"] == ["S256"] and len(query["state"][0]) >= 40
            assert query["redirect_uri"] == [f"http://127.0.0.1:{port}/google/callback"]
            assert "The person's own" not in str(asked)

            # ATTACK: another principal plants its own Google sign-in on robot's state: the code
            # Google gave the other sign-in does not exchange with robot's PKCE verifier.
            theirs = failure(await other_client.call_tool("gmail_search", {}))["sign_in_url"]
            planted = parse_qs(urlsplit(consent(google, theirs, OTHER_MAIL)).query)["code"][0]
            robot_state = query["state"][0]
            refused = httpx2.get(f"{base}/google/callback", params={"state": robot_state, "code": planted})
            assert refused.status_code == 400 and "Not connected" in refused.text
            assert google.violations == ["token: PKCE code_verifier does not match the challenge"]
            google.violations.clear()  # the refusal the attack drew, as Google would answer it
            assert stored_accounts(tmp_path, robot) == [] and stored_accounts(tmp_path, other) == []

            # robot asks again and connects its own account
            link = failure(await robot_client.call_tool("gmail_search", {}))["sign_in_url"]
            back = consent(google, link, ROBOT_MAIL)
            page = httpx2.get(back)  # no bearer token: the state is what counts
            assert page.status_code == 200 and "Connected" in page.text
            replayed = httpx2.get(back)  # ATTACK: the same answer again
            assert replayed.status_code == 400 and "already used" in replayed.text
            forged = httpx2.get(f"{base}/google/callback", params={"state": "forged-" + "x" * 40, "code": "4/x"})
            assert forged.status_code == 400 and "unknown" in forged.text
            found = ok(await robot_client.call_tool("gmail_search", {}))
            assert [m["subject"] for m in found["messages"]] == ["Robot's mail"]
            # the callback learnt the address: robot names its account by it, and errors name it
            by_address = ok(await robot_client.call_tool("gmail_search", {"account": ROBOT_MAIL.upper()}))
            assert [m["subject"] for m in by_address["messages"]] == ["Robot's mail"]
            unknown = failure(await robot_client.call_tool("gmail_search", {"account": "nosuch"}))
            assert unknown["kind"] == "not_found" and f"yours: default ({ROBOT_MAIL})" in unknown["message"]

            # the other principal connects its own; neither reaches the other's
            link = failure(await other_client.call_tool("gmail_search", {}))["sign_in_url"]
            assert httpx2.get(consent(google, link, OTHER_MAIL)).status_code == 200
            mine = ok(await other_client.call_tool("gmail_search", {}))
            assert [m["subject"] for m in mine["messages"]] == ["Other's mail"]
            again = ok(await robot_client.call_tool("gmail_search", {}))
            assert [m["subject"] for m in again["messages"]] == ["Robot's mail"]
            assert failure(await robot_client.call_tool("gmail_search", {"account": OTHER_MAIL}))["kind"] == "not_found"
            # ATTACK: the other principal names robot's address, now known to the server
            theirs_named = failure(await other_client.call_tool("gmail_search", {"account": ROBOT_MAIL}))
            assert theirs_named["kind"] == "not_found" and ROBOT_MAIL not in theirs_named["message"].split("; ")[1]
            assert f"yours: default ({OTHER_MAIL})" in theirs_named["message"]
    assert stored_accounts(tmp_path, robot) == ["default"] and stored_accounts(tmp_path, other) == ["default"]
    assert stored_accounts(tmp_path) == ["default"]  # the person's own, untouched
    assert stored_address(tmp_path, robot) == ROBOT_MAIL and stored_address(tmp_path, other) == OTHER_MAIL
    profiles = [account for account, method in google.requests if method == "gmail.users.getProfile"]
    assert profiles == [ROBOT_MAIL, OTHER_MAIL]  # asked once per sign-in, with the account's own token
    for text in (page.text, replayed.text, forged.text, refused.text):
        assert "ya29." not in text and "1//" not in text and robot not in text


class Browser:
    """The client's URL-mode callback: the person follows the link to Google's consent and back."""

    def __init__(self, google: FakeGoogle, account: str, action: str = "accept") -> None:
        self.google, self.account, self.action = google, account, action
        self.asked: list[types.ElicitRequestURLParams] = []
        self.completed: list[str] = []
        self.pages: list[httpx2.Response] = []

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams), "a URL-mode request, never a form"
        self.asked.append(params)
        if self.action == "accept":
            back = await anyio.to_thread.run_sync(consent, self.google, params.url, self.account)
            self.pages.append(await anyio.to_thread.run_sync(httpx2.get, back))
        return types.ElicitResult(action=self.action)  # type: ignore[arg-type]

    async def notified(self, message: Any) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            self.completed.append(message.params.elicitation_id)


async def test_a_url_mode_client_connects_by_url_elicitation_and_the_link_never_reaches_the_model(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, provider: Provider
) -> None:
    FakeGmail(google.add_account(ROBOT_MAIL)).add(plain(subject="Robot's mail", to=ROBOT_MAIL))
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    robot = Browser(google, ROBOT_MAIL)
    other = Browser(google, OTHER_MAIL, action="decline")
    with http_server(config_for(tmp_path, google, provider, resource), port=port) as base:
        async with http_client(
            base + "/mcp", provider.token(resource), elicitation_callback=robot.elicit, message_handler=robot.notified
        ) as client:
            found = await client.call_tool("gmail_search", {})
        async with http_client(
            base + "/mcp",
            provider.token(resource, client="other-robot"),
            elicitation_callback=other.elicit,
            message_handler=other.notified,
        ) as client:
            declined = await client.call_tool("gmail_search", {})
    assert [m["subject"] for m in ok(found)["messages"]] == ["Robot's mail"]  # the call ran once connected
    [asked] = robot.asked
    assert asked.url.startswith(google.url + "o/oauth2/auth?") and "code_challenge_method=S256" in asked.url
    assert robot.pages[0].status_code == 200 and robot.completed == [asked.elicitation_id]
    error = failure(declined)
    assert error["kind"] == "not_configured" and "sign_in_url" not in error and other.completed == []
    assert "oauth2/auth" not in str(declined.content) and "state=" not in str(declined.content)
    assert stored_accounts(tmp_path, f"other-robot@{provider.issuer}") == []


def test_the_address_is_asked_only_where_the_scopes_let_gmail_tell_it(google: FakeGoogle, gmail: FakeGmail) -> None:
    from mcp_tools.servers.google.config import GoogleConfig
    from mcp_tools.servers.google.connect import address

    config = GoogleConfig(api_endpoint=google.url)
    send, readonly = SCOPE + "gmail.send", SCOPE + "gmail.readonly"
    assert address(config, google.issue([send])[0], [send]) is None  # users.getProfile would be refused
    assert not google.requests
    assert address(config, google.issue([readonly])[0], [readonly]) == "me@example.com"
    assert google.requests == [("me@example.com", "gmail.users.getProfile")]
    google.fail("gmail.users.getProfile", 500, times=1)
    assert address(config, google.issue([readonly])[0], [readonly]) is None  # the sign-in goes on without it


def page_session(base: str, tmp_path: Path, principal: str | None) -> httpx2.Client:
    """A browser signed in to the approvals page, for `principal` (None: the person who runs the server)."""
    from mcp_tools.approvals.page import new_login_link
    from mcp_tools.state.sqlite import PolicyStore

    store = PolicyStore(tmp_path / "state" / "policy.sqlite3")
    try:
        link = new_login_link(store, f"{base}/approvals", 600, principal)
    finally:
        store.close()
    browser = httpx2.Client()
    assert browser.get(link).status_code == 200
    return browser


async def test_the_approvals_page_shows_a_principals_sign_in_link_to_that_principal_alone(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, provider: Provider
) -> None:
    FakeGmail(google.add_account(ROBOT_MAIL)).add(plain(subject="Robot's mail", to=ROBOT_MAIL))
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    robot, other = f"robot@{provider.issuer}", f"other-robot@{provider.issuer}"
    config = config_for(tmp_path, google, provider, resource)
    config.write_text(config.read_text() + "\n[approvals.page]\nenabled = true\n")
    with http_server(config, port=port) as base:
        async with client_with(base, provider.token(resource)) as robot_client:
            link = failure(await robot_client.call_tool("gmail_search", {}))["sign_in_url"]
            state = parse_qs(urlsplit(link).query)["state"][0]
            with (
                closing(page_session(base, tmp_path, robot)) as mine,
                closing(page_session(base, tmp_path, other)) as theirs,
                closing(page_session(base, tmp_path, None)) as owners,
            ):
                shown = mine.get(f"{base}/approvals/")
                assert shown.status_code == 200 and "Connect your Google account" in shown.text
                assert html.escape(link) in shown.text  # the very link the error carried
                refreshed = mine.get(f"{base}/approvals/fragment")
                assert html.escape(link) in refreshed.text
                # ATTACK: another principal's page session (and the owner's, which sees every
                # approval) would connect its own Google account to robot by following the link
                for page in (theirs.get(f"{base}/approvals/"), owners.get(f"{base}/approvals/")):
                    assert page.status_code == 200 and "Waiting for you" in page.text
                    assert state not in page.text and "Connect your Google account" not in page.text
                    assert "oauth2/auth" not in page.text
                assert state not in theirs.get(f"{base}/approvals/fragment").text

                # the link still works once: following it from the page connects robot's account
                assert httpx2.get(consent(google, link, ROBOT_MAIL)).status_code == 200
                gone = mine.get(f"{base}/approvals/")
                assert gone.status_code == 200 and state not in gone.text
                assert "Connect your Google account" not in gone.text
            found = ok(await robot_client.call_tool("gmail_search", {}))
            assert [m["subject"] for m in found["messages"]] == ["Robot's mail"]
    assert stored_accounts(tmp_path, robot) == ["default"] and stored_accounts(tmp_path, other) == []
