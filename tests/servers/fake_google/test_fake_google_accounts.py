"""The fake Google holds several accounts apart by their tokens, as Google does."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from tests.servers.fake_google import FakeDrive, FakeGmail, FakeGoogle, FakeTasks
from tests.servers.fake_google.test_fake_google import call
from tests.servers.gmail.fixtures import ALL_SCOPES, plain

DRIVE = ["https://www.googleapis.com/auth/drive"]
TASKS = ["https://www.googleapis.com/auth/tasks"]


def post_form(url: str, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
    from urllib.error import HTTPError
    from urllib.parse import urlencode

    request = urllib.request.Request(url, data=urlencode(form).encode(), method="POST")
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"{}")
    except HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def test_each_token_reaches_its_own_account(google: FakeGoogle, gmail: FakeGmail):
    work = google.add_account("alice@corp.example")
    work_gmail = FakeGmail(work)
    mine = gmail.add(plain(subject="Home"))
    theirs = work_gmail.add(plain(subject="Board meeting", to="alice@corp.example"))
    home_token, _ = google.issue(ALL_SCOPES)
    work_token, _ = work.issue(ALL_SCOPES)

    _, home_list = call(google, home_token, "GET", "gmail/v1/users/me/messages")
    _, work_list = call(google, work_token, "GET", "gmail/v1/users/me/messages")
    assert [m["id"] for m in home_list["messages"]] == [mine.id]
    assert [m["id"] for m in work_list["messages"]] == [theirs.id]
    # another account's message is not there for this token, as at Google
    assert call(google, home_token, "GET", f"gmail/v1/users/me/messages/{theirs.id}")[0] == 404
    # naming the other account's mailbox with this token is refused
    status, payload = call(google, home_token, "GET", "gmail/v1/users/alice@corp.example/messages")
    assert status == 403 and "Delegation denied" in payload["error"]["message"]
    _, profile = call(google, work_token, "GET", "gmail/v1/users/me/profile")
    assert profile["emailAddress"] == "alice@corp.example"
    assert google.calls_for("alice@corp.example") == [
        "gmail.users.messages.list",
        "gmail.users.getProfile",
    ]
    assert google.calls_for("me@example.com") == [
        "gmail.users.messages.list",
        "gmail.users.messages.get",
        "gmail.users.messages.list",
    ]


def test_drive_and_tasks_are_per_account(google: FakeGoogle):
    work = google.add_account("alice@corp.example")
    home_drive, work_drive = FakeDrive(google), FakeDrive(work)
    home_tasks, work_tasks = FakeTasks(google), FakeTasks(work)
    home_drive.add("home.txt", "hi")
    secret = work_drive.add("plan.txt", "q4")
    home_tasks.add("buy milk")
    work_tasks.add("file report")
    home, _ = google.issue(DRIVE + TASKS)
    office, _ = work.issue(DRIVE + TASKS)
    _, files = call(google, home, "GET", "drive/v3/files")
    assert [f["name"] for f in files["files"]] == ["home.txt"]
    assert call(google, home, "GET", f"drive/v3/files/{secret.id}")[0] == 404
    assert call(google, office, "GET", f"drive/v3/files/{secret.id}")[0] == 200
    _, tasks = call(google, office, "GET", f"tasks/v1/lists/{work_tasks.default_id}/tasks")
    assert [t["title"] for t in tasks["items"]] == ["file report"]
    assert call(google, home, "GET", f"tasks/v1/lists/{work_tasks.default_id}/tasks")[0] == 404


def test_refresh_tokens_belong_to_their_account_and_revoke_alone(google: FakeGoogle, gmail: FakeGmail):
    work = google.add_account("alice@corp.example")
    FakeGmail(work).add(plain(to="alice@corp.example"))
    client_id, client_secret = google.add_client()
    _, home_refresh = google.issue(ALL_SCOPES)
    _, work_refresh = work.issue(ALL_SCOPES)
    form = {"grant_type": "refresh_token", "client_id": client_id, "client_secret": client_secret}
    status, answer = post_form(google.url + "token", {**form, "refresh_token": work_refresh})
    assert status == 200
    _, profile = call(google, answer["access_token"], "GET", "gmail/v1/users/me/profile")
    assert profile["emailAddress"] == "alice@corp.example"

    assert post_form(google.url + "revoke", {"token": work_refresh})[0] == 200
    assert post_form(google.url + "revoke", {"token": work_refresh})[0] == 400  # already gone
    status, answer = post_form(google.url + "token", {**form, "refresh_token": work_refresh})
    assert status == 400 and answer["error"] == "invalid_grant"
    assert post_form(google.url + "token", {**form, "refresh_token": home_refresh})[0] == 200
    assert google.revoked == [work_refresh, work_refresh]


def test_revoking_one_account_leaves_the_other(google: FakeGoogle, gmail: FakeGmail):
    work = google.add_account("alice@corp.example")
    FakeGmail(work)
    home, _ = google.issue(ALL_SCOPES)
    office, _ = work.issue(ALL_SCOPES)
    google.revoke_refresh_tokens("alice@corp.example")
    assert call(google, office, "GET", "gmail/v1/users/me/messages")[0] == 401
    assert call(google, home, "GET", "gmail/v1/users/me/messages")[0] == 200
