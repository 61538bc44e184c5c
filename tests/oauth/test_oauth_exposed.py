"""`[http.oauth] embedded = true` on the open internet: what anonymous parties can make it keep.

Each attack runs through `serve --http` on 127.0.0.1 (callers on other loopback addresses stand
for other machines): a flood of registrations, registrations and authorization requests with
oversized fields, the consent page fooled by a long host, and `/authorize` as an open redirector.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx2
import pytest

from tests.approvals.browser import LAUNCH_ARGS, chromium_or_skip
from tests.oauth.test_oauth_embedded import (
    REDIRECT_URI,
    Server,
    authorize_url,
    code_for,
    documents_served,
    exchange,
    pkce,
    refresh,
    signs_in,
)
from tests.processes import cli_in_process, demo_config, free_port, http_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
# A host of 234 characters whose first 200 read as Claude's: the registrable domain is the end.
PADDED = "claude.ai.oauth-callback-" + "a" * 40 + "." + "b" * 60 + "." + "c" * 60 + ".attacker.example"


class Exposed(Server):
    def value(self, sql: str) -> Any:
        """The first column of the first row of a statement on the state store (None without rows)."""
        if self.state_url is None:
            path = self.config.parent / "state" / "policy.sqlite3"
            with contextlib.closing(sqlite3.connect(path, timeout=30)) as db:
                row = db.execute(sql).fetchone()
                db.commit()
            return row[0] if row else None
        import psycopg

        with psycopg.connect(self.state_url) as db:
            cursor = db.execute(sql)
            found = cursor.fetchone() if cursor.description else None
        return found[0] if found else None


def caller(n: int) -> httpx2.Client:
    """A client from 127.0.0.n: another address, as another machine would have."""
    return httpx2.Client(transport=httpx2.HTTPTransport(local_address=f"127.0.0.{n}"), timeout=60)


def metadata(**fields: Any) -> dict[str, Any]:
    return {
        "redirect_uris": [REDIRECT_URI],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "client_name": "exposed tests",
        **fields,
    }


def register(server: Server, n: int, **fields: Any) -> str:
    with caller(n) as http:
        answer = http.post(server.base + "/register", json=metadata(**fields))
    assert answer.status_code == 201, answer.text
    return str(answer.json()["client_id"])


def consent_location(server: Server, browser: httpx2.Client, url: str) -> str:
    asked = browser.get(url)
    assert asked.status_code == 302 and "/approvals/consent/" in asked.headers["location"], asked.text
    return urljoin(server.base, asked.headers["location"])


# Every request here comes from 127.0.0.1: the per-address admission of the public paths
# (tests/test_http_limits.py) is opened wide, so what is tested is the embedded server's own bounds.
ANY_ADDRESS = (
    "[http]\npublic_requests_per_minute = 100000\npublic_requests_per_address = 1000\n"
    "public_max_requests = 1000\npublic_max_body_bytes = 4194304\n"
)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Exposed]:
    """The defaults, but for the waiting consents in all (kept low so a test can fill them)."""
    tmp_path = tmp_path_factory.mktemp("exposed")
    port = free_port()
    state_url = request.getfixturevalue("postgres_server").create_database() if request.param != "sqlite" else None
    state = f'[state]\nurl = "{state_url}"\nsecret = "{secrets.token_hex(32)}"\n' if state_url else ""
    config = demo_config(
        tmp_path,
        ANY_ADDRESS
        + f'[http.oauth]\nembedded = true\nresource = "http://127.0.0.1:{port}/mcp"\nmax_pending_consents = 30\n'
        '[http.oauth.scopes]\n"mcp:read" = ["read_only"]\n"mcp:write" = ["*"]\n' + state,
    )
    with http_server(config, port=port) as base:
        yield Exposed(base, config, state_url)


# -- registrations ---------------------------------------------------------------------------------


async def test_a_flood_of_registrations_locks_no_client_out(server: Exposed) -> None:
    holder = register(server, 2)
    verifier, challenge = pkce()
    tokens = exchange(server, holder, code_for(server, holder, challenge), verifier).json()
    transport = httpx2.AsyncHTTPTransport(local_address="127.0.0.3")
    async with httpx2.AsyncClient(transport=transport, timeout=120) as flood:
        answers = await asyncio.gather(
            *(flood.post(server.base + "/register", json=metadata(client_name=f"flood {n}")) for n in range(200))
        )
    statuses = Counter(answer.status_code for answer in answers)
    assert statuses == {201: 20, 429: 180}, statuses  # one address registers 20 an hour
    assert all(int(a.headers["retry-after"]) > 0 for a in answers if a.status_code == 429)
    for n in range(4, 14):  # ten more addresses fill the table, and go on
        with caller(n) as http:
            for _ in range(20):
                assert http.post(server.base + "/register", json=metadata()).status_code == 201
    assert server.value("SELECT COUNT(*) FROM oauth_clients") == 200
    newcomer = register(server, 20, client_name="a newcomer")  # evicts the oldest unused
    assert server.value(f"SELECT COUNT(*) FROM oauth_clients WHERE client_id='{newcomer}'") == 1
    assert server.value("SELECT COUNT(*) FROM oauth_clients") == 200
    assert server.value(f"SELECT COUNT(*) FROM oauth_clients WHERE client_id='{holder}'") == 1  # it holds tokens
    assert signs_in(server, tokens["access_token"])
    assert refresh(server, holder, tokens["refresh_token"]).status_code == 200
    assert any(row["decision"] == "oauth_client_evicted" for row in server.audit())
    listed = server.browser().get(server.base + "/approvals/").text  # what the person would revoke
    assert holder in listed and "flood 1" not in listed and newcomer not in listed


def test_registration_metadata_is_bounded_field_by_field(server: Exposed) -> None:
    with caller(21) as http:
        huge = http.post(server.base + "/register", json=metadata(client_name="x" * (4 * 2**20 - 4096)))
        assert huge.status_code == 413 and huge.json()["error"] == "invalid_client_metadata"
        for field, value in (
            ("client_name", "x" * 101),
            ("client_name", "Claude\u202eelpmaxe.rekcatta"),  # a direction mark reverses what follows
            ("client_uri", "https://a.example/" + "a" * 2000),
            ("contacts", ["a@b.example"] * 6),
            ("software_id", "s" * 201),
            ("scope", "mcp:read " * 200),
            ("jwks", {"keys": [{"kty": "oct", "k": "a" * 5000}]}),
            ("redirect_uris", [f"http://127.0.0.1:{port}/cb" for port in range(1, 12)]),
        ):
            answer = http.post(server.base + "/register", json=metadata(**{field: value}))
            assert answer.status_code == 400, (field, answer.text)
            assert field in answer.json()["error_description"] or field == "scope", answer.text
        for uri in (
            "https://claude.ai@attacker.example/cb",  # user@host: the host is attacker.example
            "https://claude.ai/cb#fragment",
            "http://attacker.example/cb",  # plain http beyond this computer
            "javascript:alert(1)",
            "https://" + ".".join(["a" * 60] * 5) + ".example/cb",  # longer than DNS allows
        ):
            answer = http.post(server.base + "/register", json=metadata(redirect_uris=[uri]))
            assert answer.status_code == 400 and answer.json()["error"] == "invalid_redirect_uri", (uri, answer.text)
        kept = http.post(
            server.base + "/register", json=metadata(logo_uri="https://logo.example/l.png", junk="y" * 9000)
        )
        assert kept.status_code == 201
    assert server.value("SELECT MAX(LENGTH(info)) FROM oauth_clients") < 4096
    # unused: not kept (a run of 32: four y's turn up by chance in the sealed, base64 client record)
    assert b"logo.example" not in server.stored() and b"y" * 32 not in server.stored()


def test_a_registration_that_never_completed_a_consent_expires(server: Exposed) -> None:
    stale, consented = register(server, 22), register(server, 22)
    verifier, challenge = pkce()
    assert exchange(server, consented, code_for(server, consented, challenge), verifier).status_code == 200
    server.value(f"UPDATE oauth_clients SET created = created - 90000 WHERE client_id IN ('{stale}', '{consented}')")
    gone = httpx2.get(authorize_url(server, stale, challenge))
    assert gone.status_code == 400 and "unknown client_id" in gone.text and "location" not in gone.headers
    assert "/approvals/consent/" in httpx2.get(authorize_url(server, consented, challenge)).headers["location"]


# -- authorization requests ------------------------------------------------------------------------


def test_authorize_keeps_only_what_the_standards_allow(server: Exposed) -> None:
    client_id = register(server, 23)
    _, challenge = pkce()
    browser = httpx2.Client(timeout=60)
    form = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT_URI, "code_challenge": challenge}
    big = browser.post(server.base + "/authorize", data={**form, "state": "s" * 2**20})
    assert big.status_code == 400 and "location" not in big.headers
    long_id = browser.get(authorize_url(server, "https://a.example/" + "c" * 3000, challenge))
    assert long_id.status_code == 400 and "client_id is longer" in long_id.text
    for extra in (
        {"state": "s" * 1025},
        {"state": "line\nbreak"},
        {"code_challenge": "c" * 129},
        {"code_challenge": "c" * 42},
        {"code_challenge": "c" * 42 + "!"},
        {"scope": "mcp:read " * 200},
        {"resource": "https://a.example/" + "r" * 2000},
    ):
        answer = browser.get(authorize_url(server, client_id, challenge, **extra))
        assert answer.status_code == 400 and "location" not in answer.headers, extra
    first = consent_location(server, browser, authorize_url(server, client_id, challenge))
    for _ in range(39):
        consent_location(server, browser, authorize_url(server, client_id, challenge, state="s" * 1024))
    assert server.value(f"SELECT COUNT(*) FROM oauth_requests WHERE client_id='{client_id}'") == 10
    signed_in = server.browser()
    assert signed_in.get(first).status_code == 404  # the oldest waiting went first
    for _ in range(3):  # three more clients, ten each: 30 wait in all, the oldest gone
        other = register(server, 23)
        for _ in range(10):
            consent_location(server, browser, authorize_url(server, other, challenge))
    assert server.value("SELECT COUNT(*) FROM oauth_requests") == 30
    assert server.value("SELECT MAX(LENGTH(data)) FROM oauth_requests") < 2048
    server.value("UPDATE oauth_requests SET expires = expires - 700")
    last = consent_location(server, browser, authorize_url(server, client_id, challenge))
    assert server.value("SELECT COUNT(*) FROM oauth_requests") == 1  # the expired ones went
    assert signed_in.get(last).status_code == 200


def test_authorize_never_redirects_an_error_to_a_client_nobody_consented_to(server: Exposed) -> None:
    phish = "https://login.attacker.example/cb"
    stranger = register(server, 24, redirect_uris=[phish])
    _, challenge = pkce()
    for extra in (
        {"scope": "bogus"},
        {"response_type": "token"},
        {"code_challenge_method": "plain"},
        {"resource": "https://other.example/mcp"},
        {"code_challenge": ""},
    ):
        answer = httpx2.get(authorize_url(server, stranger, challenge, redirect_uri=phish, **extra))
        assert answer.status_code == 400 and "location" not in answer.headers, (extra, answer.headers)
        assert "This sign-in request was refused" in answer.text
    assert any("/authorize: " in r and "bogus" in r for r in server.refusals())
    known = register(server, 24)
    code_for(server, known, challenge)  # the person let it in once
    answer = httpx2.get(authorize_url(server, known, challenge, scope="bogus"))
    assert answer.status_code == 302 and answer.headers["location"].startswith(REDIRECT_URI)
    assert "error=invalid_scope" in answer.headers["location"]  # its own redirect URI hears of the error


# -- the consent page ----------------------------------------------------------------------------


def consent_page(server: Exposed, name: str, redirect: str, n: int) -> str:
    client_id = register(server, n, client_name=name, redirect_uris=[redirect])
    _, challenge = pkce()
    browser = server.browser()
    page = browser.get(
        consent_location(server, browser, authorize_url(server, client_id, challenge, redirect_uri=redirect))
    )
    assert page.status_code == 200
    return page.text


def text_of(page: str) -> str:
    inline = re.sub(r"</?(span|strong|code)[^>]*>", "", page)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", inline))


def test_the_consent_page_shows_where_the_answers_go_first_and_whole(server: Exposed) -> None:
    page = consent_page(server, "Claude", f"https://{PADDED}/cb", 25)
    assert re.search(r'<h2>Allow a client whose answers go to <span class="site">attacker\.example</span>\?</h2>', page)
    assert page.index("attacker.example") < page.index("Claude")  # the domain first, the name after
    assert f"https://{PADDED}" in page  # the whole host, never cut
    assert "It calls itself “Claude”, which does not match attacker.example" in text_of(page)
    honest = text_of(consent_page(server, "Claude", "https://claude.ai/api/mcp/auth_callback", 25))
    assert "answers go to claude.ai?" in honest and "which matches claude.ai" in honest
    homograph = text_of(consent_page(server, "Claude", "https://clаude.ai/cb", 26))  # a Cyrillic а
    assert "answers go to xn--clude-5ve.ai?" in homograph and "internationalized name" in homograph
    assert "does not match" in homograph
    address = text_of(consent_page(server, "Claude", "https://203.0.113.7/cb", 26))
    assert "answers go to 203.0.113.7?" in address and "an IP address, not a domain name" in address
    suffix = text_of(consent_page(server, "Claude", "https://claude.github.io/cb", 27))
    assert "answers go to claude.github.io?" in suffix  # github.io is a suffix anyone registers under
    local = text_of(consent_page(server, "Claude Code", "http://localhost:33418/callback", 27))
    assert "answers go to this computer?" in local and "nothing here can check that name" in local
    app = text_of(consent_page(server, "Claude", "claude.ai://callback", 27))  # a scheme that reads as a domain
    assert "answers go to an application on this device?" in app and "claims the claude.ai: scheme" in app


async def test_the_consent_page_in_a_browser_shows_the_whole_host(server: Exposed) -> None:
    if server.state_url is not None:
        pytest.skip("the page is the same whichever state store keeps the request")
    from playwright.async_api import async_playwright, expect

    executable = chromium_or_skip()
    client_id = register(server, 28, client_name="Claude", redirect_uris=[f"https://{PADDED}/cb"])
    _, challenge = pkce()
    with httpx2.Client() as anonymous:
        consent = consent_location(
            server, anonymous, authorize_url(server, client_id, challenge, redirect_uri=f"https://{PADDED}/cb")
        )
    link = cli_in_process(server.config, "approvals", "login", "--http").stdout.strip()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=executable, args=LAUNCH_ARGS)
        try:
            page = await browser.new_page(viewport={"width": 390, "height": 800})  # a phone
            await page.goto(link)
            await page.wait_for_url("**/approvals/")  # signed in
            await page.goto(consent)
            heading = page.locator("main.consent h2")
            await expect(heading).to_have_text("Allow a client whose answers go to attacker.example?")
            assert await page.locator("li.this code.address").inner_text() == f"https://{PADDED}"
            mismatch = page.locator("p.mismatch")
            await expect(mismatch).to_be_visible()
            await expect(mismatch).to_contain_text("It calls itself “Claude”, which does not match attacker.example")
            assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            box = await page.locator("li.this code.address").bounding_box()
            assert box is not None and box["x"] + box["width"] <= 390  # wrapped, not cut off the screen
        finally:
            await browser.close()


# -- Client ID Metadata Documents when the table is full --------------------------------------------


def test_metadata_documents_sign_in_when_the_table_is_full(tmp_path: Path) -> None:
    documents: dict[str, dict[str, Any]] = {}
    with documents_served(tmp_path, documents) as (origin, ca):
        client_url = origin + "/client.json"
        documents["/client.json"] = {
            "client_id": client_url,
            "client_name": "A document",
            "redirect_uris": [REDIRECT_URI],
        }
        documents["/long.json"] = {
            "client_id": origin + "/long.json",
            "client_name": "x" * 101,
            "redirect_uris": [REDIRECT_URI],
        }
        port = free_port()
        config = demo_config(
            tmp_path,
            ANY_ADDRESS + f'[http.oauth]\nembedded = true\nresource = "http://127.0.0.1:{port}/mcp"\nmax_clients = 1\n',
        )
        with http_server(config, port=port, SSL_CERT_FILE=str(ca)) as base:
            server = Exposed(base, config)
            holder = register(server, 2)
            verifier, challenge = pkce()
            assert exchange(server, holder, code_for(server, holder, challenge), verifier).status_code == 200
            with caller(3) as http:
                full = http.post(base + "/register", json=metadata())
            assert full.status_code == 400 and "hold tokens" in full.json()["error_description"]
            code = code_for(server, client_url, challenge)
            assert exchange(server, client_url, code, verifier).status_code == 200
            refused = httpx2.get(authorize_url(server, origin + "/long.json", challenge))
            assert refused.status_code == 400 and "location" not in refused.headers
            assert any("client_name" in r for r in server.refusals())
