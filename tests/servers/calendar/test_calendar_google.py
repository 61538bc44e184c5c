"""The calendar's Google backend: finding its one calendar, the scopes it asks for, Google's errors.

The behaviour shared with CalDAV is tested on both backends in test_calendar_shared.py.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from mcp_tools.servers.google import scopes
from tests.harness import connect, failure, ok
from tests.servers.calendar.fixtures import GoogleUnderTest
from tests.servers.fake_google import FakeCalendar, FakeGoogle
from tests.servers.gmail.fixtures import sign_in

pytestmark = pytest.mark.anyio
DAY = {"start": "2026-03-02", "end": "2026-03-02"}
BUSY_NINE = {"start": {"dateTime": "2026-03-02T08:00:00Z"}, "end": {"dateTime": "2026-03-02T09:00:00Z"}}


@pytest.fixture
def cal(tmp_path: Path, google: FakeGoogle, gcal: FakeCalendar) -> GoogleUnderTest:
    return GoogleUnderTest(tmp_path, google, gcal)


def signed_in(tmp_path: Path, google: FakeGoogle, granted: list[str], section: dict[str, Any]) -> dict[str, Any]:
    """Settings for another sign-in with only `granted`, in its own folder under tmp_path."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    settings = sign_in(tmp_path, google, granted=granted, servers=["calendar"])
    return {**settings, "calendar": {"backend": "google", "timezone": "Europe/Berlin", **section}}


async def create(client: Any, title: str = "Mine", **extra: str) -> dict[str, Any]:
    arguments = {"title": title, "start": "2026-03-03T10:00", "end": "2026-03-03T11:00", **extra}
    return ok(await client.call_tool("calendar_create_event", arguments))["event"]


# --- the one calendar ----------------------------------------------------------------------------


async def test_the_calendar_is_found_by_name_once_and_no_other_is_read(tmp_path, google: FakeGoogle, cal) -> None:
    cal.fake.add_event(cal.primary, {"summary": "Primary thing", **BUSY_NINE})
    cal.fake.add_event(cal.private, {"summary": "Private thing", **BUSY_NINE})
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        busy = ok(await client.call_tool("calendar_availability", DAY))
        listed = ok(await client.call_tool("calendar_events", DAY))
        ok(await client.call_tool("calendar_availability", DAY))
    assert busy["busy"] == [] and listed["events"] == []
    assert google.calls.count("calendar.calendarList.list") == 1
    assert all(
        call in {"calendar.calendarList.list", "calendar.freebusy.query", "calendar.events.list"}
        for call in google.calls
    )
    text = json.dumps([busy, listed])
    assert "Private" not in text and google.account not in text


async def test_a_calendar_id_needs_no_listing_and_busy_times_need_only_freebusy(
    tmp_path, google: FakeGoogle, cal
) -> None:
    cal.fake.add_event(cal.shared, {"summary": "Dentist", **BUSY_NINE})
    settings = signed_in(tmp_path / "fb", google, [scopes.CALENDAR_FREEBUSY], {"calendar_id": cal.shared.id})
    async with connect(tmp_path / "fb", settings, elicit="accept") as client:
        busy = ok(await client.call_tool("calendar_availability", DAY))
        details = failure(await client.call_tool("calendar_events", DAY))
    assert busy["busy"] == [
        {"start": "2026-03-02T09:00:00+01:00", "end": "2026-03-02T10:00:00+01:00", "all_day": False}
    ]
    assert "calendar.calendarList.list" not in google.calls
    assert details["kind"] == "not_configured" and details["missing_scopes"] == ["calendar.readonly"]
    assert "Dentist" not in json.dumps(details)


