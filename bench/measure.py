"""What the benches share: one percentile, one ours-against-theirs report, the fake Google, a bare server.

The benches run as scripts (`.venv/bin/python bench/NAME.py`) with the checkout's root on the
import path, so they import this as `bench.measure`. Keeping these here means every bench reads
its samples the same way: a p95 in one bench means what it means in the next.
"""

from __future__ import annotations

import contextlib
import json
import math
import textwrap
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from tests.servers.fake_google import FakeGoogle

OURS = "mcp-tools (MCP client, policy, audit)"
DIRECT = "googleapiclient directly"

# The baseline of the start-up and HTTP benches: a bare MCPServer whose one tool calls the same
# files.read handler with the same output model (argv[1] is the files root). A bench adds how it serves.
BARE_FILES_READ = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from mcp.server.mcpserver import MCPServer
    from mcp_tools.servers.files import NAMESPACE
    from mcp_tools.servers.files.config import FilesConfig
    from mcp_tools.servers.files.models import ReadResult
    from mcp_tools.core.tooling import CallContext, Environment

    root = Path(sys.argv[1])
    kept = root.parent / "bare-server"  # its own data and state, outside the files root (which may not hold them)
    service = NAMESPACE.create(FilesConfig(root=str(root)), Environment(kept / "data", kept / "state"))
    spec = next(tool for tool in NAMESPACE.tools if tool.name == "files.read")
    server = MCPServer("bare")

    @server.tool(name="files_read")
    async def files_read(path: str) -> ReadResult:
        return await spec.handler(service, spec.input_model(path=path), CallContext())

    """
)


def percentile(samples: Sequence[float], fraction: float) -> float:
    """Nearest rank: the smallest sample that at least `fraction` of the sorted samples are at or below.

    That is `sorted(samples)[ceil(fraction * n) - 1]`, always one of the samples (never interpolated),
    so p50 of 4 samples is the 2nd, p95 of 20 the 19th and p95 of 100 the 95th.
    """
    ordered = sorted(samples)
    rank = math.ceil(round(fraction * len(ordered), 9))  # 0.95 * 20 is 19, not 19.000000000000004
    return ordered[min(max(rank, 1), len(ordered)) - 1]


async def interleaved(
    ours: Callable[[], Awaitable[object]], theirs: Callable[[], object], calls: int, warm_ups: int
) -> tuple[list[float], list[float]]:
    """Seconds per call of each side, taking turns call by call after `warm_ups` untimed calls of each.

    `theirs` blocks (googleapiclient), so it runs in a worker thread, as the tools run it.
    """
    for _ in range(warm_ups):
        await ours()
        await anyio.to_thread.run_sync(theirs)
    ours_seconds: list[float] = []
    theirs_seconds: list[float] = []
    for _ in range(calls):
        started = time.perf_counter()
        await ours()
        ours_seconds.append(time.perf_counter() - started)
        started = time.perf_counter()
        await anyio.to_thread.run_sync(theirs)
        theirs_seconds.append(time.perf_counter() - started)
    return ours_seconds, theirs_seconds


def print_against(
    ours: Sequence[float], theirs: Sequence[float], theirs_name: str = DIRECT, *, ratio_note: str = ""
) -> None:
    """p50 and p95 in milliseconds of each side, then their ratios ours / theirs (`ratio_note` ends that line)."""
    for name, values in ((OURS, ours), (theirs_name, theirs)):
        p50, p95 = percentile(values, 0.5) * 1000, percentile(values, 0.95) * 1000
        print(f"  {name:<38} p50 {p50:6.1f} ms   p95 {p95:6.1f} ms")
    print(
        f"  ratio p50 x{percentile(ours, 0.5) / percentile(theirs, 0.5):.2f}   "
        f"p95 x{percentile(ours, 0.95) / percentile(theirs, 0.95):.2f}{ratio_note}"
    )


@contextlib.contextmanager
def fake_google() -> Iterator[FakeGoogle]:
    """The fake Google on 127.0.0.1 for the block; a request it would refuse fails the bench at the end."""
    from tests.servers.fake_google import FakeGoogle

    google = FakeGoogle().start()
    try:
        yield google
    finally:
        google.stop()
    assert not google.violations, google.violations


def signed_in_token(base: Path) -> str:
    """The access token the sign-in fixtures stored under `base`, for the googleapiclient side."""
    return str(json.loads((base / "state" / "google" / "token.json").read_text())["token"])


def direct_service(google: FakeGoogle, token: str, api: str, version: str, endpoint: str = "") -> Any:
    """A googleapiclient service on the fake Google with `token` alone: no mcp-tools code on the way.

    `endpoint` defaults to the fake's root URL; Drive wants its own (`google.url + "drive/v3/"`).
    """
    import httplib2
    from google.oauth2.credentials import Credentials
    from google_auth_httplib2 import AuthorizedHttp
    from googleapiclient.discovery import build

    http = AuthorizedHttp(Credentials(token), http=httplib2.Http())
    options = {"api_endpoint": endpoint or google.url}
    return build(api, version, http=http, static_discovery=True, client_options=options)
