"""The PostgreSQL state store against SQLite, and replicas behind nginx, measured side by side.

1. Per-call overhead as an HTTP client sees it: one `serve --http` with its state in SQLite and
   one with it in PostgreSQL (Debian's server on 127.0.0.1), the SDK's client calling each in
   turn over streamable HTTP, one call at a time. A low tool (`demo.echo`; the audit row is the
   state work), and an approval cycle: the call asks (`approval_required`), the person approves
   (`mcp-tools approvals approve`, here its store call), the retry consumes the approval. Several
   replicas can share a state only over HTTP, so this is the overhead a deployment pays.
2. The same two in process, with no transport: the SDK's client on memory streams to the server
   object. This isolates the store: what a call costs beyond the store is only the gate and the
   SDK, so the ratio shows the database round trips themselves.
3. Start-up (spawn to a listed tool set, `mcp-tools tools`) with `[state] url` set against without.
4. 32 clients through nginx to two `serve --http` replicas against one replica, calls per second.

Each pair runs interleaved round by round; figures are medians over rounds, and the ratios are
PostgreSQL / SQLite (goal: at most 1.2x) and two replicas / one. Beside the times, the round trips
to the database a low call and an approval cycle make (counted, so they do not depend on how busy
the machine is).
Run: `python bench/state.py [--rounds 5] [--calls 200] [--clients 32] [--parts http,calls,startup,replicas]`.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import anyio
import httpx2
from mcp import Client

from mcp_tools.composition.app import build_app
from mcp_tools.core.config import load_config, parse_config
from mcp_tools.policy.decisions import Decisions
from mcp_tools.servers import CATALOG
from mcp_tools.transports.mcp_server import build_server
from tests.harness import failure
from tests.nginx import nginx
from tests.postgres import PostgresServer
from tests.processes import DEMO_ENTRY, ROOT, bearer, child_env, demo_config, free_port, http_server

CATALOG["demo"] = "tests.demo_namespace"
SECRET = "bench-secret-of-at-least-thirty-two-bytes"
TOKEN = "tok-bench-0123456789"


def settings(root: Path, url: str | None) -> dict[str, Any]:
    chosen: dict[str, Any] = {
        "server": {
            "namespaces": ["demo"],
            "tools": ["*"],
            "state_dir": str(root / "state"),
            "data_dir": str(root / "d"),
        },
        "policy": {"on_no_elicitation": "approve_out_of_band"},
        "approvals": {"page": {"enabled": False}},
    }
    if url:
        chosen["state"] = {"url": url, "secret": SECRET}
    return chosen


ROUND_TRIPS = [0]


def count_round_trips() -> None:
    """Count the exchanges with the server the state store waits for (a wait that needs no I/O,
    such as the commit of an autocommit connection, is none), not the listener's."""
    import threading

    import psycopg

    wait = psycopg.Connection.wait

    def counted(self: Any, gen: Any, *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name == "mcp-tools-state-listen":
            return wait(self, gen, *args, **kwargs)

        def watched() -> Any:
            answer, first = None, True
            while True:
                try:
                    step = gen.send(answer)
                except StopIteration as done:
                    return done.value
                if first:
                    ROUND_TRIPS[0] += 1
                    first = False
                answer = yield step

        return wait(self, watched(), *args, **kwargs)

    psycopg.Connection.wait = counted  # type: ignore[method-assign]


async def per_call(app: Any, calls: int, cycle: bool) -> float:
    """Seconds per low call, or per approval cycle."""
    server = build_server(app, "bench")
    decisions = Decisions(app.store, 600)
    async with app.running(), Client(server) as client:
        await client.call_tool("demo_echo", {"text": "warm"})
        ROUND_TRIPS[0] = 0
        started = time.perf_counter()
        for index in range(calls):
            if not cycle:
                await client.call_tool("demo_echo", {"text": "x"})
                continue
            asked = await client.call_tool("demo_erase", {"target": f"t{index}-{time.perf_counter_ns()}"})
            approval_id = failure(asked)["approval_id"]
            decisions.decide(approval_id, True, "cli")
            arguments = app.store.get_approval(approval_id).args_display
            done = await client.call_tool("demo_erase", arguments)
            assert not done.is_error, done
        return (time.perf_counter() - started) / calls


def startup(config: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, DEMO_ENTRY, "--config", str(config), "tools", "--json"],
        check=True,
        capture_output=True,
        env=child_env(),
        cwd=str(ROOT),
    )
    return time.perf_counter() - started


