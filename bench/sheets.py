"""Benchmark sheets.read against the fake Google on 127.0.0.1 (no network).

A sheet of 1,000 rows x 10 columns (10,000 cells), read two ways, interleaved call by call,
each against the same values.get of the whole range made directly with googleapiclient:

1. Large answers: `[sheets] max_read_cells = 10000`, so each `sheets.read` answer holds as many
   cells as its 25,000 characters of cell text allow, following next_offset to the end (each
   answer one values.get; the sheet list it also answers with is asked once per 20 s, so the
   first call of the run pays it).
2. Paged, as a model reads by default: 2,000 cells an answer, following next_offset to the end
   (five calls).

p50 and p95 of each, and their ratios.

Run: .venv/bin/python bench/sheets.py [--calls 30]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.measure import direct_service, fake_google, interleaved, print_against, signed_in_token  # noqa: E402
from mcp_tools.servers.sheets.service import META_FIELDS  # noqa: E402
from tests.harness import connect  # noqa: E402
from tests.servers.fake_google import FakeGoogle, FakeSheets  # noqa: E402
from tests.servers.sheets.fixtures import sheets_settings  # noqa: E402

RANGE = "Data!A1:J1000"


def direct_reader(google: FakeGoogle, token: str, spreadsheet: str):
    service = direct_service(google, token, "sheets", "v4")
    # built once, as the tool does: googleapiclient spends ~20 ms building a resource
    spreadsheets = service.spreadsheets()
    cells = spreadsheets.values()

    def values() -> int:
        found = cells.get(
            spreadsheetId=spreadsheet, range=RANGE, valueRenderOption="FORMATTED_VALUE", fields="values"
        ).execute()
        return sum(len(row) for row in found["values"])

    spreadsheets.get(spreadsheetId=spreadsheet, fields=META_FIELDS).execute()  # the same warm-up as ours
    return values


async def read_all(client: Any, spreadsheet: str) -> int:
    cells, offset = 0, 0
    while offset is not None:
        result = await client.call_tool("sheets_read", {"id": spreadsheet, "range": RANGE, "offset": offset})
        assert not result.is_error, result.content
        cells += sum(len(row) for row in result.structured_content["values"])
        offset = result.structured_content["next_offset"]
    return cells


async def count_answers(client: Any, spreadsheet: str) -> int:
    """How many answers reading the whole range takes with this client's settings."""
    answers, offset = 0, 0
    while offset is not None:
        result = await client.call_tool("sheets_read", {"id": spreadsheet, "range": RANGE, "offset": offset})
        answers, offset = answers + 1, result.structured_content["next_offset"]
    return answers


async def compare(label: str, ours_call: Any, direct_call: Any, calls: int) -> None:
    async def ours_all() -> None:
        assert await ours_call() == 10_000

    def direct_all() -> None:
        assert direct_call() == 10_000

    # warm up both (imports, service build)
    ours, theirs = await interleaved(ours_all, direct_all, calls, warm_ups=3)
    print(label)
    print_against(ours, theirs)


async def main(calls: int) -> None:
    with fake_google() as google, tempfile.TemporaryDirectory() as tmp:
        sheets = FakeSheets(google)
        rows = [[f"r{r}c{c}" if c % 2 else r * 10 + c for c in range(10)] for r in range(1000)]
        book = sheets.add("Bench", {"Data": rows})
        base = Path(tmp)
        settings = sheets_settings(base, google, max_read_cells=10_000)
        token = signed_in_token(base)
        values_only = direct_reader(google, token, book.id)
        async with connect(base, settings) as client:
            pages = await count_answers(client, book.id)
            await compare(
                f"sheets.read of 10,000 cells in {pages} large answers (max_read_cells 10000) vs one values.get",
                lambda: read_all(client, book.id),
                values_only,
                calls,
            )
        (base / "paged").mkdir()
        paged_settings = sheets_settings(base / "paged", google)
        async with connect(base / "paged", paged_settings) as client:
            await compare(
                "sheets.read of 10,000 cells paged by 2,000 (5 calls) vs one values.get",
                lambda: read_all(client, book.id),
                values_only,
                calls,
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    options = parser.parse_args()
    anyio.run(main, options.calls)
