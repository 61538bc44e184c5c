"""Benchmark the gmail namespace against the fake Google on 127.0.0.1 (no network).

1. Start-up, spawn to first answered tools/list over stdio: a bare `MCPServer` with one tool,
   `mcp-tools serve` with files only (today's baseline), and with files + gmail signed in. The
   Google libraries load on the first call, so gmail should add little.
2. `gmail.search` returning 25 messages through the real MCP client and the policy layer,
   against the same requests (messages.list, then one batch of 25 trimmed gets) made directly
   with googleapiclient. p50 and p95, interleaved call by call.

Run: .venv/bin/python bench/gmail.py [--rounds 5] [--calls 40]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mcp import Client, StdioServerParameters  # noqa: E402

from bench.measure import direct_service, fake_google, interleaved, print_against, signed_in_token  # noqa: E402
from mcp_tools.servers.gmail.service import SEARCH_FIELDS  # noqa: E402
from tests.harness import connect  # noqa: E402
from tests.servers.fake_google import FakeGmail, FakeGoogle  # noqa: E402
from tests.servers.gmail.fixtures import plain, sign_in  # noqa: E402

BARE = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bare")

    @server.tool(name="echo")
    async def echo(text: str) -> str:
        return text

    server.run()
    """
)


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_TOOLS_")}
    env["PYTHONPATH"] = str(ROOT)
    return env


async def time_to_tools(params: StdioServerParameters) -> float:
    started = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        await client.list_tools()
        return time.perf_counter() - started


def write_config(path: Path, base: Path, settings: dict, servers: list[str]) -> None:
    google = settings["google"]
    path.write_text(
        f'[server]\nservers = {servers!r}\nstate_dir = "{base / "state"}"\ndata_dir = "{base / "data"}"\n'
        f'[google]\nclient_secrets = "{google["client_secrets"]}"\napi_endpoint = "{google["api_endpoint"]}"\n'
    )


async def startup(base: Path, settings: dict, rounds: int) -> None:
    bare_script = base / "bare.py"
    bare_script.write_text(BARE)
    files_cfg, gmail_cfg = base / "files.toml", base / "gmail.toml"
    write_config(files_cfg, base, settings, ["files"])
    write_config(gmail_cfg, base, settings, ["files", "gmail"])
    runs = {
        "bare MCPServer": StdioServerParameters(command=sys.executable, args=[str(bare_script)], env=child_env()),
        "files only": StdioServerParameters(
            command=sys.executable, args=["-m", "mcp_tools", "--config", str(files_cfg), "serve"], env=child_env()
        ),
        "files + gmail": StdioServerParameters(
            command=sys.executable, args=["-m", "mcp_tools", "--config", str(gmail_cfg), "serve"], env=child_env()
        ),
    }
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, params in runs.items():
            samples[name].append(await time_to_tools(params))
            await anyio.sleep(0.5)
    bare = statistics.median(samples["bare MCPServer"])
    print("start-up to first tools/list (median of", rounds, "rounds)")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"  {name:<16} {median * 1000:7.0f} ms   x{median / bare:.2f} of bare")


def direct_search(google: FakeGoogle, token: str):
    """The same requests with googleapiclient alone: list, then one batch of 25 trimmed gets."""
    from googleapiclient.http import BatchHttpRequest

    service = direct_service(google, token, "gmail", "v1")

    def run() -> int:
        listing = service.users().messages().list(userId="me", labelIds=["INBOX"], maxResults=25).execute()
        found: list = []
        batch = BatchHttpRequest(
            callback=lambda _id, response, error: found.append(response), batch_uri=google.url + "batch"
        )
        for ref in listing["messages"]:
            batch.add(service.users().messages().get(userId="me", id=ref["id"], format="full", fields=SEARCH_FIELDS))
        batch.execute()
        return len(found)

    return run


async def search(base: Path, google: FakeGoogle, settings: dict, calls: int) -> None:
    direct = direct_search(google, signed_in_token(base))
    async with connect(base, settings) as client:

        async def ours_search() -> None:
            result = await client.call_tool("gmail_search", {"limit": 25})
            assert not result.is_error and len(result.structured_content["messages"]) == 25

        def direct_search_25() -> None:
            assert direct() == 25

        # warm up both (imports, service build, label cache)
        ours, theirs = await interleaved(ours_search, direct_search_25, calls, warm_ups=5)
    print(f"gmail.search of 25 messages ({calls} calls each, interleaved)")
    print_against(ours, theirs)


async def main(rounds: int, calls: int) -> None:
    with fake_google() as google, tempfile.TemporaryDirectory() as tmp:
        gmail = FakeGmail(google)
        for number in range(40):
            gmail.add(plain(subject=f"Message {number}", message_id=f"<m{number}@bench>"))
        base = Path(tmp)
        settings = sign_in(base, google)
        await startup(base, settings, rounds)
        await search(base, google, settings, calls)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=40)
    options = parser.parse_args()
    anyio.run(main, options.rounds, options.calls)
