"""files.read of one 20,000-byte window: a 200 MB file against a 1 MiB file, before and after a change.

    .venv/bin/python bench/read_window.py --against 6728c33 [--rounds 3] [--calls 15]

Each revision's server (`mcp-tools serve` with the files namespace, over stdio with the SDK's
client) reads a window from the middle of both files, alternating; rounds interleave the two
revisions. The figure that matters is the ratio of the p50s (200 MB / 1 MiB): 1.0 means a window
costs the same whatever the file's size. The first read of each file by a fresh server is
reported on its own (no warm-up hides it): it is what a person waits for when opening a file.
The files are left untouched for a few seconds first, as a file is that someone reads (a file
changed in the last two seconds is hashed whole to version it).
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
from mcp import Client, StdioServerParameters
from revision import exported  # bench/revision.py, beside this script

WINDOW = 20_000
LINE = b"The quick brown fox jumps over the lazy dog while the files server keeps count.\n"


def write_file(path: Path, size: int) -> None:
    block = LINE * (1 << 20 // len(LINE) + 1)
    with path.open("wb") as handle:
        written = 0
        while written < size:
            part = block[: min(len(block), size - written)]
            handle.write(part)
            written += len(part)


async def p50s(source: Path, config: Path, calls: int, sizes: dict[str, int]) -> dict[str, float]:
    """p50 of each file's windows, and (as `first <name>`) the first read of each by this server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_TOOLS_")} | {"PYTHONPATH": str(source)}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_tools", "--config", str(config), "serve"], env=env, cwd=str(source)
    )
    samples: dict[str, list[float]] = {name: [] for name in sizes}
    firsts: dict[str, float] = {}
    async with Client(params) as client:
        await client.list_tools()
        for name, size in sizes.items():
            started = time.perf_counter()
            await client.call_tool("files_read", {"path": name, "offset": size // 2, "limit": WINDOW})
            firsts[f"first {name}"] = time.perf_counter() - started
        for _ in range(calls):
            for name, size in sizes.items():
                started = time.perf_counter()
                result = await client.call_tool("files_read", {"path": name, "offset": size // 2, "limit": WINDOW})
                samples[name].append(time.perf_counter() - started)
                assert not result.is_error, result.content
                assert len(result.structured_content["content"]) == WINDOW
    return {name: statistics.median(values) for name, values in samples.items()} | firsts


async def main(revisions: list[str], rounds: int, calls: int, big_mb: int) -> None:
    sizes = {"small.txt": 1 << 20, "big.txt": big_mb * 1_000_000}
    with tempfile.TemporaryDirectory(prefix="read-window-") as tmp:
        base = Path(tmp)
        root = base / "files"
        root.mkdir()
        for name, size in sizes.items():
            write_file(root / name, size)
        config = base / "config.toml"
        config.write_text(
            f'[server]\nnamespaces = ["files"]\nstate_dir = "{base / "state"}"\ndata_dir = "{base / "data"}"\n'
            f'[files]\nroot = "{root}"\n'
        )
        await anyio.sleep(3)  # the files settle, as files do that someone reads
        results: dict[str, list[dict[str, float]]] = {rev: [] for rev in revisions}
        with exported(revisions[0]) as first, exported(revisions[-1]) as last:
            sources = {revisions[0]: first, revisions[-1]: last}
            for _ in range(rounds):
                for rev in revisions:
                    results[rev].append(await p50s(sources[rev], config, calls, sizes))
    print(f"files.read of a {WINDOW:,}-byte window, p50 over {calls} calls, median of {rounds} rounds (range)")
    print(f"{'revision':12}{'read':>7}{'1 MiB (ms)':>12}{f'{big_mb} MB (ms)':>14}{'ratio':>8}   ratio range")
    for rev in revisions:
        for label, prefix in (("p50", ""), ("first", "first ")):
            small = statistics.median(r[prefix + "small.txt"] for r in results[rev])
            big = statistics.median(r[prefix + "big.txt"] for r in results[rev])
            ratios = [r[prefix + "big.txt"] / r[prefix + "small.txt"] for r in results[rev]]
            name = rev if rev != "." else "this"
            print(
                f"{name:12}{label:>7}{small * 1000:12.2f}{big * 1000:14.2f}{statistics.median(ratios):8.2f}"
                f"   {min(ratios):.2f}-{max(ratios):.2f}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="REV", help="also measure this git revision, interleaved")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--big-mb", type=int, default=200)
    options = parser.parse_args()
    revisions = [options.against, "."] if options.against else ["."]
    anyio.run(main, revisions, options.rounds, options.calls, options.big_mb)
