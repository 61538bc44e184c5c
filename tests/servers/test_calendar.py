"""The calendar namespace end to end: a real MCP client, the policy layer, a real Radicale server."""

from __future__ import annotations

import datetime as dt
import json
from zoneinfo import ZoneInfo

import mcp_types as types
import pytest

from tests.harness import connect, failure, ok
from tests.servers.calendar_fixtures import (  # noqa: F401  (fixtures)
    PASSWORD,
    World,
    person_event,
    radicale_server,
    world_fixture,
)

pytestmark = pytest.mark.anyio
BERLIN = ZoneInfo("Europe/Berlin")


def at(day: int, hour: int, minute: int = 0, month: int = 3) -> dt.datetime:
    return dt.datetime(2026, month, day, hour, minute, tzinfo=BERLIN)


async def test_tools_are_listed_with_honest_annotations(tmp_path, world: World) -> None:
    async with connect(tmp_path, world.settings()) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {
        "calendar_availability",
        "calendar_events",
        "calendar_create_event",
        "calendar_update_event",
        "calendar_delete_event",
    }
    assert tools["calendar_availability"].annotations.read_only_hint is True
    assert tools["calendar_delete_event"].annotations.destructive_hint is True
    assert "asks the person first" in tools["calendar_create_event"].description


async def test_availability_shows_busy_slots_without_titles_or_other_calendars(tmp_path, world: World) -> None:
    world.add_person_event(world.shared, person_event("Dentist appointment", at(2, 9), at(2, 10)))
    world.add_person_event(world.shared, person_event("Therapy session", at(2, 9, 30), at(2, 11)))
    world.add_person_event(world.shared, person_event("Lunch with Sam", at(2, 13), at(2, 14)))
    world.add_person_event(world.private, person_event("Secret interview", at(2, 15), at(2, 16)))
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, world.settings(), elicit=None, seen=seen) as client:
        result = ok(await client.call_tool("calendar_availability", {"start": "2026-03-02", "end": "2026-03-02"}))
    assert seen == []
    assert result["timezone"] == "Europe/Berlin"
    assert result["busy"] == [
        {"start": "2026-03-02T09:00:00+01:00", "end": "2026-03-02T11:00:00+01:00", "all_day": False},
        {"start": "2026-03-02T13:00:00+01:00", "end": "2026-03-02T14:00:00+01:00", "all_day": False},
    ]
    text = json.dumps(result)
    for secret in ("Dentist", "Therapy", "Lunch", "Secret interview", "15:00"):
        assert secret not in text


async def test_free_slots_within_working_hours(tmp_path, world: World) -> None:
    world.add_person_event(world.shared, person_event("Standup", at(2, 9), at(2, 9, 30)))
    world.add_person_event(world.shared, person_event("Review", at(2, 11), at(2, 16)))
    settings = world.settings(working_hours="09:00-17:00")
    async with connect(tmp_path, settings) as client:
        result = ok(
            await client.call_tool(
                "calendar_availability",
                {"start": "2026-03-02", "end": "2026-03-03", "min_free_minutes": 60},
            )
        )
    assert result["free"] == [
        {"start": "2026-03-02T09:30:00+01:00", "end": "2026-03-02T11:00:00+01:00", "minutes": 90},
        {"start": "2026-03-02T16:00:00+01:00", "end": "2026-03-02T17:00:00+01:00", "minutes": 60},
        {"start": "2026-03-03T09:00:00+01:00", "end": "2026-03-03T17:00:00+01:00", "minutes": 480},
    ]


async def test_own_events_are_read_without_confirmation(tmp_path, world: World) -> None:
    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        created = ok(
            await client.call_tool(
                "calendar_create_event",
                {"title": "Focus time", "start": "2026-03-04T14:00", "end": "2026-03-04T15:30"},
            )
        )["event"]
    assert created["start"] == "2026-03-04T14:00:00+01:00"
    assert created["created_by_assistant"] is True
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, world.settings(), elicit=None, seen=seen) as client:
        listed = ok(await client.call_tool("calendar_events", {"start": "2026-03-02", "end": "2026-03-08"}))
        by_uid = ok(await client.call_tool("calendar_events", {"uid": created["uid"]}))
    assert seen == []
    assert [(e["title"], e["start"], e["end"]) for e in listed["events"]] == [
        ("Focus time", "2026-03-04T14:00:00+01:00", "2026-03-04T15:30:00+01:00")
    ]
    assert by_uid["events"][0]["uid"] == created["uid"]


async def test_person_events_need_confirmation_naming_count_and_range(tmp_path, world: World) -> None:
    world.add_person_event(world.shared, person_event("Doctor", at(3, 8), at(3, 9)))
    world.add_person_event(world.shared, person_event("Parents evening", at(5, 18), at(5, 19)))
    world.add_person_event(world.private, person_event("Private thing", at(4, 8), at(4, 9)))
    arguments = {"start": "2026-03-02", "end": "2026-03-08"}

    async with connect(tmp_path, world.settings(), elicit=None) as client:
        refused = failure(await client.call_tool("calendar_events", arguments))
    assert refused["kind"] == "approval_required"

    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, world.settings(), elicit="decline", seen=seen) as client:
        declined = failure(await client.call_tool("calendar_events", arguments))
    assert declined["kind"] == "declined_by_user"
    assert "Doctor" not in json.dumps(declined)
    message = seen[0].message
    assert "2 events you created yourself" in message
    assert "2026-03-02T00:00:00+01:00 to 2026-03-09T00:00:00+01:00" in message

    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        shown = ok(await client.call_tool("calendar_events", arguments))
    titles = [event["title"] for event in shown["events"]]
    assert titles == ["Doctor", "Parents evening"]
    assert all(event["created_by_assistant"] is False for event in shown["events"])
    assert "Private thing" not in json.dumps(shown)


async def test_mixed_answer_counts_only_the_persons_events(tmp_path, world: World) -> None:
    world.add_person_event(world.shared, person_event("Doctor", at(3, 8), at(3, 9)))
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, world.settings(), elicit="accept", seen=seen) as client:
        ok(
            await client.call_tool(
                "calendar_create_event", {"title": "Mine", "start": "2026-03-03T10:00", "end": "2026-03-03T11:00"}
            )
        )
        shown = ok(await client.call_tool("calendar_events", {"start": "2026-03-03", "end": "2026-03-03"}))
    assert "1 event you created yourself" in seen[-1].message
    assert {(e["title"], e["created_by_assistant"]) for e in shown["events"]} == {("Doctor", False), ("Mine", True)}


async def test_private_calendar_event_is_not_found_by_uid(tmp_path, world: World) -> None:
    world.add_person_event(world.private, person_event("Hidden", at(3, 8), at(3, 9), uid="private-uid-1"))
    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        missing = failure(await client.call_tool("calendar_events", {"uid": "private-uid-1"}))
        deleted = failure(await client.call_tool("calendar_delete_event", {"uid": "private-uid-1"}))
    assert missing["kind"] == "not_found"
    assert deleted["kind"] == "not_found"
    with world.server.client() as client:
        assert client.calendar(url=world.private.url).get_event_by_uid("private-uid-1") is not None


async def test_uid_lookup_is_exact_not_substring(tmp_path, world: World) -> None:
    world.add_person_event(world.shared, person_event("Doctor", at(3, 8), at(3, 9), uid="person-abc-123"))
    async with connect(tmp_path, world.settings(), elicit=None) as client:
        result = failure(await client.call_tool("calendar_events", {"uid": "abc"}))
    assert result["kind"] == "not_found"
