"""The calendar namespace end to end: a real MCP client, the policy layer, a real Radicale server."""

from __future__ import annotations

import datetime as dt
import json
from zoneinfo import ZoneInfo

import mcp_types as types
import pytest

from tests.harness import annotation, connect, failure, ok
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
    assert annotation(tools["calendar_availability"], "read_only_hint") is True
    assert annotation(tools["calendar_delete_event"], "destructive_hint") is True
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


# --- writes ----------------------------------------------------------------------------------


def stored(world: World, uid: str) -> str:
    with world.server.client() as client:
        return client.calendar(url=world.shared.url).get_event_by_uid(uid).data


async def test_create_update_delete_round_trip(tmp_path, world: World) -> None:
    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        created = ok(
            await client.call_tool(
                "calendar_create_event",
                {"title": "Call the plumber", "start": "2026-03-10T08:00:00Z", "end": "2026-03-10T08:30:00Z"},
            )
        )["event"]
        uid = created["uid"]
        data = stored(world, uid)
        assert "BEGIN:VTIMEZONE" in data and "TZID:Europe/Berlin" in data
        assert "DTSTART;TZID=Europe/Berlin:20260310T090000" in data
        assert created["start"] == "2026-03-10T09:00:00+01:00"

        moved = ok(
            await client.call_tool(
                "calendar_update_event", {"uid": uid, "start": "2026-03-11T14:00", "title": "Plumber visit"}
            )
        )["event"]
        assert (moved["title"], moved["start"], moved["end"]) == (
            "Plumber visit",
            "2026-03-11T14:00:00+01:00",
            "2026-03-11T14:30:00+01:00",
        )
        listed = ok(await client.call_tool("calendar_events", {"start": "2026-03-09", "end": "2026-03-15"}))
        assert [(e["title"], e["start"]) for e in listed["events"]] == [("Plumber visit", "2026-03-11T14:00:00+01:00")]

        gone = ok(await client.call_tool("calendar_delete_event", {"uid": uid}))
        assert gone == {"deleted": uid, "occurrence": None}
        after = ok(await client.call_tool("calendar_events", {"start": "2026-03-09", "end": "2026-03-15"}))
        assert after["events"] == []
        again = failure(await client.call_tool("calendar_delete_event", {"uid": uid}))
        assert again["kind"] == "not_found"


async def test_writes_ask_first_and_a_decline_changes_nothing(tmp_path, world: World) -> None:
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, world.settings(), elicit="decline", seen=seen) as client:
        refused = failure(
            await client.call_tool(
                "calendar_create_event", {"title": "Not wanted", "start": "2026-03-10", "end": "2026-03-10"}
            )
        )
    assert refused["kind"] == "declined_by_user"
    assert "Not wanted" in seen[0].message
    assert world.shared.search(event=True) == []


async def test_writes_need_confirmation_even_for_own_events(tmp_path, world: World) -> None:
    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        uid = ok(await client.call_tool("calendar_create_event", {"title": "Mine", "start": "2026-03-10"}))["event"][
            "uid"
        ]
    async with connect(tmp_path, world.settings(), elicit=None) as client:
        result = failure(await client.call_tool("calendar_delete_event", {"uid": uid}))
    assert result["kind"] == "approval_required"
    assert "Mine" in stored(world, uid)


