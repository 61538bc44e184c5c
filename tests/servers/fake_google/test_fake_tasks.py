"""The fake Google Tasks refuses what Google would refuse and keeps what Google keeps."""

from __future__ import annotations

from typing import Any

import pytest

from tests.servers.fake_google import FakeGoogle, FakeTasks
from tests.servers.fake_google.test_fake_google import call
from tests.servers.tasks.fixtures import BOTH

LISTS = "tasks/v1/users/@me/lists"
DEFAULT = "tasks/v1/lists/%40default/tasks"  # googleapiclient sends the path parameter percent-encoded


@pytest.mark.parametrize(
    ("method", "path", "body", "words"),
    [
        ("GET", DEFAULT + "?showComplete=true", None, 'Unknown name "showComplete"'),
        ("GET", DEFAULT + "?maxResults=ten", None, "TYPE_INT32"),
        ("GET", DEFAULT + "?maxResults=101", None, "maxResults 101"),
        ("GET", DEFAULT + "?showHidden=yes", None, "TYPE_BOOL"),
        ("POST", DEFAULT, {"title": "x", "dueDate": "2026-03-05"}, 'Unknown name "dueDate"'),
        ("POST", DEFAULT, {"title": 5}, "TYPE_STRING"),
        ("PUT", LISTS, None, "no such method"),
    ],
)
def test_requests_google_would_refuse_are_refused_and_recorded(
    google: FakeGoogle, tasks: FakeTasks, method: str, path: str, body: Any, words: str
):
    token, _ = google.issue(BOTH)
    status, payload = call(google, token, method, path, body)
    assert status in (400, 404) and payload["error"]["code"] == status
    assert any(words in violation for violation in google.violations), google.violations
    google.violations.clear()  # expected here; the fixture fails any test that leaves one


def test_due_keeps_the_date_and_filters_take_min_inclusive_max_exclusive(google: FakeGoogle, tasks: FakeTasks):
    token, _ = google.issue(BOTH)
    status, made = call(google, token, "POST", DEFAULT, {"title": "Pay", "due": "2026-03-05T15:45:00.000Z"})
    assert status == 200 and made["due"] == "2026-03-05T00:00:00.000Z" and made["status"] == "needsAction"

    def listed(query: str) -> list[str]:
        return [item["title"] for item in call(google, token, "GET", DEFAULT + "?" + query)[1]["items"]]

    assert listed("dueMin=2026-03-05T00:00:00Z") == ["Pay"]
    assert listed("dueMax=2026-03-05T00:00:00Z") == []  # exclusive
    assert listed("dueMax=2026-03-05T00:00:01Z") == ["Pay"]
    assert call(google, token, "GET", DEFAULT + "?dueMin=2026-03-05")[0] == 400  # a date is not RFC 3339


def test_status_completed_hidden_deleted_and_move(google: FakeGoogle, tasks: FakeTasks):
    token, _ = google.issue(BOTH)
    parent = tasks.add("Parent")
    child = tasks.add("Child", parent=parent.id)
    other = tasks.add("Other")
    path = f"{DEFAULT}/{parent.id}"
    etag = parent.etag
    status, done = call(google, token, "PATCH", path, {"status": "completed"})
    assert status == 200 and done["completed"] and done["etag"] != etag
    assert call(google, token, "PATCH", path, {"status": "needsAction", "completed": None})[1].get("completed") is None
    status, moved = call(google, token, "POST", f"{DEFAULT}/{other.id}/move?parent={parent.id}&previous={child.id}")
    assert status == 200 and moved["parent"] == parent.id and moved["position"] == f"{1:020d}"
    assert tasks.titles() == ["Parent", "  Child", "  Other"]
    call(google, token, "PATCH", f"{DEFAULT}/{child.id}", {"status": "completed"})
    call(google, token, "POST", "tasks/v1/lists/%40default/clear")
    assert child.hidden and call(google, token, "GET", DEFAULT)[1]["items"][0]["title"] == "Parent"
    assert call(google, token, "DELETE", path)[0] == 204
    assert call(google, token, "GET", path)[0] == 404 and call(google, token, "GET", f"{DEFAULT}/{child.id}")[0] == 404
    assert call(google, token, "GET", DEFAULT + "?showDeleted=true&showHidden=true")[1]["items"][0]["deleted"] is True


def test_the_read_only_scope_reads_and_cannot_write(google: FakeGoogle, tasks: FakeTasks):
    stored = tasks.add("Read me")
    read_only, _ = google.issue(["https://www.googleapis.com/auth/tasks.readonly"])
    assert call(google, read_only, "GET", f"{DEFAULT}/{stored.id}")[0] == 200
    status, payload = call(google, read_only, "PATCH", f"{DEFAULT}/{stored.id}", {"title": "x"})
    assert status == 403 and payload["error"]["errors"][0]["reason"] == "insufficientPermissions"
    assert stored.title == "Read me"
