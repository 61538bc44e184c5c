"""drive and sheets on big data, with the largest arguments the schemas take: each result fits
the result budget and says how to get the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.budgets import assert_fits, says_more, structured
from tests.harness import connect
from tests.servers.docs.fixtures import docs_settings
from tests.servers.drive.fixtures import drive_settings
from tests.servers.fake_google import FakeDocs, FakeDrive, FakeGoogle, FakeSheets
from tests.servers.sheets.fixtures import sheets_settings

pytestmark = pytest.mark.anyio


async def test_drive_search_and_read_at_their_largest(tmp_path: Path, google: FakeGoogle, drive: FakeDrive) -> None:
    for i in range(150):
        drive.add(f"Quarterly report number {i:03} with a rather long descriptive name.txt", "report body")
    log = drive.add("log.txt", "".join(f"line {i}: something happened here\n" for i in range(20_000)))
    async with connect(tmp_path, drive_settings(tmp_path, google)) as client:
        found = await client.call_tool("drive_search", {"name": "Quarterly", "limit": 100})
        read = await client.call_tool("drive_read", {"id": log.id, "max_chars": 30_000})
    assert_fits(found)
    assert len(structured(found)["files"]) == 100
    says_more(found, f"page_token={structured(found)['next_page_token']}")
    assert_fits(read)
    says_more(read, "offset=30000")


async def test_sheets_read_pages_a_big_sheet(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets) -> None:
    rows = [[f"row {n}", "a cell with a fair amount of text in it " * 3, n, n * 2.5] for n in range(5_000)]
    book = sheets.add("Big", {"Data": rows})
    async with connect(tmp_path, sheets_settings(tmp_path, google, max_read_cells=50_000)) as client:
        first = await client.call_tool("sheets_read", {"id": book.id})
    assert_fits(first)
    says_more(first, f"offset={structured(first)['next_offset']}")


async def test_sheets_read_of_many_short_cells_pages_without_a_cut_and_loses_no_cell(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
) -> None:
    """Short cells cost their separators too: a page of them sized by their text alone went over
    the budget, was cut by the gate, and next_offset then skipped the cells cut away."""
    rows = [[f"r{r}c{c}" if c % 2 else r * 10 + c for c in range(10)] for r in range(1000)]
    book = sheets.add("Short", {"Data": rows})
    cells, offset, answers = 0, 0, 0
    async with connect(tmp_path, sheets_settings(tmp_path, google, max_read_cells=50_000)) as client:
        while offset is not None:
            page = await client.call_tool("sheets_read", {"id": book.id, "range": "Data", "offset": offset})
            assert_fits(page)
            assert "cut to fit" not in page.content[0].text  # type: ignore[union-attr]
            cells += sum(len(row) for row in structured(page)["values"])
            offset, answers = structured(page)["next_offset"], answers + 1
    assert cells == 10_000 and answers > 1


async def test_docs_read_at_its_largest_page(tmp_path: Path, google: FakeGoogle, docs: FakeDocs) -> None:
    stored = docs.add("Long")
    docs.edit(stored.id, [{"insertText": {"location": {"index": 1}, "text": 'A "quoted" line\\of text.\n' * 8000}}])
    async with connect(tmp_path, docs_settings(tmp_path, google)) as client:
        result = await client.call_tool("docs_read", {"id": stored.id, "max_chars": 30_000})
    assert_fits(result)  # escapes in the JSON included
    says_more(result, "offset=30000")
