"""The cursor of a search of every account carries its own state, sealed: it pages on after a
restart and on another replica, and a cursor altered, made by hand, sealed under another secret
or made by another tool is refused before any account is asked."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.harness import connect, failure, ok
from tests.servers.fake_google import FakeDrive, FakeGmail, FakeGoogle
from tests.servers.gmail.fixtures import ALL_SCOPES
from tests.servers.google_accounts_fixtures import WORK, raw_mail, two_accounts

pytestmark = pytest.mark.anyio

SECRET = "a-state-secret-the-replicas-share-0123456789"
OTHER_SECRET = "another-deployments-state-secret-9876543210"


@pytest.fixture
def work(google: FakeGoogle) -> FakeGoogle:
    return google.add_account(WORK)


def _mail(google: FakeGoogle, work: FakeGoogle) -> None:
    home, office = FakeGmail(google), FakeGmail(work)
    for day in (3, 5, 7):
        home.add(raw_mail(f"m {day}", f"{day:02d} Nov 2025 09:00:00 +0000"))
    for day in (4, 6, 8, 9):
        office.add(raw_mail(f"m {day}", f"{day:02d} Nov 2025 09:00:00 +0000", to=WORK))


def _settings(tmp_path: Path, google: FakeGoogle, work: FakeGoogle, secret: str | None) -> dict[str, Any]:
    tmp_path.mkdir(exist_ok=True)
    extra = {"state": {"secret": secret}} if secret else {}
    granted = [*ALL_SCOPES, "https://www.googleapis.com/auth/drive.file"]
    return two_accounts(tmp_path, google, work, granted, servers=["gmail", "drive", "files"], **extra)


async def _page(tmp_path: Path, settings: dict[str, Any], cursor: str | None) -> dict[str, Any]:
    """One page from a server of its own: each call is a fresh start with nothing in memory."""
    arguments: dict[str, Any] = {"account": "all", "limit": 2}
    if cursor is not None:
        arguments["cursor"] = cursor
    async with connect(tmp_path, settings) as client:
        return ok(await client.call_tool("gmail_search", arguments))


@pytest.mark.parametrize("secret", [None, SECRET])
async def test_the_merged_cursor_pages_on_across_restarts(
    tmp_path: Path, google: FakeGoogle, work: FakeGoogle, secret: str | None
):
    _mail(google, work)
    settings = _settings(tmp_path, google, work, secret)
    hits: list[tuple[str, str]] = []
    cursor: str | None = None
    for _ in range(6):
        page = await _page(tmp_path, settings, cursor)
        hits += [(hit["subject"], hit["account"]) for hit in page["messages"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
        assert len(cursor) <= 120, cursor  # short enough for a model to copy
        assert "work" not in cursor and "default" not in cursor  # sealed, not merely encoded
    assert [subject for subject, _ in hits] == [f"m {day}" for day in range(9, 2, -1)]
    assert [account for _, account in hits] == ["work", "work", "default", "work", "default", "work", "default"]
    key_file = tmp_path / "state" / "google" / "merged-cursor.key"
    assert key_file.exists() is (secret is None)  # a shared secret needs no key of this machine
    if secret is None:
        assert key_file.stat().st_mode & 0o077 == 0


async def test_a_replica_sharing_the_secret_pages_on_and_another_secret_does_not(
    tmp_path: Path, google: FakeGoogle, work: FakeGoogle
):
    _mail(google, work)
    first = await _page(tmp_path / "a", _settings(tmp_path / "a", google, work, SECRET), None)
    replica = await _page(tmp_path / "b", _settings(tmp_path / "b", google, work, SECRET), first["next_cursor"])
    assert [hit["subject"] for hit in first["messages"] + replica["messages"]] == ["m 9", "m 8", "m 7", "m 6"]
    asked = len(google.requests)
    async with connect(tmp_path / "c", _settings(tmp_path / "c", google, work, OTHER_SECRET)) as client:
        error = failure(await client.call_tool("gmail_search", {"account": "all", "cursor": first["next_cursor"]}))
    assert error["kind"] == "invalid_arguments" and "[state] secret" in error["message"]
    assert "next_cursor" in error["hint"]
    assert len(google.requests) == asked  # refused before any account was asked


def _forged(cursor: str) -> list[str]:
    """Cursors an attacker makes of a real one: a flipped character, cut short, and one written by
    hand that names an account and a page the server never gave."""
    body = cursor[len("all.") :]
    flipped = body[:20] + ("A" if body[20] != "A" else "B") + body[21:]
    by_hand = base64.urlsafe_b64encode(b"\0" * 12 + json.dumps([["work", "999", 0]]).encode()).decode()
    return ["all." + flipped, cursor[:-6], "all." + by_hand.rstrip("="), "all.forged", "not-a-cursor"]


async def test_a_tampered_or_foreign_cursor_is_refused(tmp_path: Path, google: FakeGoogle, work: FakeGoogle):
    _mail(google, work)
    home, office = FakeDrive(google), FakeDrive(work)
    for index in range(3):
        home.add(f"home-{index}.txt", "a", app=True)
        office.add(f"work-{index}.txt", "b", app=True)
    async with connect(tmp_path, _settings(tmp_path, google, work, SECRET)) as client:
        mail = ok(await client.call_tool("gmail_search", {"account": "all", "limit": 2}))
        files = ok(await client.call_tool("drive_search", {"account": "all", "limit": 2}))
        assert mail["next_cursor"] and files["next_page_token"]
        asked = len(google.requests)
        for cursor in _forged(mail["next_cursor"]):
            error = failure(await client.call_tool("gmail_search", {"account": "all", "cursor": cursor}))
            assert error["kind"] == "invalid_arguments", cursor
            assert "gmail.search" in error["message"], error
        # a cursor drive.search sealed does not page gmail.search, nor the other way round
        error = failure(await client.call_tool("gmail_search", {"account": "all", "cursor": files["next_page_token"]}))
        assert error["kind"] == "invalid_arguments"
        error = failure(await client.call_tool("drive_search", {"account": "all", "page_token": mail["next_cursor"]}))
        assert error["kind"] == "invalid_arguments" and "drive.search" in error["message"]
        assert len(google.requests) == asked
        # the real cursors still page
        assert ok(await client.call_tool("gmail_search", {"account": "all", "cursor": mail["next_cursor"]}))
        assert ok(await client.call_tool("drive_search", {"account": "all", "page_token": files["next_page_token"]}))