async def throughput(base: str, clients: int, seconds: float) -> float:
    """Calls per second from `clients` concurrent HTTP clients (2026-07-28, no session)."""
    from mcp.client.streamable_http import streamable_http_client

    done = 0

    async def one() -> None:
        nonlocal done
        async with (
            httpx2.AsyncClient(headers=bearer(TOKEN), timeout=60) as http,
            Client(streamable_http_client(base + "/mcp", http_client=http), mode="2026-07-28") as client,  # type: ignore[arg-type]
        ):
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                await client.call_tool("demo_echo", {"text": "x"})
                done += 1

    started = time.monotonic()
    async with anyio.create_task_group() as group:
        for _ in range(clients):
            group.start_soon(one)
    return done / (time.monotonic() - started)


def interleave(rounds: int, pair: dict[str, Callable[[], float]]) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in pair}
    for _ in range(rounds):
        for name, run in pair.items():
            samples[name].append(run())
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--parts", default="http,calls,startup,replicas", help="which measurements to run")
    args = parser.parse_args()
    count_round_trips()
    server = PostgresServer()
    server.start()
    work = Path(tempfile.mkdtemp(prefix="bench-state-"))
    try:
        url = server.create_database()

        round_trips: dict[str, float] = {}

        def in_process(engine: str, cycle: bool) -> Callable[[], float]:
            def run() -> float:
                root = work / f"{engine}-{time.perf_counter_ns()}"
                app = build_app(parse_config(settings(root, url if engine == "postgresql" else None), {}))
                calls = args.calls if not cycle else max(10, args.calls // 5)
                try:
                    return anyio.run(per_call, app, calls, cycle)
                finally:
                    round_trips[engine] = ROUND_TRIPS[0] / calls
                    app.store.close()

            return run

        parts = set(args.parts.split(","))
        if "http" in parts:
            http_ratio(work, url, args)
        for label, cycle in (("low call", False), ("approval cycle", True)) if "calls" in parts else ():
            medians = interleave(args.rounds, {e: in_process(e, cycle) for e in ("sqlite", "postgresql")})
            print(
                f"{label} in process: sqlite {medians['sqlite'] * 1e3:.2f} ms, "
                f"postgresql {medians['postgresql'] * 1e3:.2f} ms, "
                f"ratio {medians['postgresql'] / medians['sqlite']:.2f}x, "
                f"{round_trips['postgresql']:.1f} round trips to PostgreSQL"
            )

        if "startup" in parts:
            startup_ratio(work, url, args.rounds)
        if "replicas" in parts:
            replicas_ratio(work, url, args)
    finally:
        server.close()


async def http_calls(base: str, store: Any, calls: int, cycle: bool) -> float:
    """Seconds per low call, or per approval cycle, from one client over streamable HTTP."""
    from mcp.client.streamable_http import streamable_http_client

    decisions = Decisions(store, 600)
    async with (
        httpx2.AsyncClient(headers=bearer(TOKEN), timeout=60) as http,
        Client(streamable_http_client(base + "/mcp", http_client=http), mode="2026-07-28") as client,  # type: ignore[arg-type]
    ):
        await client.call_tool("demo_echo", {"text": "warm"})
        started = time.perf_counter()
        for index in range(calls):
            if not cycle:
                await client.call_tool("demo_echo", {"text": "x"})
                continue
            arguments = {"target": f"t{index}-{time.perf_counter_ns()}"}
            asked = await client.call_tool("demo_erase", arguments)
            decisions.decide(failure(asked)["approval_id"], True, "cli")
            done = await client.call_tool("demo_erase", arguments)
            assert not done.is_error, done
        return (time.perf_counter() - started) / calls


def http_ratio(work: Path, url: str, args: argparse.Namespace) -> None:
    """One server on each engine, called in turn round by round, one call at a time."""
    from mcp_tools.state import open_state_store

    common = f'[http.tokens]\nbench = "{TOKEN}"\n[policy]\non_no_elicitation = "approve_out_of_band"\n'
    common += "[approvals.page]\nenabled = false\n"
    configs = {
        "sqlite": demo_config(_mkdir(work / "http-sqlite"), common),
        "postgresql": demo_config(_mkdir(work / "http-pg"), common + f'[state]\nurl = "{url}"\nsecret = "{SECRET}"\n'),
    }
    with ExitStack() as stack:
        bases = {engine: stack.enter_context(http_server(config)) for engine, config in configs.items()}
        stores = {engine: open_state_store(load_config(config)) for engine, config in configs.items()}
        for store in stores.values():
            stack.callback(store.close)
        for label, cycle in (("low call", False), ("approval cycle", True)):
            calls = args.calls if not cycle else max(10, args.calls // 5)

            def over_http(engine: str, calls: int = calls, cycle: bool = cycle) -> Callable[[], float]:
                return lambda: anyio.run(http_calls, bases[engine], stores[engine], calls, cycle)

            medians = interleave(args.rounds, {engine: over_http(engine) for engine in configs})
            ratio = medians["postgresql"] / medians["sqlite"]
            print(
                f"{label} over HTTP: sqlite {medians['sqlite'] * 1e3:.2f} ms, "
                f"postgresql {medians['postgresql'] * 1e3:.2f} ms, ratio {ratio:.2f}x"
            )


def startup_ratio(work: Path, url: str, rounds: int) -> None:
    plain = demo_config(_mkdir(work / "plain"))
    shared = demo_config(_mkdir(work / "shared"), f'[state]\nurl = "{url}"\nsecret = "{SECRET}"\n')
    medians = interleave(rounds, {"without": lambda: startup(plain), "with url": lambda: startup(shared)})
    print(
        f"start-up (mcp-tools tools): without {medians['without']:.2f} s, with [state] url "
        f"{medians['with url']:.2f} s, ratio {medians['with url'] / medians['without']:.2f}x"
    )


def replicas_ratio(work: Path, url: str, args: argparse.Namespace) -> None:
    tokens = f'[http.tokens]\nbench = "{TOKEN}"\n[state]\nurl = "{url}"\nsecret = "{SECRET}"\n'
    configs = [demo_config(_mkdir(work / name), tokens) for name in ("r1", "r2")]
    ports = [free_port(), free_port()]
    with ExitStack() as stack:
        for config, port in zip(configs, ports, strict=True):
            stack.enter_context(http_server(config, port=port))
        one = stack.enter_context(nginx(work / "nginx-one", [f"127.0.0.1:{ports[0]}"]))
        two = stack.enter_context(nginx(work / "nginx-two", [f"127.0.0.1:{port}" for port in ports]))
        medians = interleave(
            args.rounds,
            {
                "one": lambda: anyio.run(throughput, one, args.clients, args.seconds),
                "two": lambda: anyio.run(throughput, two, args.clients, args.seconds),
            },
        )
    print(
        f"{args.clients} clients through nginx: one replica {medians['one']:.0f} calls/s, "
        f"two replicas {medians['two']:.0f} calls/s, ratio {medians['two'] / medians['one']:.2f}x"
    )


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


if __name__ == "__main__":
    main()