@pytest.mark.parametrize(
    ("zone", "offset"),
    [("Pacific/Honolulu", "-10:00"), ("Pacific/Tongatapu", "+13:00")],
)
async def test_all_day_events_keep_their_date_far_from_utc(tmp_path, world: World, zone: str, offset: str) -> None:
    world.timezone = zone
    world.add_person_event(world.shared, person_event("Holiday", dt.date(2026, 3, 6), dt.date(2026, 3, 7)))
    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        created = ok(
            await client.call_tool(
                "calendar_create_event", {"title": "Trip", "start": "2026-03-05", "end": "2026-03-06"}
            )
        )["event"]
        assert (created["start"], created["end"], created["all_day"]) == ("2026-03-05", "2026-03-06", True)
        assert "DTSTART;VALUE=DATE:20260305" in stored(world, created["uid"])
        assert "DTEND;VALUE=DATE:20260307" in stored(world, created["uid"])

        def days(result: dict) -> list[tuple[str, str, str]]:
            return [(e["title"], e["start"], e["end"]) for e in result["events"]]

        week = ok(await client.call_tool("calendar_events", {"start": "2026-03-01", "end": "2026-03-08"}))
        assert days(week) == [("Trip", "2026-03-05", "2026-03-06"), ("Holiday", "2026-03-06", "2026-03-06")]
        before = ok(await client.call_tool("calendar_events", {"start": "2026-03-04", "end": "2026-03-04"}))
        assert days(before) == []
        after = ok(await client.call_tool("calendar_events", {"start": "2026-03-07", "end": "2026-03-07"}))
        assert days(after) == []
        evening = ok(
            await client.call_tool("calendar_events", {"start": "2026-03-06T20:00", "end": "2026-03-06T23:00"})
        )
        assert [e["title"] for e in evening["events"]] == ["Trip", "Holiday"]
        busy = ok(await client.call_tool("calendar_availability", {"start": "2026-03-01", "end": "2026-03-08"}))
    assert busy["busy"] == [{"start": "2026-03-05", "end": "2026-03-06", "all_day": True}]
    assert busy["start"] == f"2026-03-01T00:00:00{offset}"


async def test_weekly_event_expands_and_one_occurrence_changes(tmp_path, world: World) -> None:
    month = {"start": "2026-03-01", "end": "2026-03-31"}
    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        series = ok(
            await client.call_tool(
                "calendar_create_event",
                {
                    "title": "Team sync",
                    "start": "2026-03-02T10:00",
                    "end": "2026-03-02T11:00",
                    "recurrence": "FREQ=WEEKLY;BYDAY=MO",
                },
            )
        )["event"]
        assert series["recurrence"] == "FREQ=WEEKLY;BYDAY=MO"
        uid = series["uid"]
        listed = ok(await client.call_tool("calendar_events", month))["events"]
        # Summer time starts in Berlin on 29 March: the local hour stays 10:00, the offset moves.
        assert [(e["start"], e["recurrence_id"]) for e in listed] == [
            ("2026-03-02T10:00:00+01:00", "2026-03-02T10:00:00+01:00"),
            ("2026-03-09T10:00:00+01:00", "2026-03-09T10:00:00+01:00"),
            ("2026-03-16T10:00:00+01:00", "2026-03-16T10:00:00+01:00"),
            ("2026-03-23T10:00:00+01:00", "2026-03-23T10:00:00+01:00"),
            ("2026-03-30T10:00:00+02:00", "2026-03-30T10:00:00+02:00"),
        ]
        assert {e["uid"] for e in listed} == {uid}

        changed = ok(
            await client.call_tool(
                "calendar_update_event",
                {
                    "uid": uid,
                    "occurrence": "2026-03-16T10:00:00+01:00",
                    "start": "2026-03-17T15:00",
                    "title": "Team sync (moved)",
                },
            )
        )
        assert changed["event"]["start"] == "2026-03-02T10:00:00+01:00"  # the series itself is unchanged
        ok(await client.call_tool("calendar_delete_event", {"uid": uid, "occurrence": "2026-03-23T10:00:00+01:00"}))
        after = ok(await client.call_tool("calendar_events", month))["events"]
        assert [(e["title"], e["start"], e["end"], e["recurrence_id"]) for e in after] == [
            ("Team sync", "2026-03-02T10:00:00+01:00", "2026-03-02T11:00:00+01:00", "2026-03-02T10:00:00+01:00"),
            ("Team sync", "2026-03-09T10:00:00+01:00", "2026-03-09T11:00:00+01:00", "2026-03-09T10:00:00+01:00"),
            (
                "Team sync (moved)",
                "2026-03-17T15:00:00+01:00",
                "2026-03-17T16:00:00+01:00",
                "2026-03-16T10:00:00+01:00",
            ),
            ("Team sync", "2026-03-30T10:00:00+02:00", "2026-03-30T11:00:00+02:00", "2026-03-30T10:00:00+02:00"),
        ]
        # Changing the moved occurrence again edits the same override.
        ok(
            await client.call_tool(
                "calendar_update_event",
                {"uid": uid, "occurrence": "2026-03-16T10:00:00+01:00", "title": "Team sync (moved twice)"},
            )
        )
        missing = failure(
            await client.call_tool(
                "calendar_update_event", {"uid": uid, "occurrence": "2026-03-18T10:00", "title": "x"}
            )
        )
        assert missing["kind"] == "not_found"
        ok(await client.call_tool("calendar_delete_event", {"uid": uid}))
        assert ok(await client.call_tool("calendar_events", month))["events"] == []


