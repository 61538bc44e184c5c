"""tools/call over streamable HTTP with 32 concurrent clients: mcp-tools against a bare SDK server.

    .venv/bin/python bench/http_calls.py [--clients 32] [--calls 40] [--rounds 3] [--against 6728c33]

Each server runs in its own process on a loopback port under uvicorn (warnings only, no access
log): `mcp-tools serve --http` with the files namespace and a bearer token (so the token check,
the policy gate, validation, scrubbing and the audit row are all in), and a bare `MCPServer`
whose one tool calls the same `files.read` handler with the same output model. The clients
(the SDK's `Client`, one session each) run in this process and call `files.read` on a small
file `--calls` times each, all at once. Per round and server: p50 and p95 of the call latency,
calls per second, and the server process's CPU time per call (user + system, from /proc: on
2 shared cores the steadiest of the four); printed are the medians over rounds, which interleave
the servers, with ratios against the bare server. `--against REV` adds mcp-tools at a git
revision.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from revision import exported  # bench/revision.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.measure import BARE_FILES_READ, percentile  # noqa: E402
from tests.processes import free_port  # noqa: E402

TOKEN = "tok-bench-0123456789abcdef"
CLIENT_TIMEOUT = 300  # seconds; a loaded machine can stall a call for tens of seconds
# Both servers keep an idle connection this long: under load the first clients wait longer than the
# default 5 s for the last to warm up, and a connection closed just as a call reuses it is a reset.
KEEP_ALIVE = 120
BARE_SERVER = BARE_FILES_READ + textwrap.dedent(
    f"""
    import uvicorn

    app = server.streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning", timeout_keep_alive={KEEP_ALIVE})
    """
)


def start(command: list[str], source: Path, port: int, log: Path, wait: float) -> subprocess.Popen[bytes]:
    """Start a server and wait until it answers HTTP on `port` (any status), at most `wait` seconds.

    Its stderr goes to `log` (a pipe nobody reads could fill and stall it); on exit or timeout the
    error names the server's command and quotes the end of that log."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_TOOLS_")} | {"PYTHONPATH": str(source)}
    with log.open("wb") as stderr:
        process = subprocess.Popen(command, env=env, cwd=str(source), stdout=subprocess.DEVNULL, stderr=stderr)
    started = time.monotonic()
    while time.monotonic() - started < wait:
        if process.poll() is not None:
            raise RuntimeError(f"{command[2:4]} exited with {process.returncode}:\n{tail(log)}")
        try:
            httpx2.post(f"http://127.0.0.1:{port}/mcp", timeout=5)
            return process
        except httpx2.HTTPError:
            time.sleep(0.2)
    process.kill()
    process.wait()
    raise TimeoutError(f"{command[2:4]} did not answer on port {port} within {wait:.0f} s:\n{tail(log)}")


def tail(log: Path, lines: int = 20) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) or "(nothing on stderr)"


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def run_clients(
    url: str, clients: int, calls: int, token: str | None, pid: int | None = None
) -> tuple[list[float], float, float]:
    """Latencies and calls per second of the timed calls, and the server's CPU seconds per call."""
    latencies: list[float] = []
    cpu_at_start = [0.0]
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    ready = anyio.Event()
    waiting = [clients]

    async def one_client() -> None:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=CLIENT_TIMEOUT) as http,
            Client(streamable_http_client(url, http_client=http)) as client,  # type: ignore[arg-type]
        ):
            for _ in range(3):  # warm up, not recorded
                await client.call_tool("files_read", {"path": "note.txt"})
            waiting[0] -= 1
            if waiting[0] == 0:
                cpu_at_start[0] = cpu_seconds(pid) if pid else 0.0
                ready.set()
            await ready.wait()
            for _ in range(calls):
                started = time.perf_counter()
                result = await client.call_tool("files_read", {"path": "note.txt"})
                latencies.append(time.perf_counter() - started)
                assert not result.is_error, result.content

    async with anyio.create_task_group() as group:
        for _ in range(clients):
            group.start_soon(one_client)
        await ready.wait()
        started = time.perf_counter()
    elapsed = time.perf_counter() - started
    cpu = (cpu_seconds(pid) - cpu_at_start[0]) / len(latencies) if pid else 0.0
    return latencies, len(latencies) / elapsed, cpu


