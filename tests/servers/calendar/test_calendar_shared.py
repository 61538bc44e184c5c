"""The calendar's behaviour on both backends: the same cases on Radicale (CalDAV) and on the fake
Google Calendar, over the real MCP client and the policy layer."""

from __future__ import annotations

import datetime as dt
import json
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


def at(day: int, hour: int, minute: int = 0, month: int = 3) -> dt.datetime:
    return dt.datetime(2026, month, day, hour, minute, tzinfo=BERLIN)


async def test_availability_shows_busy_slots_without_titles_or_other_calendars(tmp_path, cal: Cal) -> None:
    cal.add("Dentist appointment", at(2, 9), at(2, 10))
    cal.add("Therapy session", at(2, 9, 30), at(2, 11))
    cal.add("Lunch with Sam", at(2, 13), at(2, 14))
    cal.add("Secret interview", at(2, 15), at(2, 16), private=True)
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, cal.settings(), elicit=None, seen=seen) as client:
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


async def test_free_slots_within_working_hours(tmp_path, cal: Cal) -> None:
    cal.add("Standup", at(2, 9), at(2, 9, 30))
    cal.add("Review", at(2, 11), at(2, 16))
    async with connect(tmp_path, cal.settings(working_hours="09:00-17:00")) as client:
        result = ok(
            await client.call_tool(
                "calendar_availability", {"start": "2026-03-02", "end": "2026-03-03", "min_free_minutes": 60}
            )
        )
    assert result["free"] == [
        {"start": "2026-03-02T09:30:00+01:00", "end": "2026-03-02T11:00:00+01:00", "minutes": 90},
        {"start": "2026-03-02T16:00:00+01:00", "end": "2026-03-02T17:00:00+01:00", "minutes": 60},
        {"start": "2026-03-03T09:00:00+01:00", "end": "2026-03-03T17:00:00+01:00", "minutes": 480},
    ]


async def test_other_calendars_stay_invisible(tmp_path, cal: Cal) -> None:
    hidden = cal.add("Hidden", at(3, 8), at(3, 9), private=True)
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        listed = ok(await client.call_tool("calendar_events", {"start": "2026-03-02", "end": "2026-03-08"}))
        missing = failure(await client.call_tool("calendar_events", {"uid": hidden}))
        deleted = failure(await client.call_tool("calendar_delete_event", {"uid": hidden}))
    assert listed["events"] == []
    assert missing["kind"] == "not_found" and deleted["kind"] == "not_found"
    assert cal.title(hidden, private=True) == "Hidden"


async def test_own_events_are_read_without_confirmation(tmp_path, cal: Cal) -> None:
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        created = ok(
            await client.call_tool(
                "calendar_create_event",
                {"title": "Focus time", "start": "2026-03-04T14:00", "end": "2026-03-04T15:30"},
            )
        )["event"]
    assert created["start"] == "2026-03-04T14:00:00+01:00"
    assert created["created_by_assistant"] is True
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, cal.settings(), elicit=None, seen=seen) as client:
        listed = ok(await client.call_tool("calendar_events", {"start": "2026-03-02", "end": "2026-03-08"}))
        by_uid = ok(await client.call_tool("calendar_events", {"uid": created["uid"]}))
    assert seen == []
    assert [(e["title"], e["start"], e["end"]) for e in listed["events"]] == [
        ("Focus time", "2026-03-04T14:00:00+01:00", "2026-03-04T15:30:00+01:00")
    ]
    assert by_uid["events"][0]["uid"] == created["uid"]


async def test_person_events_need_confirmation_naming_count_and_range(tmp_path, cal: Cal) -> None:
    cal.add("Doctor", at(3, 8), at(3, 9))
    cal.add("Parents evening", at(5, 18), at(5, 19))
    cal.add("Private thing", at(4, 8), at(4, 9), private=True)
    arguments = {"start": "2026-03-02", "end": "2026-03-08"}

    async with connect(tmp_path, cal.settings(), elicit=None) as client:
        refused = failure(await client.call_tool("calendar_events", arguments))
    assert refused["kind"] == "approval_required"

    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, cal.settings(), elicit="decline", seen=seen) as client:
        declined = failure(await client.call_tool("calendar_events", arguments))
    assert declined["kind"] == "declined_by_user"
    assert "Doctor" not in json.dumps(declined)
    message = seen[0].message
    assert "2 events you created yourself" in message
    assert "2026-03-02T00:00:00+01:00 to 2026-03-09T00:00:00+01:00" in message

    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        shown = ok(await client.call_tool("calendar_events", arguments))
    assert [event["title"] for event in shown["events"]] == ["Doctor", "Parents evening"]
    assert all(event["created_by_assistant"] is False for event in shown["events"])
    assert "Private thing" not in json.dumps(shown)


async def test_mixed_answer_counts_only_the_persons_events(tmp_path, cal: Cal) -> None:
    cal.add("Doctor", at(3, 8), at(3, 9))
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, cal.settings(), elicit="accept", seen=seen) as client:
        ok(
            await client.call_tool(
                "calendar_create_event", {"title": "Mine", "start": "2026-03-03T10:00", "end": "2026-03-03T11:00"}
            )
        )
        shown = ok(await client.call_tool("calendar_events", {"start": "2026-03-03", "end": "2026-03-03"}))
    assert "1 event you created yourself" in seen[-1].message
    assert {(e["title"], e["created_by_assistant"]) for e in shown["events"]} == {("Doctor", False), ("Mine", True)}