async def test_pagination_walks_every_event_once(tmp_path, world: World) -> None:
    for day in range(2, 9):
        world.add_person_event(world.shared, person_event(f"Day {day}", at(day, 9), at(day, 10)))
    arguments = {"start": "2026-03-01", "end": "2026-03-10", "limit": 3}
    titles: list[str] = []
    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        cursor = None
        for _ in range(5):
            page = ok(await client.call_tool("calendar_events", arguments | ({"cursor": cursor} if cursor else {})))
            titles += [event["title"] for event in page["events"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        forged = failure(
            await client.call_tool("calendar_events", {"start": "2026-03-01", "end": "2026-03-03", "cursor": "3.x"})
        )
    assert titles == [f"Day {day}" for day in range(2, 9)]
    assert forged["kind"] == "invalid_arguments"


async def test_location_and_description_only_when_configured(tmp_path, world: World) -> None:
    extra = "LOCATION:Clinic, Main St 1\r\nDESCRIPTION:Bring the referral\r\nATTENDEE:mailto:dr@example.org"
    world.add_person_event(world.shared, person_event("Doctor", at(3, 8), at(3, 9), extra=extra))
    arguments = {"start": "2026-03-03", "end": "2026-03-03"}
    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        plain = ok(await client.call_tool("calendar_events", arguments))
    assert "Clinic" not in json.dumps(plain) and "referral" not in json.dumps(plain)
    assert "dr@example.org" not in json.dumps(plain)
    settings = world.settings(include_location=True, include_description=True)
    async with connect(tmp_path / "second", settings, elicit="accept") as client:
        full = ok(await client.call_tool("calendar_events", arguments))
    event = full["events"][0]
    assert (event["location"], event["description"]) == ("Clinic, Main St 1", "Bring the referral")
    assert "dr@example.org" not in json.dumps(full)


# --- bad input and upstream failures -----------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "needle"),
    [
        ("calendar_events", {"start": "next tuesday", "end": "2026-03-03"}, "ISO 8601"),
        ("calendar_events", {"start": "2026-03-03"}, "needs start and end"),
        ("calendar_events", {"start": "2026-03-05", "end": "2026-03-03"}, "end must be after start"),
        ("calendar_events", {"start": "2026-01-01", "end": "2027-06-01"}, "more than 366 days"),
        ("calendar_availability", {"start": "2026-03-01", "end": "2026-09-01"}, "more than 92 days"),
        ("calendar_create_event", {"title": "x", "start": "2026-03-03T10:00"}, "needs end"),
        ("calendar_create_event", {"title": "x", "start": "2026-03-03", "end": "2026-03-03T10:00"}, "both be dates"),
        (
            "calendar_create_event",
            {"title": "x", "start": "2026-03-03", "recurrence": "FREQ=SECONDLY"},
            "DAILY, WEEKLY",
        ),
        ("calendar_create_event", {"title": "x", "start": "2026-03-03", "recurrence": "every day"}, "RRULE"),
        ("calendar_update_event", {"uid": "abc"}, "at least one of"),
        ("calendar_events", {"start": "2026-03-03", "end": "2026-03-04", "colour": "red"}, "colour"),
    ],
)
async def test_bad_input_says_what_to_fix(tmp_path, world: World, tool: str, arguments: dict, needle: str) -> None:
    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        error = failure(await client.call_tool(tool, arguments))
    assert error["kind"] in {"invalid_arguments", "too_large"}
    assert needle in json.dumps(error)


async def test_wrong_password_is_not_configured_and_never_echoed(tmp_path, world: World) -> None:
    wrong = "hunter2-wrong-password"
    async with connect(tmp_path, world.settings(password=wrong), elicit="accept") as client:
        error = failure(await client.call_tool("calendar_availability", {"start": "2026-03-02", "end": "2026-03-02"}))
        listed = await client.call_tool("calendar_events", {"start": "2026-03-02", "end": "2026-03-02"})
    assert error["kind"] == "not_configured"
    assert "username or password" in error["message"]
    assert wrong not in json.dumps(error) and PASSWORD not in json.dumps(error)
    assert listed.is_error and wrong not in str(listed.content)


async def test_unknown_calendar_name_never_falls_back_to_another(tmp_path, world: World) -> None:
    world.add_person_event(world.private, person_event("Private", at(2, 9), at(2, 10)))
    async with connect(tmp_path, world.settings(calendar="No Such Calendar"), elicit="accept") as client:
        error = failure(await client.call_tool("calendar_availability", {"start": "2026-03-02", "end": "2026-03-02"}))
    assert error["kind"] == "not_configured"
    assert "No Such Calendar" in error["message"]


async def test_calendar_by_url(tmp_path, world: World) -> None:
    world.add_person_event(world.shared, person_event("Busy", at(2, 9), at(2, 10)))
    async with connect(tmp_path, world.settings(calendar=str(world.shared.url)), elicit="accept") as client:
        result = ok(await client.call_tool("calendar_availability", {"start": "2026-03-02", "end": "2026-03-02"}))
    assert len(result["busy"]) == 1
    missing_url = str(world.server.url) + "alice/not-a-calendar/"
    async with connect(tmp_path / "b", world.settings(calendar=missing_url), elicit="accept") as client:
        error = failure(await client.call_tool("calendar_availability", {"start": "2026-03-02", "end": "2026-03-02"}))
    assert error["kind"] == "not_configured"


async def test_unreachable_server_is_an_upstream_error(tmp_path, world: World) -> None:
    from tests.servers.calendar_fixtures import free_port

    url = f"http://127.0.0.1:{free_port()}/"
    async with connect(tmp_path, world.settings(url=url), elicit="accept") as client:
        error = failure(await client.call_tool("calendar_availability", {"start": "2026-03-02", "end": "2026-03-02"}))
    assert error["kind"] == "upstream_error"
    assert "cannot reach" in error["message"] and PASSWORD not in json.dumps(error)


async def test_silent_server_times_out(tmp_path, world: World) -> None:
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/"
        settings = world.settings(url=url, timeout_seconds=0.5)
        async with connect(tmp_path, settings, elicit="accept") as client:
            error = failure(
                await client.call_tool("calendar_availability", {"start": "2026-03-02", "end": "2026-03-02"})
            )
    assert error["kind"] == "timeout"


async def test_confirmation_round_trip_on_the_2026_protocol(tmp_path, world: World) -> None:
    world.add_person_event(world.shared, person_event("Doctor", at(3, 8), at(3, 9)))
    async with connect(tmp_path, world.settings(), elicit="accept", mode="2026-07-28") as client:
        shown = ok(await client.call_tool("calendar_events", {"start": "2026-03-03", "end": "2026-03-03"}))
    assert [event["title"] for event in shown["events"]] == ["Doctor"]
    async with connect(tmp_path, world.settings(), elicit="decline", mode="2026-07-28") as client:
        refused = failure(await client.call_tool("calendar_events", {"start": "2026-03-03", "end": "2026-03-03"}))
    assert refused["kind"] == "declined_by_user"


@pytest.mark.parametrize("uid", ['"><D:href>x</D:href>', "abc%", "../other/uid", "*"])
async def test_hostile_uids_find_nothing(tmp_path, world: World, uid: str) -> None:
    world.add_person_event(world.shared, person_event("Doctor", at(3, 8), at(3, 9), uid="person-abc-123"))
    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        found = failure(await client.call_tool("calendar_events", {"uid": uid}))
        deleted = failure(await client.call_tool("calendar_delete_event", {"uid": uid}))
    assert found["kind"] == "not_found" and deleted["kind"] == "not_found"
    assert "Doctor" in stored(world, "person-abc-123")


async def test_control_characters_in_uid_are_refused(tmp_path, world: World) -> None:
    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        error = failure(await client.call_tool("calendar_events", {"uid": "abc\r\nSUMMARY:x"}))
    assert error["kind"] == "invalid_arguments"


async def test_floating_and_foreign_zone_events_are_read_in_the_right_zone(tmp_path, world: World) -> None:
    floating = person_event("Floating", at(2, 15), at(2, 16))
    floating = floating.replace("DTSTART:20260302T140000Z", "DTSTART:20260302T150000")
    floating = floating.replace("DTEND:20260302T150000Z", "DTEND:20260302T160000")
    assert "DTSTART:20260302T150000\r\n" in floating
    world.add_person_event(world.shared, floating)
    new_york = person_event("New York call", at(2, 13), at(2, 14))
    new_york = new_york.replace("DTSTART:20260302T120000Z", "DTSTART;TZID=America/New_York:20260302T070000")
    new_york = new_york.replace("DTEND:20260302T130000Z", "DTEND;TZID=America/New_York:20260302T080000")
    assert "TZID=America/New_York:20260302T070000" in new_york
    world.add_person_event(world.shared, new_york)
    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        busy = ok(await client.call_tool("calendar_availability", {"start": "2026-03-02", "end": "2026-03-02"}))
    assert busy["busy"] == [
        {"start": "2026-03-02T13:00:00+01:00", "end": "2026-03-02T14:00:00+01:00", "all_day": False},
        {"start": "2026-03-02T15:00:00+01:00", "end": "2026-03-02T16:00:00+01:00", "all_day": False},
    ]


async def test_uid_lookup_checks_content_not_file_names(tmp_path, world: World) -> None:
    import caldav

    with world.server.client() as dav:
        shared = dav.calendar(url=world.shared.url)
        decoy = person_event("Decoy", at(3, 8), at(3, 9), uid="decoy-uid")
        caldav.Event(dav, url=shared.url.join("target-uid.ics"), data=decoy, parent=shared).save()
        real = person_event("Real", at(4, 8), at(4, 9), uid="real-uid")
        caldav.Event(dav, url=shared.url.join("elsewhere.ics"), data=real, parent=shared).save()
    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        missing = failure(await client.call_tool("calendar_events", {"uid": "target-uid"}))
        found = ok(await client.call_tool("calendar_events", {"uid": "real-uid"}))
    assert missing["kind"] == "not_found"
    assert [event["title"] for event in found["events"]] == ["Real"]


async def test_a_series_can_be_given_a_new_rule_or_stop_repeating(tmp_path, world: World) -> None:
    month = {"start": "2026-03-01", "end": "2026-03-31"}
    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        uid = ok(
            await client.call_tool(
                "calendar_create_event",
                {"title": "Run", "start": "2026-03-02", "recurrence": "FREQ=WEEKLY;COUNT=3"},
            )
        )["event"]["uid"]
        ok(await client.call_tool("calendar_delete_event", {"uid": uid, "occurrence": "2026-03-09"}))
        dates = [e["start"] for e in ok(await client.call_tool("calendar_events", month))["events"]]
        assert dates == ["2026-03-02", "2026-03-16"]
        ok(await client.call_tool("calendar_update_event", {"uid": uid, "recurrence": "FREQ=DAILY;COUNT=2"}))
        dates = [e["start"] for e in ok(await client.call_tool("calendar_events", month))["events"]]
        assert dates == ["2026-03-02", "2026-03-03"]
        ok(await client.call_tool("calendar_update_event", {"uid": uid, "recurrence": ""}))
        events = ok(await client.call_tool("calendar_events", month))["events"]
        assert [(e["start"], e["recurrence_id"], e["recurrence"]) for e in events] == [("2026-03-02", None, None)]
        bad = failure(await client.call_tool("calendar_update_event", {"uid": uid, "recurrence": "FREQ=MINUTELY"}))
        assert bad["kind"] == "invalid_arguments"
        single = failure(await client.call_tool("calendar_delete_event", {"uid": uid, "occurrence": "2026-03-02"}))
        assert single["kind"] == "invalid_arguments" and "does not repeat" in single["message"]


async def test_each_page_is_judged_on_its_own_events(tmp_path, world: World) -> None:
    async with connect(tmp_path, world.settings(), elicit="accept") as client:
        for day in (2, 3):
            ok(
                await client.call_tool(
                    "calendar_create_event",
                    {"title": f"Mine {day}", "start": f"2026-03-0{day}T08:00", "end": f"2026-03-0{day}T09:00"},
                )
            )
    world.add_person_event(world.shared, person_event("Theirs", at(4, 8), at(4, 9)))
    arguments = {"start": "2026-03-01", "end": "2026-03-07", "limit": 2}
    async with connect(tmp_path, world.settings(), elicit=None) as client:
        first = ok(await client.call_tool("calendar_events", arguments))
        assert [e["title"] for e in first["events"]] == ["Mine 2", "Mine 3"]
        second = failure(await client.call_tool("calendar_events", arguments | {"cursor": first["next_cursor"]}))
    assert second["kind"] == "approval_required"