async def main(clients: int, calls: int, rounds: int, against: str | None, wait: float) -> None:
    with tempfile.TemporaryDirectory() as tmp, exported(against or ".") as before:
        base = Path(tmp)
        files_root = base / "files"
        files_root.mkdir()
        (files_root / "note.txt").write_text("hello from the benchmark\n" * 40)
        config = base / "config.toml"
        config.write_text(
            f'[server]\nnamespaces = ["files"]\nstate_dir = "{base / "state"}"\ndata_dir = "{base / "data"}"\n'
            f'[files]\nroot = "{files_root}"\n[http]\nkeep_alive_seconds = {KEEP_ALIVE}\n'
            f'[http.tokens]\nbench = "{TOKEN}"\n'
        )
        script = base / "bare_server.py"
        script.write_text(BARE_SERVER)

        def ours(port: int) -> list[str]:
            return [sys.executable, "-m", "mcp_tools", "--config", str(config), "serve", "--http", "--port", str(port)]

        servers = {
            "mcp-tools": (lambda port: ours(port), ROOT, TOKEN),
            "bare": (lambda port: [sys.executable, str(script), str(files_root), str(port)], ROOT, None),
        }
        if against:
            servers = {against: (lambda port: ours(port), before, TOKEN), **servers}
        figures: dict[str, dict[str, list[float]]] = {
            name: {"p50": [], "p95": [], "rate": [], "cpu": []} for name in servers
        }
        for round_number in range(rounds):
            for name, (command, source, token) in servers.items():
                for attempt in (1, 2):  # a round that fails (a reset under load) is run once more
                    port = free_port()
                    process = start(command(port), source, port, base / "server.log", wait)
                    try:
                        url = f"http://127.0.0.1:{port}/mcp"
                        latencies, rate, cpu = await run_clients(url, clients, calls, token, process.pid)
                        break
                    except Exception as exc:  # reported, then run once more or raised
                        print(f"round {round_number + 1}, {name}, attempt {attempt} failed: {exc!r}", file=sys.stderr)
                        if attempt == 2:
                            raise
                    finally:
                        process.terminate()
                        process.wait(timeout=60)
                figures[name]["p50"].append(percentile(latencies, 0.5))
                figures[name]["p95"].append(percentile(latencies, 0.95))
                figures[name]["rate"].append(rate)
                figures[name]["cpu"].append(cpu)
                print(
                    f"round {round_number + 1} {name}: p50 {percentile(latencies, 0.5) * 1000:.1f} ms, "
                    f"p95 {percentile(latencies, 0.95) * 1000:.1f} ms, {rate:.0f} calls/s",
                    file=sys.stderr,
                )
                await anyio.sleep(0.5)

    med = statistics.median
    bare = {key: med(values) for key, values in figures["bare"].items()}
    print(f"{clients} clients x {calls} files.read calls over streamable HTTP, medians of {rounds} interleaved rounds")
    columns = ("p50 ms", "ratio", "p95 ms", "ratio", "calls/s", "ratio", "CPU ms/call", "ratio")
    print(f"{'':14}" + "".join(f"{label:>{max(9, len(label) + 2)}}" for label in columns))
    for name, values in figures.items():
        p50, p95, rate, cpu = (med(values[key]) for key in ("p50", "p95", "rate", "cpu"))
        print(
            f"{name:14}{p50 * 1000:9.1f}{p50 / bare['p50']:9.2f}{p95 * 1000:9.1f}{p95 / bare['p95']:9.2f}"
            f"{rate:9.0f}{rate / bare['rate']:9.2f}{cpu * 1000:13.3f}{ratio(cpu, bare['cpu']):>9}"
        )


def ratio(value: float, baseline: float) -> str:
    """A ratio, or n/a where the baseline measured nothing (too few calls for the CPU clock)."""
    return f"{value / baseline:.2f}" if baseline > 0 else "n/a"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", metavar="REV", help="also run mcp-tools at this git revision, interleaved")
    parser.add_argument("--wait", type=float, default=300, help="seconds a server may take to start (default 300)")
    options = parser.parse_args()
    anyio.run(main, options.clients, options.calls, options.rounds, options.against, options.wait)
