"""What the fences of the power tools cost, each against its bare floor, measured side by side.

Run: .venv/bin/python bench/power_tools.py [--rounds N]

- terminal: `true` through the policy gate, with bubblewrap (when it works here) and without,
  against a bare `asyncio` subprocess;
- http: a GET through the gate (allowlist, resolve-and-check, pinned connection, redaction)
  against a bare `httpx` GET to the same local server;
- search: `search.all` over files, notes and inbox against the three searches run one by one.

Rounds are interleaved; the figures are medians and their ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp_tools.composition.app import build_app  # noqa: E402
from mcp_tools.core.config import parse_config  # noqa: E402
from mcp_tools.policy.gate import Answer, Caller  # noqa: E402
from tests.servers.http_requests.fixtures import fixed_resolver, local_server  # noqa: E402


class Yes:
    async def ask(self, request: Any) -> Answer:
        return Answer.ACCEPT


def app_for(folder: Path, **sections: Any) -> Any:
    raw = {"server": {"state_dir": str(folder / "state"), "data_dir": str(folder / "data")}, **sections}
    return build_app(parse_config(raw, {"PATH": "/usr/bin:/bin"}))


async def timed(call: Any) -> float:
    started = time.perf_counter()
    await call()
    return time.perf_counter() - started


def report(label: str, ours: list[float], floor: list[float]) -> None:
    a, b = statistics.median(ours) * 1000, statistics.median(floor) * 1000
    print(f"{label:44}{a:10.2f} ms{b:10.2f} ms{a / b:9.2f}x")


async def terminal(folder: Path, rounds: int) -> None:
    runs: dict[str, Any] = {}
    for isolation in ("bwrap", "none"):
        try:
            app = app_for(folder / isolation, terminal={"enabled": True, "allow": ["true"], "isolation": isolation})
        except Exception as error:  # bwrap unusable here
            print(f"terminal ({isolation}): skipped ({error})")
            continue
        tool = app.find_tool("terminal.execute")
        if tool is None:
            status = next(s for s in app.statuses if s.name == "terminal")
            print(f"terminal ({isolation}): skipped ({status.reason})")
            continue
        runs[isolation] = (app, tool)
    samples: dict[str, list[float]] = {name: [] for name in [*runs, "bare"]}

    async def bare() -> None:
        process = await asyncio.create_subprocess_exec("true")
        await process.wait()

    call = {"argv": ["true"]}
    for _ in range(rounds):
        for name, (app, tool) in runs.items():
            samples[name].append(
                await timed(lambda app=app, tool=tool: app.gate.call(tool, "x", call, Caller(asker=Yes())))
            )
        samples["bare"].append(await timed(bare))
    for name in runs:
        report(f"terminal_execute `true` ({name}) vs bare", samples[name], samples["bare"])


async def http(folder: Path, rounds: int) -> None:
    import httpx

    with local_server("127.0.0.2") as (httpd, _):
        port = httpd.server_address[1]
        outbound = {
            "enabled": True,
            "allow_hosts": ["api.test"],
            "allow_networks": ["127.0.0.2/32"],
            "allow_plain_http": True,
        }
        app = app_for(folder / "http", http={"outbound": outbound})
        app.services["http"].resolver = fixed_resolver({"api.test": ["127.0.0.2"]})
        tool = app.find_tool("http.request")
        ours: list[float] = []
        floor: list[float] = []

        async def bare() -> None:
            async with httpx.AsyncClient(trust_env=False) as client:
                await client.get(f"http://127.0.0.2:{port}/echo")

        call = {"url": f"http://api.test:{port}/echo"}
        for _ in range(rounds):
            ours.append(await timed(lambda: app.gate.call(tool, "x", call, Caller())))
            floor.append(await timed(bare))
        report("http_request GET vs bare httpx GET", ours, floor)


async def search(folder: Path, rounds: int) -> None:
    vault = folder / "vault"
    vault.mkdir(parents=True)
    for number in range(200):
        (vault / f"note-{number}.md").write_text(f"# Note {number}\n\nglacier survey {number} radar budget\n")
    app = app_for(folder / "search", notes={"vault": str(vault), "watch": False})
    files = folder / "search" / "data" / "files"
    for number in range(200):
        (files / f"file-{number}.txt").write_text(f"file {number} about the glacier budget\n")
    for number in range(200):
        raw = f"From: a@example.org\r\nSubject: glacier {number}\r\nMessage-ID: <{number}@x>\r\n\r\nsurvey\r\n"
        await app.services["inbox"].ingest(raw.encode(), via="bench")
    await asyncio.to_thread(app.services["notes"].reconcile)
    tool = app.find_tool("search.all")
    sources = app.environment.search_sources
    ours: list[float] = []
    floor: list[float] = []

    async def one_by_one() -> None:
        for source in sources.values():
            await source.find("glacier survey", 10)

    for _ in range(rounds):
        ours.append(await timed(lambda: app.gate.call(tool, "x", {"query": "glacier survey"}, Caller())))
        floor.append(await timed(one_by_one))
    report("search_all (3 namespaces) vs one by one", ours, floor)


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        print(f"{'':44}{'ours':>13}{'floor':>13}{'ratio':>10}")
        await terminal(folder, rounds)
        await http(folder, rounds)
        await search(folder, rounds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    asyncio.run(main(parser.parse_args().rounds))