async def test_weekly_series_across_dst_with_one_occurrence_moved_and_one_deleted(tmp_path, cal: Cal) -> None:
    month = {"start": "2026-03-01", "end": "2026-03-31"}
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
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
        assert {e["recurrence"] for e in listed} == {"FREQ=WEEKLY;BYDAY=MO"}

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
        busy = ok(await client.call_tool("calendar_availability", {"start": "2026-03-23", "end": "2026-03-23"}))
        assert busy["busy"] == []  # the deleted occurrence no longer blocks its slot
        # Changing the moved occurrence again edits the same one.
        ok(
            await client.call_tool(
                "calendar_update_event",
                {"uid": uid, "occurrence": "2026-03-16T10:00:00+01:00", "title": "Team sync (moved twice)"},
            )
        )
        moved = ok(await client.call_tool("calendar_events", {"start": "2026-03-17", "end": "2026-03-17"}))["events"]
        assert [(e["title"], e["start"]) for e in moved] == [("Team sync (moved twice)", "2026-03-17T15:00:00+01:00")]
        missing = failure(
            await client.call_tool(
                "calendar_update_event", {"uid": uid, "occurrence": "2026-03-18T10:00", "title": "x"}
            )
        )
        assert missing["kind"] == "not_found"
        gone = failure(
            await client.call_tool("calendar_delete_event", {"uid": uid, "occurrence": "2026-03-23T10:00:00+01:00"})
        )
        assert gone["kind"] == "not_found"
        ok(await client.call_tool("calendar_delete_event", {"uid": uid}))
        assert ok(await client.call_tool("calendar_events", month))["events"] == []
    assert cal.title(uid) is None


@pytest.mark.parametrize(("zone", "offset"), [("Pacific/Honolulu", "-10:00"), ("Pacific/Tongatapu", "+13:00")])
async def test_all_day_events_keep_their_date_far_from_utc(tmp_path, cal: Cal, zone: str, offset: str) -> None:
    cal.timezone = zone
    cal.add("Holiday", dt.date(2026, 3, 6), dt.date(2026, 3, 7))
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        created = ok(
            await client.call_tool(
                "calendar_create_event", {"title": "Trip", "start": "2026-03-05", "end": "2026-03-06"}
            )
        )["event"]
        assert (created["start"], created["end"], created["all_day"]) == ("2026-03-05", "2026-03-06", True)
        assert cal.all_day_dates(created["uid"]) == ("2026-03-05", "2026-03-07")  # stored end is exclusive

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
        moved = ok(await client.call_tool("calendar_update_event", {"uid": created["uid"], "start": "2026-03-09"}))
    assert busy["busy"] == [{"start": "2026-03-05", "end": "2026-03-06", "all_day": True}]
    assert busy["start"] == f"2026-03-01T00:00:00{offset}"
    assert (moved["event"]["start"], moved["event"]["end"]) == ("2026-03-09", "2026-03-10")  # the length is kept
    assert cal.all_day_dates(created["uid"]) == ("2026-03-09", "2026-03-11")


async def test_writes_need_confirmation_even_for_own_events(tmp_path, cal: Cal) -> None:
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        uid = ok(await client.call_tool("calendar_create_event", {"title": "Mine", "start": "2026-03-10"}))["event"][
            "uid"
        ]
    async with connect(tmp_path, cal.settings(), elicit=None) as client:
        result = failure(await client.call_tool("calendar_delete_event", {"uid": uid}))
    assert result["kind"] == "approval_required"
    assert cal.title(uid) == "Mine"


async def test_pagination_walks_every_event_once(tmp_path, cal: Cal) -> None:
    for day in range(2, 9):
        cal.add(f"Day {day}", at(day, 9), at(day, 10))
    arguments = {"start": "2026-03-01", "end": "2026-03-10", "limit": 3}
    titles: list[str] = []
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
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
async def test_bad_input_says_what_to_fix(tmp_path, cal: Cal, tool: str, arguments: dict, needle: str) -> None:
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        error = failure(await client.call_tool(tool, arguments))
    assert error["kind"] in {"invalid_arguments", "too_large"}
    assert needle in json.dumps(error)


async def test_a_series_can_be_given_a_new_rule_or_stop_repeating(tmp_path, cal: Cal) -> None:
    month = {"start": "2026-03-01", "end": "2026-03-31"}
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
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


async def test_each_page_is_judged_on_its_own_events(tmp_path, cal: Cal) -> None:
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        for day in (2, 3):
            ok(
                await client.call_tool(
                    "calendar_create_event",
                    {"title": f"Mine {day}", "start": f"2026-03-0{day}T08:00", "end": f"2026-03-0{day}T09:00"},
                )
            )
    cal.add("Theirs", at(4, 8), at(4, 9))
    arguments = {"start": "2026-03-01", "end": "2026-03-07", "limit": 2}
    async with connect(tmp_path, cal.settings(), elicit=None) as client:
        first = ok(await client.call_tool("calendar_events", arguments))
        assert [e["title"] for e in first["events"]] == ["Mine 2", "Mine 3"]
        second = failure(await client.call_tool("calendar_events", arguments | {"cursor": first["next_cursor"]}))
    assert second["kind"] == "approval_required"
