"""The fake Docs refuses what Google Docs would refuse and answers in Google's shapes."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_tools.servers.google import scopes
from tests.servers.fake_google import FakeDocs, FakeGoogle
from tests.servers.fake_google.test_fake_google import call


def batch(google: FakeGoogle, token: str, document_id: str, requests: list[Any], **extra: Any) -> tuple[int, Any]:
    return call(google, token, "POST", f"v1/documents/{document_id}:batchUpdate", {"requests": requests, **extra})


def insert(text: str, index: int = 1) -> dict[str, Any]:
    return {"insertText": {"location": {"index": index}, "text": text}}


@pytest.mark.parametrize(
    ("requests", "words"),
    [
        ([{"insertParagraph": {}}], 'Unknown name "insertParagraph"'),  # no such request kind
        ([{"insertText": {"location": {"index": 1}, "text": "x", "style": {}}}], 'Unknown name "style"'),
        ([{**insert("a"), "replaceAllText": {"containsText": {"text": "a"}}}], "exactly one kind"),
        ([insert("x", 0)], "must be at least 1"),
        ([insert("x", 99)], "less than the end index"),
        ([insert("")], "must not be empty"),
        ([{"updateTextStyle": {"range": {"startIndex": 1, "endIndex": 2}, "textStyle": {"bold": True}}}], "fields"),
        (
            [{"updateTextStyle": {"range": {"startIndex": 1, "endIndex": 2}, "textStyle": {}, "fields": "boldness"}}],
            "unknown field",
        ),
        ([{"deleteParagraphBullets": {"range": {"startIndex": 3, "endIndex": 2}}}], "empty"),
        ([{"insertTable": {"rows": 1, "columns": 21, "endOfSegmentLocation": {}}}], "20 columns"),
    ],
)
def test_requests_google_would_refuse_are_refused_and_change_nothing(
    google: FakeGoogle, docs: FakeDocs, requests: list[Any], words: str
):
    token, _ = google.issue([scopes.DOCUMENTS])
    stored = docs.add("T")
    revision = stored.revision
    status, payload = batch(google, token, stored.id, [insert("kept? "), *requests])
    assert status == 400 and payload["error"]["status"] == "INVALID_ARGUMENT"
    assert any(words in violation for violation in google.violations), google.violations
    assert stored.text() == "\n" and stored.revision == revision  # all or nothing
    google.violations.clear()  # expected here; the fixture fails any test that leaves one


def test_a_stale_required_revision_is_refused_and_the_current_one_accepted(google: FakeGoogle, docs: FakeDocs):
    token, _ = google.issue([scopes.DRIVE_FILE])
    stored = docs.add("T")
    first = stored.revision
    status, answer = batch(google, token, stored.id, [insert("one")], writeControl={"requiredRevisionId": first})
    assert status == 200 and answer["writeControl"]["requiredRevisionId"] == stored.revision != first
    status, error = batch(google, token, stored.id, [insert("two")], writeControl={"requiredRevisionId": first})
    assert status == 400 and "revision" in error["error"]["message"] and stored.text() == "one\n"


def test_documents_come_back_in_googles_shape(google: FakeGoogle, docs: FakeDocs):
    token, _ = google.issue([scopes.DRIVE_FILE])
    status, made = call(google, token, "POST", "v1/documents", {"title": "Notes", "body": {"content": []}})
    assert status == 200 and made["title"] == "Notes" and made["revisionId"]
    assert [element.get("startIndex") for element in made["body"]["content"]] == [None, 1]
    status, answer = batch(
        google,
        token,
        made["documentId"],
        [
            insert("a😀b\n\tnested\ntext"),
            {
                "createParagraphBullets": {
                    "range": {"startIndex": 1, "endIndex": 13},
                    "bulletPreset": "NUMBERED_DECIMAL_NESTED",
                }
            },
            {"replaceAllText": {"containsText": {"text": "B", "matchCase": True}, "replaceText": "c"}},
            {"replaceAllText": {"containsText": {"text": "B", "matchCase": False}, "replaceText": "c"}},
        ],
    )
    assert answer["replies"] == [{}, {}, {"replaceAllText": {}}, {"replaceAllText": {"occurrencesChanged": 1}}]
    status, document = call(google, token, "GET", f"v1/documents/{made['documentId']}")
    first, second, third = document["body"]["content"][1:]
    assert first["paragraph"]["elements"][0]["textRun"]["content"] == "a😀c\n"
    assert (first["startIndex"], first["endIndex"]) == (1, 6)  # the emoji is two UTF-16 code units
    assert first["paragraph"]["bullet"] == {"listId": first["paragraph"]["bullet"]["listId"], "textStyle": {}}
    assert second["paragraph"]["bullet"]["nestingLevel"] == 1  # the tab became the level and went away
    assert second["paragraph"]["elements"][0]["textRun"]["content"] == "nested\n"
    assert "bullet" not in third["paragraph"] and third["endIndex"] == 18
    levels = document["lists"][first["paragraph"]["bullet"]["listId"]]["listProperties"]["nestingLevels"]
    assert levels[0]["glyphType"] == "DECIMAL"
    status, tabbed = call(google, token, "GET", f"v1/documents/{made['documentId']}?includeTabsContent=true")
    assert "body" not in tabbed and tabbed["tabs"][0]["documentTab"]["body"] == document["body"]


def test_tables_take_their_indexes_and_text_cannot_go_between_paragraph_and_table(google: FakeGoogle, docs: FakeDocs):
    token, _ = google.issue([scopes.DOCUMENTS])
    stored = docs.add("T")
    made = batch(google, token, stored.id, [{"insertTable": {"rows": 1, "columns": 2, "endOfSegmentLocation": {}}}])
    status, document = call(google, token, "GET", f"v1/documents/{stored.id}")
    assert made[0] == status == 200
    table = document["body"]["content"][2]
    assert (table["startIndex"], table["endIndex"]) == (2, 9)  # table, row, 2 x (cell, newline), end
    cells = table["table"]["tableRows"][0]["tableCells"]
    assert [cell["content"][0]["startIndex"] for cell in cells] == [5, 7]
    assert batch(google, token, stored.id, [insert("x", 2)])[0] == 400
    google.violations.clear()
    assert batch(google, token, stored.id, [insert("cell", 5)])[0] == 200


def test_a_document_made_elsewhere_is_out_of_reach_of_drive_file(google: FakeGoogle, docs: FakeDocs):
    theirs = docs.add("Theirs", app_access=False)
    narrow, _ = google.issue([scopes.DRIVE_FILE])
    reader, _ = google.issue([scopes.DOCUMENTS_READONLY])
    assert call(google, narrow, "GET", f"v1/documents/{theirs.id}")[0] == 404
    assert call(google, reader, "GET", f"v1/documents/{theirs.id}")[0] == 200
    status, error = batch(google, reader, theirs.id, [insert("x")])
    assert status == 403 and error["error"]["errors"][0]["reason"] == "insufficientPermissions"
