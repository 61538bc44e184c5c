"""tasks with long notes, read with the largest arguments the schemas take: each result fits the budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.budgets import assert_fits, structured, text
from tests.harness import connect
from tests.servers.fake_google import FakeGoogle, FakeTasks
from tests.servers.tasks.fixtures import tasks_settings

pytestmark = pytest.mark.anyio


async def test_a_listing_of_tasks_with_long_notes_cuts_the_notes_in_structured_content_too(
    tmp_path: Path, google: FakeGoogle, tasks: FakeTasks
) -> None:
    notes = ("Step by step, what to do and why. " * 300)[:8192]
    stored = [tasks.add(f"Task {i}", notes=notes, due="2026-03-01T00:00:00.000Z") for i in range(100)]
    async with connect(tmp_path, tasks_settings(tmp_path, google)) as client:
        listing = await client.call_tool("tasks_list", {"list": "@default", "status": "all", "limit": 100})
        one = await client.call_tool("tasks_get", {"id": stored[0].id})
        lists = await client.call_tool("tasks_list", {"limit": 100})
    assert_fits(listing)
    listed = structured(listing)["tasks"]
    assert len(listed) == 100
    assert all(len(task["notes"]) == 200 and task["notes_chars"] == 8192 for task in listed)
    assert f"8,192 characters; tasks_get id={stored[0].id} reads them" in text(listing)
    assert_fits(one)
    assert structured(one)["task"]["notes"] == notes  # one task: its notes whole
    assert_fits(lists)
