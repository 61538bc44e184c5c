"""The fake Sheets API answers as Google does, so the sheets tests can be trusted.

Driven with googleapiclient itself (built from its shipped discovery document), as any client
of the real API would be.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.servers.fake_google import FakeGoogle, FakeSheets
from tests.servers.fake_google.sheets import Formula

SPREADSHEETS = "https://www.googleapis.com/auth/spreadsheets"


@pytest.fixture
def api(google: FakeGoogle, sheets: FakeSheets) -> Any:
    import httplib2
    from google.oauth2.credentials import Credentials
    from google_auth_httplib2 import AuthorizedHttp
    from googleapiclient.discovery import build

    token, _ = google.issue([SPREADSHEETS])
    http = AuthorizedHttp(Credentials(token), http=httplib2.Http(timeout=10))
    service = build("sheets", "v4", http=http, static_discovery=True, client_options={"api_endpoint": google.url})
    return service.spreadsheets()


def refused(request: Any) -> tuple[int, str]:
    from googleapiclient.errors import HttpError

    with pytest.raises(HttpError) as caught:
        request.execute()
    return int(caught.value.resp.status), str(caught.value.reason)


def test_values_come_back_trimmed_positioned_and_in_either_dimension(api: Any, sheets: FakeSheets):
    book = sheets.add("T", {"Data": [["a", "", "c", ""], [], ["", 2.5, True], [], []]})
    rows = api.values().get(spreadsheetId=book.id, range="Data").execute()
    assert rows == {
        "range": "Data!A1:Z1000",
        "majorDimension": "ROWS",
        "values": [["a", "", "c"], [], ["", "2.5", "TRUE"]],
    }
    columns = api.values().get(spreadsheetId=book.id, range="Data!A1:C3", majorDimension="COLUMNS").execute()
    assert columns["values"] == [["a"], ["", "", "2.5"], ["c", "", "TRUE"]]  # each column trimmed
    raw = api.values().get(spreadsheetId=book.id, range="C3", valueRenderOption="UNFORMATTED_VALUE").execute()
    assert raw == {"range": "Data!C3", "majorDimension": "ROWS", "values": [[True]]}
    empty = api.values().get(spreadsheetId=book.id, range="Data!E5:F6").execute()
    assert "values" not in empty


def test_quoted_names_whole_rows_and_columns_and_batch_get(api: Any, sheets: FakeSheets):
    book = sheets.add("T", {"It's": [["x", "y"], ["z"]], "Q3 Budget": [["a", "b"], ["c", "d"]]})
    found = (
        api.values()
        .batchGet(spreadsheetId=book.id, ranges=["'It''s'!A1:B2", "'Q3 Budget'!B:B", "'Q3 Budget'!2:2"])
        .execute()
    )
    assert [item["range"] for item in found["valueRanges"]] == [
        "'It''s'!A1:B2",
        "'Q3 Budget'!B1:B1000",
        "'Q3 Budget'!A2:Z2",
    ]
    assert [item["values"] for item in found["valueRanges"]] == [[["x", "y"], ["z"]], [["b"], ["d"]], [["c", "d"]]]


def test_ranges_google_cannot_read_answer_400_with_its_messages(api: Any, sheets: FakeSheets):
    book = sheets.add("T", {"Sheet1": [["a"]]})
    status, message = refused(api.values().get(spreadsheetId=book.id, range="Sheet1!A1:B2000000"))
    assert (
        status == 400 and "Range (Sheet1!A1:B2000000) exceeds grid limits. Max rows: 1000, max columns: 26" in message
    )
    status, message = refused(api.values().get(spreadsheetId=book.id, range="Nope!A1"))
    assert status == 400 and "Unable to parse range: Nope!A1" in message
    assert refused(api.values().get(spreadsheetId="1" + "q" * 43, range="A1"))[0] == 404


def test_raw_keeps_text_user_entered_parses_it_as_typed(api: Any, sheets: FakeSheets):
    book = sheets.add("T", {"Data": []})
    row = ["=1+2", "'007", "12", "true", "plain"]
    for option, target in (("RAW", "Data!A1"), ("USER_ENTERED", "Data!A2")):
        api.values().update(
            spreadsheetId=book.id, range=target, valueInputOption=option, body={"values": [row]}
        ).execute()
    assert [sheets.cell(book, "Data", ref) for ref in ("A1", "B1", "C1", "D1")] == ["=1+2", "'007", "12", "true"]
    assert [sheets.cell(book, "Data", ref) for ref in ("A2", "B2", "C2", "D2")] == [Formula("=1+2"), "007", 12, True]
    formulas = api.values().get(spreadsheetId=book.id, range="A1:A2", valueRenderOption="FORMULA").execute()
    assert formulas["values"] == [["'=1+2"], ["=1+2"]]
    shown = api.values().get(spreadsheetId=book.id, range="A1:A2").execute()
    assert shown["values"] == [["=1+2"], ["3"]]
    status, message = refused(api.values().update(spreadsheetId=book.id, range="A1", body={"values": [[1]]}))
    assert status == 400 and "valueInputOption" in message


def test_writes_must_fit_a_bounded_range_and_the_grid(api: Any, sheets: FakeSheets):
    book = sheets.add("T", {"Data": []})
    status, message = refused(
        api.values().update(
            spreadsheetId=book.id, range="Data!A1:B1", valueInputOption="RAW", body={"values": [[1, 2, 3]]}
        )
    )
    assert status == 400 and "tried writing to column [C]" in message
    status, message = refused(
        api.values().update(
            spreadsheetId=book.id, range="Data!A1000", valueInputOption="RAW", body={"values": [[1], [2]]}
        )
    )
    assert status == 400 and "exceeds grid limits" in message
    done = (
        api.values()
        .update(spreadsheetId=book.id, range="Data!B2", valueInputOption="RAW", body={"values": [[1, None, 3], [4]]})
        .execute()
    )
    assert done["updatedRange"] == "Data!B2:D3" and done["updatedCells"] == 4


def test_append_finds_the_table_and_insert_rows_moves_what_is_below(api: Any, sheets: FakeSheets):
    book = sheets.add("T", {"Data": [["h1", "h2"], ["a", 1], [], ["note"]]})
    done = (
        api.values()
        .append(
            spreadsheetId=book.id,
            range="Data!A1",
            valueInputOption="RAW",
            insertDataOption="INSERT_ROWS",
            body={"values": [["b", 2]]},
        )
        .execute()
    )
    assert done["tableRange"] == "Data!A1:B2" and done["updates"]["updatedRange"] == "Data!A3:B3"
    assert sheets.cell(book, "Data", "A5") == "note" and book.sheet("Data").rows == 1001  # type: ignore[union-attr]
    over = (
        api.values()
        .append(spreadsheetId=book.id, range="Data", valueInputOption="RAW", body={"values": [["c"]]})
        .execute()
    )
    assert over["updates"]["updatedRange"] == "Data!A4"


def test_get_create_and_clear(api: Any, sheets: FakeSheets):
    made = api.create(
        body={
            "properties": {"title": "Plan"},
            "sheets": [
                {
                    "properties": {"title": "Q3 Budget"},
                    "data": [{"rowData": [{"values": [{"userEnteredValue": {"stringValue": "=SUM(1)"}}]}]}],
                },
                {"properties": {"title": "Notes", "gridProperties": {"rowCount": 5, "columnCount": 3}}},
            ],
        }
    ).execute()
    book = sheets.books[made["spreadsheetId"]]
    assert sheets.cell(book, "Q3 Budget", "A1") == "=SUM(1)"  # stringValue is text
    trimmed = api.get(
        spreadsheetId=book.id, ranges=["Notes!A1"], fields="properties/title,sheets/properties(title,gridProperties)"
    ).execute()
    assert trimmed == {
        "properties": {"title": "Plan"},
        "sheets": [{"properties": {"title": "Notes", "gridProperties": {"rowCount": 5, "columnCount": 3}}}],
    }
    cleared = api.values().clear(spreadsheetId=book.id, range="'Q3 Budget'!A:A", body={}).execute()
    assert cleared["clearedRange"] == "'Q3 Budget'!A1:A1000" and book.sheet("Q3 Budget").cells == {}  # type: ignore[union-attr]
    status, message = refused(
        api.create(body={"sheets": [{"properties": {"title": "A"}}, {"properties": {"title": "a"}}]})
    )
    assert status == 400 and "already exists" in message


def test_drive_file_sees_only_the_apps_spreadsheets(google: FakeGoogle, sheets: FakeSheets):
    import httplib2
    from google.oauth2.credentials import Credentials
    from google_auth_httplib2 import AuthorizedHttp
    from googleapiclient.discovery import build

    theirs, ours = sheets.add("Theirs", app=False), sheets.add("Ours")
    token, _ = google.issue(["https://www.googleapis.com/auth/drive.file"])
    http = AuthorizedHttp(Credentials(token), http=httplib2.Http(timeout=10))
    api = build("sheets", "v4", http=http, static_discovery=True, client_options={"api_endpoint": google.url})
    assert api.spreadsheets().get(spreadsheetId=ours.id).execute()["properties"]["title"] == "Ours"
    assert refused(api.spreadsheets().get(spreadsheetId=theirs.id))[0] == 404
