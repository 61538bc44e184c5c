"""Two `serve --http` replicas on one PostgreSQL database: a task made through one is polled
through the other, and when the replica that runs it stops, the other takes it over and goes on
waiting for the person."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.approvals.helpers import TOKEN
from tests.processes import cli_in_process, demo_config, http_server
from tests.tasks.rpc import CLOCK_ENTRY, LEGACY, MODERN, over_http

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
SECRET = "replicas-share-this-secret-of-32-bytes"


@pytest.fixture
def replicas(postgres_url: str, tmp_path: Path) -> Iterator[tuple[list[Path], list[str], ExitStack, Path]]:
    clock = tmp_path / "clock"
    clock.write_text("0", encoding="utf-8")
    extra = f'[http.tokens]\nlaptop = "{TOKEN}"\n[state]\nurl = "{postgres_url}"\nsecret = "{SECRET}"\n'
    configs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        configs.append(demo_config(tmp_path / name, extra))
    with ExitStack() as stack:
        first = ExitStack()
        stack.enter_context(first)
        bases = [
            first.enter_context(http_server(configs[0], entry=CLOCK_ENTRY, startup=120, TASKS_TEST_CLOCK=str(clock))),
            stack.enter_context(http_server(configs[1], entry=CLOCK_ENTRY, startup=120, TASKS_TEST_CLOCK=str(clock))),
        ]
        yield configs, bases, first, clock


def pending(config: Path, target: str) -> str:
    listed = json.loads(cli_in_process(config, "approvals", "list", "--json").stdout)
    [found] = [item["id"] for item in listed if item["arguments"]["target"] == target and item["status"] == "pending"]
    return str(found)


async def test_any_replica_answers_and_takes_over_a_stopped_ones_task(
    replicas: tuple[list[Path], list[str], ExitStack, Path],
) -> None:
    configs, (a, b), stop_a, clock = replicas
    async with over_http(a + "/mcp", TOKEN, MODERN) as through_a, over_http(b + "/mcp", TOKEN, MODERN) as through_b:
        made = await through_a.call_as_task("demo_erase", {"target": "shared"})
        await through_b.until(made["taskId"], "input_required")  # made on A, read on B
        async with over_http(b + "/mcp", TOKEN, LEGACY) as legacy_b:  # a 2025-11-25 session on B sees it too
            assert (await legacy_b.get(made["taskId"]))["status"] == "input_required"
        assert cli_in_process(configs[1], "approvals", "approve", pending(configs[1], "shared")).returncode == 0
        done = await through_b.until(made["taskId"], "completed")
        assert done["result"]["structuredContent"] == {"erased": "shared"}

        orphan = await through_a.call_as_task("demo_erase", {"target": "orphaned"})
        await through_a.until(orphan["taskId"], "input_required")
    stop_a.close()  # replica A stops while its task waits for the person
    clock.write_text("60", encoding="utf-8")  # and a minute passes: its lease has long run out
    async with over_http(b + "/mcp", TOKEN, MODERN) as through_b:
        assert (await through_b.get(orphan["taskId"]))["status"] == "input_required"
        assert cli_in_process(configs[1], "approvals", "approve", pending(configs[1], "orphaned")).returncode == 0
        done = await through_b.until(orphan["taskId"], "completed")
        assert done["result"]["structuredContent"] == {"erased": "orphaned"}
