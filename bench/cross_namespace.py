"""Benchmark a save into the files store through the policy gate (drive.read save_to).

`drive.read` with `save_to` downloads a file from the fake Drive on 127.0.0.1 and stores it by
calling `files.write` through the gate (validation, dynamic risk, precheck, its own audit row).
The baseline is the same `drive.read` returning the file's first base64 page to the client (binary
is never inlined whole: one page fits the result budget), which downloads the same bytes from
Drive. Interleaved call by call, medians of each size; the ratio is what to compare, absolute
times vary with the machine's load.

Run: .venv/bin/python bench/cross_namespace.py [--calls 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.harness import connect  # noqa: E402
from tests.servers.drive.fixtures import drive_settings  # noqa: E402
from tests.servers.fake_google import FakeDrive, FakeGoogle  # noqa: E402

SIZES = (64 * 1024, 1024 * 1024, 4 * 1024 * 1024)


async def compare(base: Path, google: FakeGoogle, drive: FakeDrive, size: int, calls: int) -> None:
    item = drive.add(f"blob-{size}.bin", os.urandom(size), "application/octet-stream")
    settings = drive_settings(base, google, drive={"max_read_bytes": 8 * 1024 * 1024})
    saved: list[float] = []
    returned: list[float] = []
    async with connect(base, settings) as client:
        for number in range(calls + 3):
            started = time.perf_counter()
            result = await client.call_tool("drive_read", {"id": item.id, "save_to": f"b{size}/{number}.bin"})
            took = time.perf_counter() - started
            assert not result.is_error, result.content
            if number >= 3:  # the first calls warm up imports and the client
                saved.append(took)
            started = time.perf_counter()
            result = await client.call_tool("drive_read", {"id": item.id})
            took = time.perf_counter() - started
            assert not result.is_error and result.structured_content["encoding"] == "base64"
            if number >= 3:
                returned.append(took)
    ours, theirs = statistics.median(saved), statistics.median(returned)
    print(
        f"  {size // 1024:>5} KB   save_to {ours * 1000:7.1f} ms   base64 to the client {theirs * 1000:7.1f} ms"
        f"   ratio x{ours / theirs:.2f}"
    )


async def main(calls: int) -> None:
    google = FakeGoogle().start()
    drive = FakeDrive(google)
    print(f"drive.read save_to (files.write through the gate) vs drive.read as base64, medians of {calls}")
    try:
        for size in SIZES:
            with tempfile.TemporaryDirectory() as tmp:
                await compare(Path(tmp), google, drive, size, calls)
    finally:
        google.stop()
    assert not google.violations, google.violations


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    options = parser.parse_args()
    anyio.run(main, options.calls)
