"""Benchmark drive.search against the fake Drive on 127.0.0.1 (no network).

`drive.search` with structured filters (a name word and a type, 25 hits of 60 files) through the
real MCP client and the policy layer, against the same `files.list` request (the same q, fields
and page size) made directly with googleapiclient. p50 and p95, interleaved call by call; the
ratio is what to compare, absolute times vary with the machine's load.

Run: .venv/bin/python bench/drive.py [--calls 60]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.measure import direct_service, fake_google, interleaved, print_against, signed_in_token  # noqa: E402
from mcp_tools.servers.drive.service import FILE_FIELDS  # noqa: E402
from tests.harness import connect  # noqa: E402
from tests.servers.drive.fixtures import drive_settings  # noqa: E402
from tests.servers.fake_google import FakeDrive, FakeGoogle  # noqa: E402
from tests.servers.fake_google.drive import DOC  # noqa: E402

ARGUMENTS = {"name": "report", "type": "document", "limit": 25}


def direct_search(google: FakeGoogle, token: str, q: str):
    """The same files.list with googleapiclient alone."""
    service = direct_service(google, token, "drive", "v3", google.url + "drive/v3/")

    def run() -> int:
        found = (
            service.files()
            .list(
                q=q,
                pageSize=25,
                orderBy="modifiedTime desc",
                fields=f"nextPageToken,files({FILE_FIELDS})",
                supportsAllDrives=True,
                includeItemsFromAllDrives=True,
            )
            .execute()
        )
        return len(found["files"])

    return run


async def search(base: Path, google: FakeGoogle, settings: dict, calls: int) -> None:
    async with connect(base, settings) as client:
        first = await client.call_tool("drive_search", ARGUMENTS)
        assert not first.is_error and first.structured_content is not None
        direct = direct_search(google, signed_in_token(base), first.structured_content["q"])

        async def ours_search() -> None:
            result = await client.call_tool("drive_search", ARGUMENTS)
            assert not result.is_error and len(result.structured_content["files"]) == 25

        def direct_search_25() -> None:
            assert direct() == 25

        # warm up both (imports, service build)
        ours, theirs = await interleaved(ours_search, direct_search_25, calls, warm_ups=5)
    print(f"drive.search, 25 hits of 60 files ({calls} calls each, interleaved)")
    print_against(ours, theirs)


async def main(calls: int) -> None:
    with fake_google() as google, tempfile.TemporaryDirectory() as tmp:
        drive = FakeDrive(google)
        for number in range(30):
            drive.add(f"Quarterly report {number}", f"# Report {number}\n", DOC)
            drive.add(f"notes {number}.txt", "x")
        base = Path(tmp)
        await search(base, google, drive_settings(base, google, servers=["drive"]), calls)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=60)
    options = parser.parse_args()
    anyio.run(main, options.calls)
