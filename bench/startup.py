"""Start-up and per-call overhead of mcp-tools against a bare MCPServer, measured side by side.

1. Spawn to first answered tools/list: `mcp-tools serve` with every namespace that needs no
   account (files, notes on a small vault, inbox) against a bare `MCPServer` with one tool.
2. p50/p95 of a low-risk call (`files.read` on a small file) through the policy layer (rules,
   validation, audit row) against the same handler, with the same output model, registered on
   a bare `MCPServer`.

Both run over stdio with the SDK's client, interleaved round by round; the figures are medians
over rounds. `--against REV` adds mcp-tools at a git revision, interleaved with this checkout, so
one run shows before and after. Every server runs from compiled bytecode (a fresh
PYTHONPYCACHEPREFIX, warmed by one untimed start), as an installed package does; `--source`
compiles every module on every start instead (PYTHONDONTWRITEBYTECODE), which costs mcp-tools
more than the bare server, whose SDK comes compiled from site-packages.

    python bench/startup.py [--rounds 7] [--calls 200] [--against 6728c33] [--source]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.measure import BARE_FILES_READ, percentile  # noqa: E402

SETTLE_SECONDS = 0.5
BARE_SERVER = BARE_FILES_READ + "server.run()\n"


def child_env(source: Path, pycache: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_TOOLS_")}
    env["PYTHONPATH"] = str(source)
    if pycache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def ours(config: Path, source: Path, pycache: Path | None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_tools", "--config", str(config), "serve"],
        env=child_env(source, pycache),
        cwd=str(source),
    )


def bare(script: Path, root: Path, pycache: Path | None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=[str(script), str(root)], env=child_env(ROOT, pycache), cwd=str(ROOT)
    )


async def time_to_tools(params: StdioServerParameters) -> tuple[float, int]:
    started = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        tools = await client.list_tools()
        elapsed = time.perf_counter() - started
    return elapsed, len(tools.tools)


async def call_latencies(params: StdioServerParameters, calls: int) -> list[float]:
    async with Client(params, mode="legacy") as client:
        for _ in range(20):  # warm up
            await client.call_tool("files_read", {"path": "note.txt"})
        samples = []
        for _ in range(calls):
            started = time.perf_counter()
            result = await client.call_tool("files_read", {"path": "note.txt"})
            samples.append(time.perf_counter() - started)
            assert not result.is_error, result.content
    return samples


async def main(rounds: int, calls: int, against: str | None, source_only: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp, exported(against or ".") as before:
        base = Path(tmp)
        pycache = None if source_only else base / "pycache"
        files_root = base / "files"
        files_root.mkdir()
        (files_root / "note.txt").write_text("hello from the benchmark\n" * 40)
        vault = base / "vault"
        vault.mkdir()
        for index in range(20):
            (vault / f"note {index}.md").write_text(f"# Note {index}\n\nSome text with a [[note {index + 1}]] link.\n")

        def config(name: str) -> Path:
            """One per checkout: each keeps its own definitions cache and notes index."""
            path = base / f"config-{name}.toml"
            path.write_text(
                f'[server]\nnamespaces = ["files", "notes", "inbox"]\nstate_dir = "{base / f"state-{name}"}"\n'
                f'data_dir = "{base / "data"}"\n[files]\nroot = "{files_root}"\n[notes]\nvault = "{vault}"\n'
            )
            return path

        script = base / "bare_server.py"
        script.write_text(BARE_SERVER)
        servers = {"mcp-tools": ours(config("this"), ROOT, pycache), "bare": bare(script, files_root, pycache)}
        if against:
            servers = {against: ours(config("before"), before, pycache), **servers}
        for params in servers.values():  # untimed: compiles bytecode and fills the definitions cache
            await time_to_tools(params)

        starts: dict[str, list[float]] = {name: [] for name in servers}
        tool_counts: dict[str, int] = {}
        for _ in range(rounds):
            for name, params in servers.items():
                elapsed, tool_counts[name] = await time_to_tools(params)
                starts[name].append(elapsed)
                await anyio.sleep(SETTLE_SECONDS)  # let the process finish exiting: 2 cores are easily shared
        p50s: dict[str, list[float]] = {name: [] for name in servers}
        p95s: dict[str, list[float]] = {name: [] for name in servers}
        for _ in range(rounds):
            for name, params in servers.items():
                samples = await call_latencies(params, calls)
                p50s[name].append(percentile(samples, 0.5))
                p95s[name].append(percentile(samples, 0.95))

    med = statistics.median
    print(
        f"rounds: {rounds}, calls per round: {calls} (medians over rounds), "
        + ("modules compiled on every start" if source_only else "from compiled bytecode")
    )
    header = ("spawn->tools/list s", 20), ("ratio", 7), ("read p50 ms", 13), ("ratio", 7), ("read p95 ms", 13)
    print(f"{'':28}" + "".join(f"{label:>{width}}" for label, width in header) + f"{'ratio':>7}")
    for name in servers:
        print(
            f"{name + f' ({tool_counts[name]} tools)':28}{med(starts[name]):20.3f}"
            f"{med(starts[name]) / med(starts['bare']):7.2f}"
            f"{med(p50s[name]) * 1000:13.3f}{med(p50s[name]) / med(p50s['bare']):7.2f}"
            f"{med(p95s[name]) * 1000:13.3f}{med(p95s[name]) / med(p95s['bare']):7.2f}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--against", metavar="REV", help="also run mcp-tools at this git revision, interleaved")
    parser.add_argument("--source", action="store_true", help="no bytecode cache: compile every module on every start")
    options = parser.parse_args()
    anyio.run(main, options.rounds, options.calls, options.against, options.source)
