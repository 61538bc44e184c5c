"""Start-up and per-call overhead of mcp-tools against a bare MCPServer, measured side by side.

1. Spawn to first answered tools/list: `mcp-tools serve` with every namespace that needs no
   account (files, notes on a small vault, inbox) against a bare `MCPServer` with one tool.
2. p50/p95 of a low-risk call (`files.read` on a small file) through the policy layer (rules,
   validation, audit row) against the same handler, with the same output model, registered on
   a bare `MCPServer`.

Both run over stdio with the SDK's client, interleaved round by round; the figures are medians
over rounds. Run: `python bench/startup.py [--rounds 7] [--calls 200]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
SETTLE_SECONDS = 0.5
BARE_SERVER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from mcp.server.mcpserver import MCPServer
    from mcp_tools.servers.files import NAMESPACE
    from mcp_tools.servers.files.models import FilesConfig, ReadResult
    from mcp_tools.tooling import CallContext, Environment

    root = Path(sys.argv[1])
    service = NAMESPACE.create(FilesConfig(root=str(root)), Environment(root, root))
    spec = next(tool for tool in NAMESPACE.tools if tool.name == "files.read")
    server = MCPServer("bare")

    @server.tool(name="files_read")
    async def files_read(path: str) -> ReadResult:
        return await spec.handler(service, spec.input_model(path=path), CallContext())

    server.run()
    """
)


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_TOOLS_")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def ours(config: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_tools", "--config", str(config), "serve"], env=child_env()
    )


def bare(script: Path, root: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(script), str(root)], env=child_env())


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


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def main(rounds: int, calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        files_root = base / "files"
        files_root.mkdir()
        (files_root / "note.txt").write_text("hello from the benchmark\n" * 40)
        vault = base / "vault"
        vault.mkdir()
        for index in range(20):
            (vault / f"note {index}.md").write_text(f"# Note {index}\n\nSome text with a [[note {index + 1}]] link.\n")
        config = base / "config.toml"
        config.write_text(
            f'[server]\nservers = ["files", "notes", "inbox"]\nstate_dir = "{base / "state"}"\n'
            f'data_dir = "{base / "data"}"\n[files]\nroot = "{files_root}"\n[notes]\nvault = "{vault}"\n'
        )
        script = base / "bare_server.py"
        script.write_text(BARE_SERVER)
        ours_params, bare_params = ours(config), bare(script, files_root)

        start_ours, start_bare = [], []
        tool_counts = (0, 0)
        for _ in range(rounds):
            a, n_ours = await time_to_tools(ours_params)
            await anyio.sleep(SETTLE_SECONDS)  # let the last process finish exiting: 2 cores are easily shared
            b, n_bare = await time_to_tools(bare_params)
            await anyio.sleep(SETTLE_SECONDS)
            start_ours.append(a)
            start_bare.append(b)
            tool_counts = (n_ours, n_bare)
        p50_ours, p95_ours, p50_bare, p95_bare = [], [], [], []
        for _ in range(rounds):
            samples_ours = await call_latencies(ours_params, calls)
            samples_bare = await call_latencies(bare_params, calls)
            p50_ours.append(percentile(samples_ours, 0.5))
            p95_ours.append(percentile(samples_ours, 0.95))
            p50_bare.append(percentile(samples_bare, 0.5))
            p95_bare.append(percentile(samples_bare, 0.95))

    med = statistics.median
    print(f"rounds: {rounds}, calls per round: {calls} (medians over rounds)")
    print(f"{'':34}{'mcp-tools':>12}{'bare':>12}{'ratio':>9}")
    print(
        f"{'spawn -> tools/list (s)':34}{med(start_ours):12.3f}{med(start_bare):12.3f}"
        f"{med(start_ours) / med(start_bare):9.2f}   ({tool_counts[0]} vs {tool_counts[1]} tools)"
    )
    for label, a, b in (("files.read p50 (ms)", p50_ours, p50_bare), ("files.read p95 (ms)", p95_ours, p95_bare)):
        print(f"{label:34}{med(a) * 1000:12.3f}{med(b) * 1000:12.3f}{med(a) / med(b):9.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=200)
    options = parser.parse_args()
    anyio.run(main, options.rounds, options.calls)
