"""The calendar namespace end to end on CalDAV: a real MCP client, the policy layer, a real Radicale server.

The behaviour both backends share is tested on both in test_calendar_shared.py.
"""

from __future__ import annotations

import datetime as dt
import json
from zoneinfo import ZoneInfo

import mcp_types as types
import pytest

from tests.harness import annotation, connect, failure, ok
from tests.servers.calendar.fixtures import (  # noqa: F401  (fixtures)
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
        "calendar_respond",
    }
    assert annotation(tools["calendar_availability"], "read_only_hint") is True
    assert annotation(tools["calendar_delete_event"], "destructive_hint") is True
    assert "Risk: high." in tools["calendar_create_event"].description


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
    from tests.servers.calendar.fixtures import free_port

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
