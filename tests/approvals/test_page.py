"""The approvals page's guards, request by request (Starlette's test client, no browser)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from mcp_tools.approvals.page import ApprovalsPage, new_login_link
from mcp_tools.cli.approvals import page_server
from mcp_tools.core.config import ApprovalPageSettings
from mcp_tools.policy.decisions import Decisions
from mcp_tools.policy.redact import redact
from mcp_tools.state.sqlite import PolicyStore
from mcp_tools.transports.http import page_security

BASE = "http://127.0.0.1:8766"
HOSTILE = "<script>alert('x')</script>"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[PolicyStore]:
    store = PolicyStore(tmp_path / "policy.sqlite3")
    yield store
    store.close()


def page_client(store: PolicyStore, **settings: object) -> TestClient:
    page_settings = ApprovalPageSettings.model_validate(settings)
    page = ApprovalsPage(store, Decisions(store, 600), page_settings, page_security("127.0.0.1", []))
    return TestClient(page_server(page), base_url=BASE)


def signed_in(store: PolicyStore, principal: str | None = None, **settings: object) -> tuple[TestClient, str]:
    client = page_client(store, **settings)
    link = new_login_link(store, f"{BASE}/approvals", 600, principal)
    assert client.get(link.removeprefix(BASE)).status_code == 200
    csrf = client.get("/approvals/").text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    return client, csrf


def hostile_approval(store: PolicyStore):
    arguments = redact({"path": f"{HOSTILE}.md", "api_token": "sk-live-secret"})
    return store.request_approval(
        tool="files.delete",
        args_sha256="d" * 64,
        args_display=arguments,
        summary=f"Delete file {HOSTILE}",
        risk="high",
        principal="laptop",
        ttl_seconds=600,
    )


def test_what_the_page_shows_is_escaped_and_never_a_secret(store: PolicyStore) -> None:
    approval = hostile_approval(store)
    store.note_origin(approval.id, "http")
    client, _ = signed_in(store)
    for path in ("/approvals/", f"/approvals/a/{approval.id}", "/approvals/fragment"):
        body = client.get(path).text
        assert HOSTILE not in body and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in body
        assert "sk-live-secret" not in body and "[redacted]" in body
        assert "<dt>Asked</dt><dd>by token laptop over HTTP," in body and "Tool: files.delete (high risk)" in body


def test_every_response_carries_the_security_headers(store: PolicyStore) -> None:
    client = page_client(store)
    for response in (client.get("/approvals/"), client.get("/approvals/static/page.js"), client.get("/approvals/x")):
        headers = response.headers
        assert headers["content-security-policy"].startswith("default-src 'none'; script-src 'self'")
        assert headers["x-frame-options"] == "DENY" and headers["cache-control"] == "no-store"
        assert headers["referrer-policy"] == "no-referrer" and headers["x-content-type-options"] == "nosniff"


def test_without_a_session_nothing_is_shown_or_done(store: PolicyStore) -> None:
    approval = hostile_approval(store)
    client = page_client(store)
    assert client.get("/approvals/").status_code == 401
    assert client.get(f"/approvals/a/{approval.id}").status_code == 401
    assert client.get("/approvals/fragment").status_code == 401
    forged = client.post(f"/approvals/a/{approval.id}/approve", data={"csrf": "x"}, headers={"Origin": BASE})
    assert forged.status_code == 401
    assert store.get_approval(approval.id).status == "pending"  # type: ignore[union-attr]


def test_state_changes_need_the_csrf_token_and_the_pages_own_origin(store: PolicyStore) -> None:
    approval = hostile_approval(store)
    client, csrf = signed_in(store)
    url = f"/approvals/a/{approval.id}/approve"
    assert client.post(url, headers={"Origin": BASE}).status_code == 403
    wrong = csrf[:-1] + ("B" if csrf.endswith("A") else "A")  # one character off, never the token itself
    assert client.post(url, data={"csrf": wrong}, headers={"Origin": BASE}).status_code == 403
    assert client.post(url, data={"csrf": csrf}, headers={"Origin": "http://127.0.0.1:9999"}).status_code == 403
    assert client.post(url, data={"csrf": csrf}, headers={"Origin": "null"}).status_code == 403
    assert client.post(url, data={"csrf": csrf}).status_code == 403  # no Origin at all
    assert client.post("/approvals/logout", headers={"Origin": BASE}).status_code == 403
    assert store.get_approval(approval.id).status == "pending"  # type: ignore[union-attr]
    done = client.post(url, data={"csrf": csrf}, headers={"Origin": BASE}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == f"/approvals/a/{approval.id}"
    assert store.get_approval(approval.id).status == "approved"  # type: ignore[union-attr]
    again = client.post(url, data={"csrf": csrf}, headers={"Origin": BASE, "Accept": "application/json"})
    assert again.status_code == 409 and "approved" in again.json()["error"]
    assert store.approval_meta([approval.id])[approval.id]["decided_by"] == "page"


def test_a_csrf_token_belongs_to_its_session(store: PolicyStore) -> None:
    approval = hostile_approval(store)
    _, mine = signed_in(store)
    other, _ = signed_in(store)
    response = other.post(f"/approvals/a/{approval.id}/deny", data={"csrf": mine}, headers={"Origin": BASE})
    assert response.status_code == 403


def test_signing_out_ends_the_session(store: PolicyStore) -> None:
    client, csrf = signed_in(store)
    out = client.post("/approvals/logout", data={"csrf": csrf}, headers={"Origin": BASE}, follow_redirects=False)
    assert out.status_code == 303 and "Max-Age=0" in out.headers["set-cookie"]
    assert client.get("/approvals/").status_code == 401


def test_foreign_hosts_are_refused(store: PolicyStore) -> None:
    client = page_client(store)
    assert client.get("/approvals/", headers={"Host": "rebound.example"}).status_code == 421


def test_the_cookie_is_secure_when_the_page_is_public_over_https(store: PolicyStore) -> None:
    client = page_client(store, url="https://assistant.example.org/approvals")
    link = new_login_link(store, f"{BASE}/approvals", 600)
    cookie = client.get(link.removeprefix(BASE)).headers["set-cookie"]
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie


def test_expired_sign_in_links_do_not_work(store: PolicyStore) -> None:
    client = page_client(store)
    link = new_login_link(store, f"{BASE}/approvals", -1)
    assert client.get(link.removeprefix(BASE)).status_code == 403


def test_the_fragment_long_polls_until_what_it_shows_changes(
    store: PolicyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mcp_tools.approvals.page.LONG_POLL_SECONDS", 1.0)
    client, _ = signed_in(store)
    first = client.get("/approvals/fragment")
    version = first.headers["x-version"]
    started = time.monotonic()
    unchanged = client.get(f"/approvals/fragment?since={version}")
    assert unchanged.headers["x-version"] == version and 0.9 <= time.monotonic() - started < 5

    monkeypatch.setattr("mcp_tools.approvals.page.LONG_POLL_SECONDS", 30.0)
    other_process = PolicyStore(store.path)

    def ask_later() -> None:
        time.sleep(0.3)
        hostile_approval(other_process)

    thread = threading.Thread(target=ask_later)
    started = time.monotonic()
    thread.start()
    changed = client.get(f"/approvals/fragment?since={version}")
    thread.join()
    assert changed.headers["x-version"] != version and "Waiting for you (1)" in changed.text
    assert time.monotonic() - started < 5  # not the 30 s the poll may last


def many_approvals(store: PolicyStore, count: int) -> list[str]:
    ids = []
    for n in range(count):
        approval = store.request_approval(
            tool="demo.erase",
            args_sha256=f"{n:064x}",
            args_display={"target": f"t-{n:03}"},
            summary=f"Erase 't-{n:03}'",
            risk="high",
            principal="ci-agent",
            ttl_seconds=600,
        )
        store.note_origin(approval.id, "http")
        ids.append(approval.id)
    return ids


def card_ids(body: str) -> list[str]:
    return [part.split('"', 1)[0] for part in body.split('<article class="approval status-pending" id="')[1:]]


def test_every_pending_approval_is_shown_in_pages_with_the_true_count(store: PolicyStore) -> None:
    ids = many_approvals(store, 115)
    client, _ = signed_in(store)
    first = client.get("/approvals/").text
    assert "Waiting for you (115)" in first and "Showing 1–20 of 115 (page 1 of 6)" in first
    assert 'href="/approvals/?page=2" rel="next">Older' in first
    seen: list[str] = []
    for page in range(1, 7):
        body = client.get(f"/approvals/?page={page}").text
        fragment = client.get(f"/approvals/fragment?page={page}").text
        assert card_ids(body) == card_ids(fragment)  # the live list stays on the same page
        assert f'data-fragment="/approvals/fragment?page={page}"' in body or page == 1
        seen += card_ids(body)
    assert len(seen) == 115 and set(seen) == set(ids)  # each once, none left out
    last = client.get("/approvals/?page=6").text
    assert len(card_ids(last)) == 15 and "Showing 101–115 of 115" in last and 'rel="next"' not in last
    assert card_ids(client.get("/approvals/?page=99").text) == card_ids(last)  # past the end: the last page
    assert card_ids(client.get("/approvals/?page=x").text) == card_ids(first)


def test_a_card_shows_its_summary_once_who_asked_in_words_and_times_for_the_script(store: PolicyStore) -> None:
    [approval_id] = many_approvals(store, 1)
    client, _ = signed_in(store)
    body = client.get("/approvals/").text
    assert body.count("Erase &#x27;t-000&#x27;") == 1  # the heading; the confirmation below holds the rest
    assert "<dt>Asked</dt><dd>by token ci-agent over HTTP, <time" in body
    assert "local over" not in body and "ci-agent over http<" not in body
    approval = store.get_approval(approval_id)
    assert approval is not None
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(approval.created))
    assert f'<time datetime="{created}" title="' in body and "Time (UTC)" not in body


def test_recent_decisions_say_which_channel_gave_the_yes(store: PolicyStore) -> None:
    from mcp_tools.state.store import AuditRow

    store.record(
        AuditRow(1.0, "stdio", "local", "files.delete", {}, "high", "confirmed", None, 1, "ok", "elicitation:stdio")
    )
    store.record(
        AuditRow(2.0, "http", "ci", "files.move", {}, "high", "approved_out_of_band", "apr-x", 1, "ok", "telegram:@ada")
    )
    client, _ = signed_in(store)
    rows = client.get("/approvals/").text.split("<tbody>", 1)[1]
    assert "<td>files.delete</td><td>confirmed</td><td>elicitation:stdio</td>" in rows
    assert "<td>files.move</td><td>approved out of band</td><td>telegram:@ada</td>" in rows


ALICE = "alice@https://login.example.org"
BOB = "bob@https://login.example.org"


def approval_of(store: PolicyStore, principal: str, path: str):
    return store.request_approval(
        tool="files.delete",
        args_sha256=path.encode().hex().ljust(64, "0")[:64],
        args_display={"path": path},
        summary=f"Delete file {path}",
        risk="high",
        principal=principal,
        ttl_seconds=600,
    )


def test_a_person_signed_in_for_a_principal_sees_and_answers_only_their_own(store: PolicyStore) -> None:
    alices, bobs = approval_of(store, ALICE, "alice-notes.md"), approval_of(store, BOB, "bob-diary.md")
    client, csrf = signed_in(store, ALICE)
    body = client.get("/approvals/").text
    assert "alice-notes.md" in body and "bob-diary.md" not in body and "Waiting for you (1)" in body
    assert "bob-diary.md" not in client.get(f"/approvals/a/{bobs.id}").text
    assert "bob-diary.md" not in client.get("/approvals/fragment", params={"focus": bobs.id}).text
    refused = client.post(f"/approvals/a/{bobs.id}/approve", data={"csrf": csrf}, headers={"Origin": BASE})
    assert refused.status_code == 404
    assert store.get_approval(bobs.id).status == "pending"  # type: ignore[union-attr]
    mine = client.post(f"/approvals/a/{alices.id}/approve", data={"csrf": csrf}, headers={"Origin": BASE})
    assert mine.status_code in (200, 303) and store.get_approval(alices.id).status == "approved"  # type: ignore[union-attr]
    owner, _ = signed_in(store)
    assert "bob-diary.md" in owner.get("/approvals/").text  # the owner's link sees everyone's


def test_a_sign_in_link_cannot_be_turned_into_another_principals(store: PolicyStore) -> None:
    approval_of(store, BOB, "bob-diary.md")
    link = new_login_link(store, f"{BASE}/approvals", 600, ALICE)
    client = page_client(store)
    for forged in (link.replace("alice", "bob"), link.split("&for=")[0]):  # another principal; the owner's
        assert client.get(forged.removeprefix(BASE)).status_code == 403
    assert client.get(link.removeprefix(BASE)).status_code == 200
    assert "bob-diary.md" not in client.get("/approvals/").text


def test_the_sign_in_command_the_page_names_is_this_installations(store: PolicyStore) -> None:
    """Signed out, or with a spent link, the page names the command as the CLI would print it."""
    from html import escape

    from mcp_tools.util.commands import mcp_tools

    client = page_client(store)
    shown = escape(mcp_tools("approvals", "login"), quote=True)
    assert f"<code>{shown}</code>" in client.get("/approvals/").text
    spent = client.get("/approvals/login?token=never-issued")
    assert spent.status_code == 403 and f"<code>{shown}</code>" in spent.text