async def test_finding_the_calendar_by_name_needs_the_read_scope(tmp_path, google: FakeGoogle, cal) -> None:
    settings = signed_in(tmp_path / "fb", google, [scopes.CALENDAR_FREEBUSY], {"calendar": cal.shared.summary})
    async with connect(tmp_path / "fb", settings, elicit="accept") as client:
        error = failure(await client.call_tool("calendar_availability", DAY))
    assert error["kind"] == "not_configured" and "calendar.readonly" in error["message"]
    assert "calendar_id" in error["hint"]


@pytest.mark.parametrize(
    "section", [{"calendar": "No Such Calendar"}, {"calendar_id": "nope@group.calendar.google.com"}]
)
async def test_an_unknown_calendar_never_falls_back_to_another(tmp_path, cal, section: dict[str, str]) -> None:
    cal.fake.add_event(cal.primary, {"summary": "Primary thing", **BUSY_NINE})
    settings = cal.settings(**section)
    if "calendar_id" in section:
        settings["calendar"].pop("calendar")
    async with connect(tmp_path, settings, elicit="accept") as client:
        busy = failure(await client.call_tool("calendar_availability", DAY))
        listed = failure(await client.call_tool("calendar_events", DAY))
    assert busy["kind"] == listed["kind"] == "not_configured"
    assert next(iter(section.values())) in busy["message"]


async def test_two_calendars_of_the_same_name_are_not_guessed_between(tmp_path, cal) -> None:
    cal.fake.add_calendar(cal.shared.summary)
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        error = failure(await client.call_tool("calendar_availability", DAY))
    assert error["kind"] == "not_configured" and "2 calendars" in error["message"]
    assert "calendar_id" in error["hint"]


async def test_the_check_command_names_the_calendar(tmp_path, cal, capsys: pytest.CaptureFixture) -> None:
    from mcp_tools.composition.app import build_app
    from mcp_tools.servers import calendar as calendar_ns
    from tests.harness import make_config

    service = build_app(make_config(tmp_path, cal.settings())).services["calendar"]
    (command,) = calendar_ns.NAMESPACE.commands
    assert await command.run(service, argparse.Namespace()) == 0
    assert f"Google calendar 'AI Assistant Shared' ({cal.shared.id})" in capsys.readouterr().out


# --- fields and ids ------------------------------------------------------------------------------------


async def test_attendees_never_and_notes_only_of_the_assistants_own_events(tmp_path, cal) -> None:
    cal.fake.add_event(
        cal.shared,
        {
            "summary": "Doctor",
            "location": "Clinic, Main St 1",
            "description": "Bring the referral",
            "attendees": [{"email": "dr@example.org"}],
            **BUSY_NINE,
        },
    )
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        mine = await create(client, location="Room 4", description="Agenda: budget")
        shown = ok(await client.call_tool("calendar_events", {"start": "2026-03-02", "end": "2026-03-03"}))
    assert (mine["location"], mine["description"]) == ("Room 4", "Agenda: budget")
    doctor, own = shown["events"]
    assert (doctor["title"], doctor["location"], doctor["description"]) == ("Doctor", None, None)
    assert (own["location"], own["description"]) == ("Room 4", "Agenda: budget")
    text = json.dumps(shown)
    assert "dr@example.org" not in text and "Clinic" not in text and "referral" not in text


async def test_events_are_created_with_our_own_id_in_the_configured_zone(tmp_path, cal) -> None:
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        event = await create(client, recurrence="FREQ=WEEKLY;COUNT=2")
    stored = cal.fake.stored(cal.shared, event["uid"])
    assert stored["start"] == {"dateTime": "2026-03-03T10:00:00+01:00", "timeZone": "Europe/Berlin"}
    assert stored["recurrence"] == ["RRULE:FREQ=WEEKLY;COUNT=2"]
    state = tmp_path / "state" / "calendar" / "created_events.sqlite3"
    import sqlite3

    with sqlite3.connect(state) as db:
        assert [row[0] for row in db.execute("SELECT uid FROM created_events")] == [event["uid"]]


