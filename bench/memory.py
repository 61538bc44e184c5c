"""Resident memory of `mcp-tools serve` with every namespace configured, against a bare SDK server.

    .venv/bin/python bench/memory.py --vault /tmp/obsidian-hub [--calls 1000] [--rounds 3] [--steps 4]

Each side is a server process over stdio with the SDK's client: `mcp-tools serve` with every
namespace on (the Google ones signed in with a token that is never used, calendar on a CalDAV
address that is never called, web with a key that is never sent) and a notes vault, against a
bare `MCPServer` whose one tool calls the same `files.read` handler. Ours first indexes the vault
(waited for through `notes.search`), then both answer `--calls` calls (ours alternates `files.read`,
`notes.search` and `notes.read`; the bare one `files.read`), and the resident set of each
process is read from /proc (VmRSS, and VmHWM, the peak). The index is the notes index's files on
disk (SQLite, with its WAL). The goal: ours at most 1.5x the bare server's RSS plus the index.

`--steps N` repeats ours on the first 1/N, 2/N ... of the vault's notes (copied to a temporary
folder), to show how memory grows with the vault. Rounds interleave the two servers; printed are
medians and ranges.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.measure import BARE_FILES_READ  # noqa: E402
from mcp_tools.servers import CATALOG  # noqa: E402

BARE_SERVER = BARE_FILES_READ + "server.run()\n"
UNUSED = "http://127.0.0.1:9/"  # discard port: nothing is ever sent there


def env_for() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_TOOLS_")}
    return env | {"PYTHONPATH": str(ROOT)}


def google_sign_in(state: Path) -> Path:
    """A client secrets file and a token for every scope we ask for; neither is ever presented."""
    from mcp_tools.servers.google import scopes

    every = sorted(
        {value for name, value in vars(scopes).items() if name.isupper() and isinstance(value, str) and value}
    )
    secrets = state.parent / "client_secret.json"
    installed = {"client_id": "bench.apps", "client_secret": "unused", "token_uri": UNUSED + "token"}
    secrets.write_text(json.dumps({"installed": installed | {"auth_uri": UNUSED, "redirect_uris": [UNUSED]}}))
    token = state / "google" / "token.json"
    token.parent.mkdir(parents=True, exist_ok=True)
    token.write_text(
        json.dumps(
            {
                "token": "ya29.unused",
                "refresh_token": "1//unused",
                "token_uri": UNUSED + "token",
                "client_id": "bench.apps",
                "scopes": every,
                "expiry": "2099-01-01T00:00:00+00:00",
                "account": "bench@example.com",
            }
        )
    )
    os.chmod(token, 0o600)
    return secrets


def write_config(base: Path, vault: Path, files: Path) -> Path:
    state, data = base / "state", base / "data"
    state.mkdir(parents=True, exist_ok=True)
    secrets = google_sign_in(state)
    names = ", ".join(f'"{name}"' for name in CATALOG)
    config = base / "config.toml"
    config.write_text(
        f'[server]\nnamespaces = [{names}]\ntools = ["*"]\nstate_dir = "{state}"\ndata_dir = "{data}"\n'
        f'[files]\nroot = "{files}"\n'
        f'[notes]\nvault = "{vault}"\n'
        f'[google]\nclient_secrets = "{secrets}"\napi_endpoint = "{UNUSED}"\n'
        f'[calendar]\nurl = "{UNUSED}dav/"\nusername = "bench"\ncalendar = "Bench"\npassword = "unused"\n'
        '[terminal]\nenabled = true\nallow = ["echo"]\nisolation = "none"\n'
        '[http.outbound]\nenabled = true\nallow_hosts = ["example.org"]\n'
        '[web]\napi_key = "tvly-unused-0123456789"\n'
    )
    return config


def server_pid(marker: str) -> int:
    """The process whose command line holds `marker` (the config or the script): the server."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(marker.encode() == part for part in command) and entry.name != str(os.getpid()):
                return int(entry.name)
    raise RuntimeError(f"no process runs with {marker}")


def memory_kb(pid: int) -> tuple[int, int]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def index_bytes(state: Path) -> int:
    return sum(path.stat().st_size for path in (state / "notes").rglob("*") if path.is_file())


