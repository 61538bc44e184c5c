"""calendar over a year of long events, with the largest arguments the schemas take."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tests.budgets import assert_fits, structured, text
from tests.harness import connect
from tests.servers.calendar.fixtures import (  # noqa: F401  (fixtures)
    World,
    person_event,
    radicale_server,
    world_fixture,
)

pytestmark = pytest.mark.anyio


async def test_a_year_of_daily_events_with_long_descriptions_pages_inside_the_budget(
    tmp_path: Path, world: World
) -> None:
    start = dt.datetime(2026, 3, 1, 8, tzinfo=dt.UTC)
    description = "DESCRIPTION:" + "Agenda item with details to discuss. " * 60
    daily = person_event("Stand-up", start, start + dt.timedelta(minutes=30), extra="RRULE:FREQ=DAILY;COUNT=365")
    world.add_person_event(world.shared, daily.replace("SUMMARY:", description + "\r\nSUMMARY:"))
    span = {"start": "2026-03-01T00:00:00Z", "end": "2027-03-01T00:00:00Z"}
    async with connect(tmp_path, world.settings()) as client:
        first = await client.call_tool("calendar_events", {**span, "limit": 100})
        free = await client.call_tool("calendar_availability", {**span, "min_free_minutes": 1})
    assert_fits(first)
    assert len(structured(first)["events"]) == 100 and structured(first)["next_cursor"]
    assert "cursor" in text(first)
    assert_fits(free)
