"""Benchmark the tasks namespace against the fake Google Tasks on 127.0.0.1 (no network).

`tasks.list` of a 100-task list (a fifth of them subtasks) and `tasks.create`, through the real
MCP client and the policy layer (audit row, medium-risk notice), against the same requests made
directly with googleapiclient (tasklists.get @default, then tasks.list or tasks.insert).
p50 and p95, interleaved call by call.

Run: .venv/bin/python bench/tasks.py [--calls 40]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.measure import direct_service, fake_google, interleaved, print_against, signed_in_token  # noqa: E402
from tests.harness import connect  # noqa: E402
from tests.servers.fake_google import FakeGoogle, FakeTasks  # noqa: E402
from tests.servers.tasks.fixtures import tasks_settings  # noqa: E402


def direct_calls(google: FakeGoogle, token: str) -> tuple[Callable[[], int], Callable[[], str]]:
    service = direct_service(google, token, "tasks", "v1")

    def listing() -> int:
        found = service.tasklists().get(tasklist="@default").execute()
        page = service.tasks().list(tasklist=found["id"], maxResults=100, showCompleted=False).execute()
        return len(page["items"])

    def create() -> str:
        found = service.tasklists().get(tasklist="@default").execute()
        body = {"title": "Bench", "status": "needsAction", "due": "2026-03-05T00:00:00.000Z"}
        return service.tasks().insert(tasklist=found["id"], body=body).execute()["id"]

    return listing, create


async def compare(name: str, ours: Callable[[], Any], theirs: Callable[[], Any], calls: int) -> None:
    mine, direct = await interleaved(ours, theirs, calls, warm_ups=5)  # warm up both (imports, service build)
    print(f"{name} ({calls} calls each, interleaved)")
    print_against(mine, direct)


async def main(calls: int) -> None:
    with fake_google() as google, tempfile.TemporaryDirectory() as tmp:
        tasks = FakeTasks(google)
        parent = None
        for number in range(100):
            if number % 5 == 0:
                parent = tasks.add(f"Task {number}", due="2026-03-05T00:00:00.000Z")
            else:
                tasks.add(f"Task {number}", parent=parent.id if number % 5 == 1 and parent else None)
        base = Path(tmp)
        settings = tasks_settings(base, google)
        listing, create = direct_calls(google, signed_in_token(base))
        async with connect(base, settings) as client:

            async def our_list() -> None:
                result = await client.call_tool("tasks_list", {"list": "@default", "limit": 100})
                assert not result.is_error and len(result.structured_content["tasks"]) == 100

            async def our_create() -> None:
                result = await client.call_tool("tasks_create", {"title": "Bench", "due": "2026-03-05"})
                assert not result.is_error

            await compare("tasks.list of 100 tasks", our_list, listing, calls)
            await compare("tasks.create with a due date", our_create, create, calls)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40)
    options = parser.parse_args()
    anyio.run(main, options.calls)