async def test_all_day_events_are_found_whichever_zone_google_matches_them_in(tmp_path, cal) -> None:
    cal.fake.all_day_in_calendar_zone = True  # the calendar keeps Berlin time; we ask in Honolulu's
    cal.timezone = "Pacific/Honolulu"
    cal.add("Holiday", dt.date(2026, 3, 6), dt.date(2026, 3, 7))
    cal.add("Next day", dt.date(2026, 3, 7), dt.date(2026, 3, 8))
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        evening = ok(
            await client.call_tool("calendar_events", {"start": "2026-03-06T20:00", "end": "2026-03-06T23:00"})
        )
    assert [event["title"] for event in evening["events"]] == ["Holiday"]


@pytest.mark.parametrize("uid", ["../other", "a b", "x" * 1025, "abc%2Fdef"])
async def test_odd_uids_reach_no_request(tmp_path, google: FakeGoogle, cal, uid: str) -> None:
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        found = failure(await client.call_tool("calendar_events", {"uid": uid}))
        deleted = failure(await client.call_tool("calendar_delete_event", {"uid": uid}))
    assert found["kind"] in {"not_found", "invalid_arguments"} and deleted["kind"] in {"not_found", "invalid_arguments"}
    assert not any(call.startswith("calendar.events.") for call in google.calls)


# --- scopes and Google's errors ------------------------------------------------------------------------


async def test_writes_without_the_events_scope_fail_before_asking(tmp_path, google: FakeGoogle, cal) -> None:
    person = cal.add("Dentist", dt.datetime(2026, 3, 2, 8, tzinfo=dt.UTC), dt.datetime(2026, 3, 2, 9, tzinfo=dt.UTC))
    granted = [scopes.CALENDAR_READONLY, scopes.CALENDAR_FREEBUSY]
    settings = signed_in(tmp_path / "ro", google, granted, {"calendar": cal.shared.summary})
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path / "ro", settings, elicit="accept", seen=seen) as client:
        deleted = failure(await client.call_tool("calendar_delete_event", {"uid": person}))
        changed = failure(await client.call_tool("calendar_update_event", {"uid": person, "title": "x"}))
        created = failure(await client.call_tool("calendar_create_event", {"title": "New", "start": "2026-03-04"}))
    assert seen[:-1] == [] and len(seen) == 1  # only the create asked (it has no server precondition)
    for error in (deleted, changed, created):
        assert error["kind"] == "not_configured" and error["missing_scopes"] == ["calendar.events"]
    assert cal.title(person) == "Dentist" and len(cal.shared.events) == 1


@pytest.mark.parametrize(
    ("method", "status", "reason", "times", "kind"),
    [
        ("calendar.events.patch", 412, "conditionNotMet", 1, "conflict"),
        ("calendar.events.delete", 410, "deleted", 1, "not_found"),
        ("calendar.events.get", 404, "notFound", 1, "not_found"),
        ("calendar.events.instances", 403, "insufficientPermissions", 1, "not_configured"),
        ("calendar.events.patch", 403, "forbidden", 1, "denied_by_policy"),
        ("calendar.events.patch", 400, "invalid", 1, "invalid_arguments"),
    ],
)
async def test_google_errors_become_our_kinds(
    tmp_path, google: FakeGoogle, cal, method: str, status: int, reason: str, times: int, kind: str
) -> None:
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        uid = (await create(client, recurrence="FREQ=DAILY;COUNT=3"))["uid"]
        google.fail(method, status, reason, times=times, message=f"injected {reason}")
        tool = "calendar_delete_event" if "delete" in method else "calendar_update_event"
        arguments = {"uid": uid, "occurrence": "2026-03-04T10:00"} | ({} if "delete" in method else {"title": "x"})
        error = failure(await client.call_tool(tool, arguments))
    assert error["kind"] == kind, error
    assert "ya29." not in json.dumps(error)


