"""Latency of files.read and files.edit over stdio, beside a bare MCPServer doing a plain read/replace.

Run: .venv/bin/python bench/files.py [--calls N] [--repeats R] [--size BYTES] [--bare-only]

Both servers are real subprocesses spoken to over stdio by the SDK's `Client`. Ours is
`python -m mcp_tools --config CFG serve` with only the files namespace (policy gate, audit,
sandbox, hashing and the diff included); the bare one is an `MCPServer` with two plain tools.
Each repeat runs N calls of each operation on a 100 KB text file and records p50 and p95; the
figures printed are the medians of those over the repeats, with ratios ours / bare.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(ROOT))

from mcp import Client, StdioServerParameters  # noqa: E402

from bench.measure import percentile  # noqa: E402

BARE_SERVER = textwrap.dedent(
    '''
    """A bare MCPServer: plain read and replace, no checks, no policy."""
    import sys
    from pathlib import Path

    from mcp.server.mcpserver import MCPServer

    ROOT = Path(sys.argv[1])
    server = MCPServer("bare-files")


    @server.tool()
    def read(path: str) -> str:
        return (ROOT / path).read_text()


    @server.tool()
    def replace(path: str, old: str, new: str) -> str:
        target = ROOT / path
        target.write_text(target.read_text().replace(old, new, 1))
        return "ok"


    server.run()
    '''
)


def make_text(size: int) -> str:
    """Prose-like lines with one unique marker in the middle, about `size` bytes."""
    line = "The quick brown fox jumps over the lazy dog while the files server keeps count.\n"
    lines = [f"{index:05d} {line}" for index in range(size // (len(line) + 6) + 1)]
    lines[len(lines) // 2] = "MARKER_A sits here exactly once.\n"
    return "".join(lines)[: size - 1] + "\n"


async def time_calls(call: Callable[[int], Awaitable[Any]], count: int) -> list[float]:
    await call(-1)  # warm-up, not recorded
    samples: list[float] = []
    for index in range(count):
        started = time.perf_counter()
        await call(index)
        samples.append(time.perf_counter() - started)
    return samples


def check(result: Any) -> Any:
    if result.is_error:
        raise RuntimeError(f"benchmark call failed: {result.content}")
    return result


class Markers:
    """Which marker the file holds now; each edit swaps it, so the file stays valid across runs."""

    def __init__(self) -> None:
        self.current = "MARKER_A"

    def flip(self) -> tuple[str, str]:
        old = self.current
        self.current = "MARKER_B" if old == "MARKER_A" else "MARKER_A"
        return old, self.current


async def measure_ours(config: Path, calls: int, markers: Markers) -> dict[str, list[float]]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_tools", "--config", str(config), "serve"], cwd=str(ROOT)
    )
    async with Client(params) as client:

        async def read(_: int) -> Any:
            return check(await client.call_tool("files_read", {"path": "bench.txt"}))

        async def edit(_: int) -> Any:
            old, new = markers.flip()
            return check(
                await client.call_tool(
                    "files_edit", {"path": "bench.txt", "edits": [{"old_string": old, "new_string": new}]}
                )
            )

        return {"read": await time_calls(read, calls), "edit": await time_calls(edit, calls)}


async def measure_bare(root: Path, script: Path, calls: int, markers: Markers) -> dict[str, list[float]]:
    params = StdioServerParameters(command=sys.executable, args=[str(script), str(root)], cwd=str(ROOT))
    async with Client(params) as client:

        async def read(_: int) -> Any:
            return check(await client.call_tool("read", {"path": "bench.txt"}))

        async def replace(_: int) -> Any:
            old, new = markers.flip()
            return check(await client.call_tool("replace", {"path": "bench.txt", "old": old, "new": new}))

        return {"read": await time_calls(read, calls), "edit": await time_calls(replace, calls)}


def write_config(folder: Path, root: Path) -> Path:
    config = folder / "mcp-tools.toml"
    config.write_text(
        textwrap.dedent(
            f"""
            [server]
            namespaces = ["files"]
            state_dir = "{folder / "state"}"
            data_dir = "{folder / "data"}"

            [files]
            root = "{root}"
            """
        )
    )
    return config


def summarise(runs: list[dict[str, list[float]]], operation: str) -> tuple[float, float]:
    p50 = statistics.median(percentile(run[operation], 0.50) for run in runs)
    p95 = statistics.median(percentile(run[operation], 0.95) for run in runs)
    return p50 * 1000, p95 * 1000


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100, help="calls per operation per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--size", type=int, default=100 * 1024, help="file size in bytes")
    parser.add_argument("--bare-only", action="store_true", help="measure the bare server alone")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="files-bench-") as temp:
        folder = Path(temp)
        ours_root, bare_root = folder / "ours", folder / "bare"
        text = make_text(options.size)
        for root in (ours_root, bare_root):
            root.mkdir()
            (root / "bench.txt").write_text(text)
        script = folder / "bare_server.py"
        script.write_text(BARE_SERVER)
        config = write_config(folder, ours_root)

        bare_markers, our_markers = Markers(), Markers()
        ours: list[dict[str, list[float]]] = []
        bare: list[dict[str, list[float]]] = []
        for repeat in range(options.repeats):
            bare.append(await measure_bare(bare_root, script, options.calls, bare_markers))
            if not options.bare_only:
                ours.append(await measure_ours(config, options.calls, our_markers))
            print(f"repeat {repeat + 1}/{options.repeats} done", file=sys.stderr)

    print(
        f"files on a {options.size // 1024} KB text file over stdio: {options.calls} calls x "
        f"{options.repeats} repeats, medians of per-repeat p50/p95 (ms)"
    )
    print(f"{'operation':<10}{'bare p50':>10}{'bare p95':>10}{'ours p50':>10}{'ours p95':>10}{'x p50':>8}{'x p95':>8}")
    for operation in ("read", "edit"):
        bare_p50, bare_p95 = summarise(bare, operation)
        if ours:
            ours_p50, ours_p95 = summarise(ours, operation)
            print(
                f"{operation:<10}{bare_p50:>10.2f}{bare_p95:>10.2f}{ours_p50:>10.2f}{ours_p95:>10.2f}"
                f"{ours_p50 / bare_p50:>8.2f}{ours_p95 / bare_p95:>8.2f}"
            )
        else:
            print(f"{operation:<10}{bare_p50:>10.2f}{bare_p95:>10.2f}")


if __name__ == "__main__":
    asyncio.run(main())
