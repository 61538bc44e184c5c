"""calendar: changes that could never run fail before the person is asked (Radicale and the fake Google)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import mcp_types as types
import pytest

from tests.harness import connect, failure, ok
from tests.servers.calendar.fixtures import (  # noqa: F401  (fixtures)
    CalDavUnderTest,
    GoogleUnderTest,
    calendar_under_test,
    radicale_server,
    world_fixture,
)

pytestmark = pytest.mark.anyio
BERLIN = ZoneInfo("Europe/Berlin")
Cal = CalDavUnderTest | GoogleUnderTest


async def test_changing_or_deleting_a_missing_event_asks_nobody(tmp_path, cal: Cal) -> None:
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, cal.settings(), elicit="accept", seen=seen) as client:
        update = failure(await client.call_tool("calendar_update_event", {"uid": "no-such-event", "title": "x"}))
        delete = failure(await client.call_tool("calendar_delete_event", {"uid": "no-such-event"}))
    assert update["kind"] == "not_found" and delete["kind"] == "not_found"
    assert seen == []


async def test_invalid_changes_ask_nobody(tmp_path, cal: Cal) -> None:
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, cal.settings(), elicit="accept", seen=seen) as client:
        created = ok(
            await client.call_tool(
                "calendar_create_event",
                {"title": "Run", "start": "2026-03-02", "recurrence": "FREQ=WEEKLY;COUNT=3"},
            )
        )
        uid = created["event"]["uid"]
        asked_for_create = len(seen)
        bad_create = [
            {"title": "x", "start": "2026-03-02T10:00"},  # a timed event needs end
            {"title": "x", "start": "2026-03-03", "end": "2026-03-02"},  # ends before it starts
            {"title": "x", "start": "2026-03-03", "recurrence": "FREQ=SECONDLY"},
        ]
        create_errors = [failure(await client.call_tool("calendar_create_event", args))["kind"] for args in bad_create]
        nothing = failure(await client.call_tool("calendar_update_event", {"uid": uid}))
        no_such_occurrence = failure(
            await client.call_tool("calendar_delete_event", {"uid": uid, "occurrence": "2026-03-04"})
        )
        wrong_order = failure(
            await client.call_tool("calendar_update_event", {"uid": uid, "start": "2026-03-05", "end": "2026-03-01"})
        )
        assert len(seen) == asked_for_create == 1
        moved = ok(await client.call_tool("calendar_delete_event", {"uid": uid, "occurrence": "2026-03-09"}))
    assert create_errors == ["invalid_arguments"] * 3
    assert nothing["kind"] == "invalid_arguments"
    assert no_such_occurrence["kind"] == "not_found"
    assert wrong_order["kind"] == "invalid_arguments"
    assert moved == {"deleted": uid, "occurrence": "2026-03-09"}
    assert "created by the assistant" in seen[-1].message


async def test_the_confirmation_says_whose_event_it_is_without_its_title(tmp_path, cal: Cal) -> None:
    start = dt.datetime(2026, 3, 2, 9, tzinfo=BERLIN)
    dentist = cal.add("Dentist", start, start + dt.timedelta(hours=1))
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, cal.settings(), elicit="decline", seen=seen) as client:
        refused = failure(await client.call_tool("calendar_delete_event", {"uid": dentist}))
    assert refused["kind"] == "declined_by_user"
    assert "one of your own events" in seen[0].message and "Dentist" not in seen[0].message
