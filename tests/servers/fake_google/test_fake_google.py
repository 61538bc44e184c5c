"""The fake Google refuses what Google would refuse, so the gmail tests can be trusted."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.servers.fake_google import FakeGmail, FakeGoogle
from tests.servers.gmail.fixtures import ALL_SCOPES, plain


def call(google: FakeGoogle, token: str, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(google.url + path.lstrip("/"), data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


@pytest.mark.parametrize(
    ("method", "path", "body", "words"),
    [
        ("GET", "gmail/v1/users/me/messages?maxResult=5", None, 'Unknown name "maxResult"'),
        ("GET", "gmail/v1/users/me/messages?maxResults=ten", None, "TYPE_INT32"),
        ("GET", "gmail/v1/users/me/messages/abc?format=html", None, "enum"),
        ("GET", "gmail/v1/users/me/messages?includeSpamTrash=yes", None, "TYPE_BOOL"),
        ("POST", "gmail/v1/users/me/messages/send", {"raw": "eA", "to": "x@y.z"}, 'Unknown name "to"'),
        ("POST", "gmail/v1/users/me/drafts", {"message": {"raw": 5}}, "TYPE_STRING"),
        ("POST", "gmail/v1/users/me/drafts", {"message": {"raw": "not base64!"}}, "Base64"),
        ("DELETE", "gmail/v1/users/me/labels", None, "no such method"),
    ],
)
def test_requests_google_would_refuse_are_refused_and_recorded(
    google: FakeGoogle, gmail: FakeGmail, method: str, path: str, body: Any, words: str
):
    token, _ = google.issue(ALL_SCOPES)
    status, payload = call(google, token, method, path, body)
    assert status in (400, 404) and payload["error"]["code"] == status
    assert any(words in violation for violation in google.violations), google.violations
    google.violations.clear()  # expected here; the fixture fails any test that leaves one


def test_tokens_and_scopes_are_checked(google: FakeGoogle, gmail: FakeGmail):
    stored = gmail.add(plain())
    read_only, _ = google.issue(["https://www.googleapis.com/auth/gmail.readonly"])
    assert call(google, "ya29.forged", "GET", f"gmail/v1/users/me/messages/{stored.id}")[0] == 401
    assert call(google, read_only, "GET", f"gmail/v1/users/me/messages/{stored.id}")[0] == 200
    status, payload = call(google, read_only, "POST", f"gmail/v1/users/me/messages/{stored.id}/trash")
    assert status == 403 and payload["error"]["errors"][0]["reason"] == "insufficientPermissions"
    assert "TRASH" not in stored.labels


def test_partial_responses_and_metadata_match_gmail(google: FakeGoogle, gmail: FakeGmail):
    from tests.servers.gmail.fixtures import nested_with_attachments

    stored = gmail.add(nested_with_attachments())
    token, _ = google.issue(ALL_SCOPES)
    _, metadata = call(google, token, "GET", f"gmail/v1/users/me/messages/{stored.id}?format=metadata")
    assert "parts" not in metadata["payload"]
    _, trimmed = call(
        google, token, "GET", f"gmail/v1/users/me/messages/{stored.id}?format=full&fields=id,payload(parts(filename))"
    )
    assert set(trimmed) == {"id", "payload"} and set(trimmed["payload"]) == {"parts"}
    assert [part.get("filename", "") for part in trimmed["payload"]["parts"]] == ["", "chart.png", "q3.csv"]