async def ours(config: Path, calls: int, notes: list[str]) -> dict[str, float]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_tools", "--config", str(config), "serve"], env=env_for(), cwd=str(ROOT)
    )
    async with Client(params, mode="legacy") as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        on = sorted({name.split("_", 1)[0] for name in tools} & set(CATALOG))
        while True:  # the index is built in the background from start-up; wait until it is complete
            searched = await client.call_tool("notes_search", {"query": "plugin"})
            assert not searched.is_error, searched.content
            if searched.structured_content["index"]["complete"]:
                break
            await anyio.sleep(0.5)
        for number in range(calls):
            kind = number % 3
            if kind == 0:
                result = await client.call_tool("files_read", {"path": "note.txt"})
            elif kind == 1:
                result = await client.call_tool(
                    "notes_search", {"query": ["plugin", "theme", "daily notes"][number % 3]}
                )
            else:
                result = await client.call_tool("notes_read", {"path": notes[number % len(notes)]})
            assert not result.is_error, result.content
        rss, peak = memory_kb(server_pid(str(config)))
    return {"rss": rss, "peak": peak, "namespaces": len(on), "tools": len(tools)}


async def bare(script: Path, root: Path, calls: int) -> dict[str, float]:
    params = StdioServerParameters(command=sys.executable, args=[str(script), str(root)], env=env_for(), cwd=str(ROOT))
    async with Client(params, mode="legacy") as client:
        for _ in range(calls):
            result = await client.call_tool("files_read", {"path": "note.txt"})
            assert not result.is_error, result.content
        rss, peak = memory_kb(server_pid(str(script)))
    return {"rss": rss, "peak": peak}


def subset(vault: Path, notes: list[Path], target: Path) -> list[str]:
    for note in notes:
        copy = target / note.relative_to(vault)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(note, copy)
    return [str(note.relative_to(vault)) for note in notes if note.stat().st_size < 50_000][:200]


async def main(vault: Path, calls: int, rounds: int, steps: int) -> None:
    every = sorted(path for path in vault.rglob("*.md") if not any(part.startswith(".") for part in path.parts))
    with tempfile.TemporaryDirectory(prefix="memory-") as tmp:
        base = Path(tmp)
        files = base / "files"
        files.mkdir()
        (files / "note.txt").write_text("A small note.\n" * 20)
        script = base / "bare_server.py"
        script.write_text(BARE_SERVER)
        rows = []
        for step in range(1, steps + 1):
            part = every[: len(every) * step // steps]
            side = base / f"vault-{step}"
            readable = subset(vault, part, side)
            samples: list[dict[str, float]] = []
            bares: list[dict[str, float]] = []
            for round_number in range(rounds):
                run = base / f"run-{step}-{round_number}"
                config = write_config(run, side, files)
                samples.append(await ours(config, calls, readable) | {"index": index_bytes(run / "state")})
                bares.append(await bare(script, files, calls))
                shutil.rmtree(run)
            rows.append((len(part), samples, bares))
    first = rows[-1][1][0]
    print(f"resident memory after a notes index and {calls} calls, median of {rounds} rounds (range)")
    print(f"ours: {first['namespaces']:.0f} namespaces on, {first['tools']:.0f} tools")
    print(f"{'notes':>7}{'bare MB':>10}{'ours MB':>10}{'index MB':>10}{'ours / bare':>13}{'(ours-index) / bare':>21}")
    for count, samples, bares in rows:
        bare_mb = statistics.median(b["rss"] for b in bares) / 1024
        ours_mb = statistics.median(s["rss"] for s in samples) / 1024
        index_mb = statistics.median(s["index"] for s in samples) / 1024 / 1024
        ratios = [s["rss"] / b["rss"] for s, b in zip(samples, bares, strict=True)]
        less_index = [(s["rss"] - s["index"] / 1024) / b["rss"] for s, b in zip(samples, bares, strict=True)]
        print(
            f"{count:7}{bare_mb:10.1f}{ours_mb:10.1f}{index_mb:10.1f}"
            f"{statistics.median(ratios):8.2f} ({min(ratios):.2f}-{max(ratios):.2f})"
            f"{statistics.median(less_index):9.2f} ({min(less_index):.2f}-{max(less_index):.2f})"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", required=True, type=Path, help="a notes vault, e.g. a checkout of obsidian-hub")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=1, help="also measure on 1/N, 2/N ... of the vault")
    options = parser.parse_args()
    anyio.run(main, options.vault, options.calls, options.rounds, options.steps)