async def test_a_rate_limit_is_retried_and_a_lasting_one_says_when_to_come_back(
    tmp_path, google: FakeGoogle, cal
) -> None:
    cal.fake.add_event(cal.shared, {"summary": "Dentist", **BUSY_NINE})
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        google.fail("calendar.freebusy.query", 429, "rateLimitExceeded", times=1)
        busy = ok(await client.call_tool("calendar_availability", DAY))
        google.fail("calendar.events.list", 429, "rateLimitExceeded", times=5, retry_after=120)
        error = failure(await client.call_tool("calendar_events", DAY))
    assert len(busy["busy"]) == 1 and google.calls.count("calendar.freebusy.query") == 2
    assert error["kind"] == "upstream_error" and error["retry_after_seconds"] == 120


# --- configuration and sign-in ---------------------------------------------------------------------------


def test_the_google_backend_says_what_to_set(tmp_path: Path) -> None:
    from mcp_tools.core.tooling import Environment, NotConfigured
    from mcp_tools.servers import calendar as calendar_ns
    from mcp_tools.servers.calendar.config import CalendarConfig

    env = Environment(tmp_path / "data", tmp_path / "state", {})
    with pytest.raises(NotConfigured, match=r"set \[calendar\] calendar .*calendar_id"):
        calendar_ns.create(CalendarConfig(backend="google"), env)
    with pytest.raises(NotConfigured, match=r"client_secrets"):
        calendar_ns.create(CalendarConfig(backend="google", calendar="AI Assistant Shared"), env)


def test_choosing_the_backend_loads_no_library_of_the_other() -> None:
    code = (
        "import sys, mcp_tools.servers.calendar as c; "
        "print(sorted(m for m in ('caldav', 'icalendar', 'googleapiclient', 'httplib2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("section", "policy", "tools", "asked"),
    [
        ('backend = "google"', "", 6, [scopes.CALENDAR_EVENTS, scopes.CALENDAR_FREEBUSY, scopes.CALENDAR_READONLY]),
        ('backend = "google"', "read_only = true", 2, [scopes.CALENDAR_FREEBUSY, scopes.CALENDAR_READONLY]),
        ('url = "https://caldav.example.com/"', "", 0, []),
    ],
)
def test_sign_in_asks_calendar_scopes_only_for_the_google_backend_and_enabled_tools(
    tmp_path: Path, section: str, policy: str, tools: int, asked: list[str]
) -> None:
    from mcp_tools.cli.google import enabled_tools
    from mcp_tools.core.config import load_config

    config_file = tmp_path / "config.toml"
    config_file.write_text(
        f'[server]\nservers = ["calendar"]\n\n[calendar]\n{section}\ncalendar = "Shared"\n\n[policy]\n{policy}\n'
    )
    names = enabled_tools(load_config(config_file, {}))
    assert len(names) == tools and all(name.startswith("calendar.") for name in names)
    assert scopes.requested_scopes(names) == asked


def test_each_backend_names_the_extra_it_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mcp_tools.servers.calendar as calendar_ns
    from mcp_tools.core.tooling import Environment, NotConfigured
    from mcp_tools.servers.calendar.config import CalendarConfig
    from mcp_tools.servers.google import config as google_config

    def no_google(extra: str) -> None:
        error = ImportError("googleapiclient is missing")
        error.name = "googleapiclient"
        raise error

    env = Environment(tmp_path / "data", tmp_path / "state", {})
    monkeypatch.setattr(calendar_ns, "missing_modules", lambda names: ["caldav"])
    monkeypatch.setattr(google_config, "require_libraries", no_google)
    with pytest.raises(NotConfigured, match=r"caldav.*install -e .*\[calendar\]"):
        calendar_ns.create(CalendarConfig(url="https://dav.example.com/", calendar="C"), env)
    with pytest.raises(NotConfigured, match=r"googleapiclient.*install -e .*\[google\].*backend = \"google\""):
        calendar_ns.create(CalendarConfig(backend="google", calendar="C"), env)
