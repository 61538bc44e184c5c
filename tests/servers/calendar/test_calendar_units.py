"""The calendar namespace's pure parts and its service, without the MCP layer."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from mcp_tools.core.tooling import CallContext, Environment, NotConfigured, Risk, ToolFailure
from mcp_tools.servers import calendar as calendar_ns
from mcp_tools.servers.calendar.config import CalendarConfig
from mcp_tools.servers.calendar.service import Invite
from mcp_tools.servers.calendar.timeutil import (
    Interval,
    free_slots,
    merge_day_spans,
    merge_intervals,
    parse_moment,
    parse_range,
)
from mcp_tools.servers.calendar.tools import EventsArgs, EventsFacts, describe_events, events, events_risk
from tests.servers.calendar.fixtures import (  # noqa: F401  (fixtures)
    PASSWORD,
    USERNAME,
    World,
    person_event,
    radicale_server,
    world_fixture,
)

BERLIN = ZoneInfo("Europe/Berlin")
SECRET = "s3cret-app-password"


def env(tmp_path: Path, **variables: str) -> Environment:
    return Environment(tmp_path / "data", tmp_path / "state", variables)


# --- configuration -----------------------------------------------------------------------------


def test_without_url_the_namespace_says_what_to_set(tmp_path: Path) -> None:
    with pytest.raises(NotConfigured, match=r"set \[calendar\] url .*username, calendar.*MCP_TOOLS_CALDAV_PASSWORD"):
        calendar_ns.create(CalendarConfig(), env(tmp_path))
    assert calendar_ns.NAMESPACE.needs_account is True


def test_a_calendar_must_be_named_never_guessed(tmp_path: Path) -> None:
    with pytest.raises(NotConfigured, match=r"set \[calendar\] calendar"):
        calendar_ns.create(CalendarConfig(url="https://caldav.icloud.com/", username="me"), env(tmp_path))


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("ftp://example.com/", "http"),
        ("https://me:pw@example.com/", "must not contain credentials"),
        ("http://dav.example.com/", "send the password in clear"),
    ],
)
def test_unsafe_urls_are_refused(tmp_path: Path, url: str, needle: str) -> None:
    with pytest.raises(NotConfigured, match=needle) as caught:
        calendar_ns.create(CalendarConfig(url=url, calendar="C"), env(tmp_path))
    assert "pw@" not in str(caught.value)


def test_plain_http_is_allowed_to_loopback_or_when_asked(tmp_path: Path) -> None:
    calendar_ns.create(CalendarConfig(url="http://127.0.0.1:5232/", calendar="C"), env(tmp_path))
    calendar_ns.create(CalendarConfig(url="http://nas.lan/dav/", calendar="C", allow_insecure_http=True), env(tmp_path))


def test_password_never_shows_in_reprs(tmp_path: Path) -> None:
    config = CalendarConfig(url="https://dav.example.com/", calendar="C", username="me", password=SECRET)
    service = calendar_ns.create(config, env(tmp_path))
    for text in (repr(config), str(config), repr(service), repr(service.settings), config.model_dump_json()):
        assert SECRET not in text


def test_password_from_the_environment_wins(tmp_path: Path) -> None:
    config = CalendarConfig(url="https://dav.example.com/", calendar="C", password="from-config")
    service = calendar_ns.create(config, env(tmp_path, MCP_TOOLS_CALDAV_PASSWORD=SECRET))
    assert service.settings.password is not None
    assert service.settings.password.get_secret_value() == SECRET


def test_timezone_default_and_validation(tmp_path: Path) -> None:
    base = {"url": "https://dav.example.com/", "calendar": "C"}
    service = calendar_ns.create(CalendarConfig(**base), env(tmp_path, TZ="America/Chicago"))
    assert service.zone.key == "America/Chicago"
    service = calendar_ns.create(CalendarConfig(**base, timezone="Asia/Tokyo"), env(tmp_path, TZ="UTC"))
    assert service.zone.key == "Asia/Tokyo"
    with pytest.raises(NotConfigured, match="not an IANA zone"):
        calendar_ns.create(CalendarConfig(**base, timezone="Mars/Olympus"), env(tmp_path))


@pytest.mark.parametrize(
    "section",
    [{"working_hours": "9-5"}, {"working_hours": "17:00-09:00"}, {"working_days": ["mon", "funday"]}, {"nope": 1}],
)
def test_bad_config_values_are_rejected(section: dict) -> None:
    with pytest.raises(ValidationError):
        CalendarConfig(**section)


def test_create_does_no_io_and_import_stays_light(tmp_path: Path) -> None:
    # An unroutable URL: create must not try to reach it.
    calendar_ns.create(CalendarConfig(url="https://192.0.2.1/", calendar="C"), env(tmp_path))
    code = (
        "import sys, mcp_tools.servers.calendar as c; "
        "print(sorted(m for m in ('caldav','icalendar','recurring_ical_events','niquests') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --- time arithmetic ---------------------------------------------------------------------------


def test_naive_input_is_read_in_the_configured_zone() -> None:
    moment = parse_moment("2026-07-01T09:00", BERLIN, "start")
    assert isinstance(moment, dt.datetime) and moment.utcoffset() == dt.timedelta(hours=2)
    assert parse_moment("2026-07-01", BERLIN, "start") == dt.date(2026, 7, 1)
    assert parse_moment("2026-07-01T09:00:00Z", BERLIN, "start").utcoffset() == dt.timedelta(0)
    with pytest.raises(ToolFailure) as caught:
        parse_moment("tomorrow", BERLIN, "start")
    assert caught.value.kind == "invalid_arguments" and caught.value.hint


def test_a_local_time_the_clocks_skip_is_refused_with_the_time_it_means() -> None:
    """02:30 on the spring-forward night does not exist in Berlin; read silently, a one-hour
    event from 02:30 to 03:30 became an event of no length."""
    with pytest.raises(ToolFailure) as caught:
        parse_moment("2026-03-29T02:30", BERLIN, "start")
    assert caught.value.kind == "invalid_arguments"
    assert "does not exist in Europe/Berlin" in caught.value.message and "03:30" in (caught.value.hint or "")
    assert parse_moment("2026-03-29T02:30:00+01:00", BERLIN, "start").utcoffset() == dt.timedelta(hours=1)
    repeated = parse_moment("2026-10-25T02:30", BERLIN, "start")  # the hour that happens twice: the first one
    assert isinstance(repeated, dt.datetime) and repeated.utcoffset() == dt.timedelta(hours=2)


def test_range_of_dates_covers_whole_local_days() -> None:
    start, end = parse_range("2026-03-29", "2026-03-29", BERLIN, 10)
    assert start.astimezone(BERLIN).isoformat() == "2026-03-29T00:00:00+01:00"
    assert end.astimezone(BERLIN).isoformat() == "2026-03-30T00:00:00+02:00"
    assert end.astimezone(dt.UTC) - start.astimezone(dt.UTC) == dt.timedelta(hours=23)  # summer time starts


def test_merge_intervals_joins_overlaps_and_touching() -> None:
    def at(hour: int) -> dt.datetime:
        return dt.datetime(2026, 3, 2, hour, tzinfo=BERLIN)

    merged = merge_intervals([Interval.of(at(9), at(10)), Interval.of(at(13), at(14)), Interval.of(at(10), at(11))])
    assert merged == [Interval.of(at(9), at(11)), Interval.of(at(13), at(14))]
    assert merge_day_spans(
        [(dt.date(2026, 3, 1), dt.date(2026, 3, 1)), (dt.date(2026, 3, 2), dt.date(2026, 3, 3))]
    ) == [(dt.date(2026, 3, 1), dt.date(2026, 3, 3))]


def test_free_slots_follow_local_working_hours_across_dst() -> None:
    zone = ZoneInfo("America/New_York")
    start, end = parse_range("2026-03-06", "2026-03-09", zone, 10)  # Fri..Mon, DST starts Sun 8 March
    slots = free_slots([], start, end, (dt.time(9), dt.time(17)), frozenset(range(5)), dt.timedelta(hours=1), zone)
    assert [(s.start.astimezone(zone).isoformat(), s.end.astimezone(zone).isoformat()) for s in slots] == [
        ("2026-03-06T09:00:00-05:00", "2026-03-06T17:00:00-05:00"),
        ("2026-03-09T09:00:00-04:00", "2026-03-09T17:00:00-04:00"),
    ]


# --- the read permission, at the service level ------------------------------------------------


def make_service(tmp_path: Path, world: World) -> calendar_ns.CalendarService:
    config = CalendarConfig(**world.section())
    return calendar_ns.create(config, env(tmp_path))


@pytest.mark.anyio
async def test_handler_returns_exactly_what_the_risk_was_judged_on(tmp_path: Path, world: World) -> None:
    service = make_service(tmp_path, world)
    args, facts = EventsArgs(start="2026-03-02", end="2026-03-08"), EventsFacts()
    assert await events_risk(service, args, facts) is Risk.LOW
    assert "0 events" in describe_events(args, facts)
    # The person adds an event between the decision and the run: it is not slipped into this answer.
    world.add_person_event(
        world.shared,
        person_event(
            "Late addition", dt.datetime(2026, 3, 3, 9, tzinfo=BERLIN), dt.datetime(2026, 3, 3, 10, tzinfo=BERLIN)
        ),
    )
    result = await events(service, args, CallContext(), facts)
    assert result.events == []
    fresh, fresh_facts = EventsArgs(start="2026-03-02", end="2026-03-08"), EventsFacts()
    assert await events_risk(service, fresh, fresh_facts) is Risk.HIGH
    assert describe_events(fresh, fresh_facts).startswith(
        "Show details of 1 event you created yourself (2026-03-02T00:00:00+01:00"
    )


@pytest.mark.anyio
async def test_uid_risk_depends_on_who_created_it(tmp_path: Path, world: World) -> None:
    service = make_service(tmp_path, world)
    mine = await service.create("Mine", dt.date(2026, 3, 5), dt.date(2026, 3, 6), None, None, None, Invite())
    world.add_person_event(
        world.shared, person_event("Theirs", dt.date(2026, 3, 5), dt.date(2026, 3, 6), uid="their-uid")
    )
    assert await events_risk(service, EventsArgs(uid=mine.uid), EventsFacts()) is Risk.LOW
    assert await events_risk(service, EventsArgs(uid="their-uid"), EventsFacts()) is Risk.HIGH
    assert await events_risk(service, EventsArgs(uid="missing-uid"), EventsFacts()) is Risk.LOW
    with pytest.raises(ToolFailure) as caught:
        await events(service, EventsArgs(uid="missing-uid"), CallContext(), EventsFacts())
    assert caught.value.kind == "not_found"


@pytest.mark.anyio
async def test_cancelled_and_transparent_events_are_not_busy(tmp_path: Path, world: World) -> None:
    from mcp_tools.servers.calendar.tools import AvailabilityArgs, availability

    nine, ten = dt.datetime(2026, 3, 2, 9, tzinfo=BERLIN), dt.datetime(2026, 3, 2, 10, tzinfo=BERLIN)
    world.add_person_event(world.shared, person_event("Cancelled", nine, ten, extra="STATUS:CANCELLED"))
    world.add_person_event(world.shared, person_event("FYI", nine, ten, extra="TRANSP:TRANSPARENT"))
    service = make_service(tmp_path, world)
    result = await availability(service, AvailabilityArgs(start="2026-03-02", end="2026-03-02"), CallContext())
    assert result.busy == []


@pytest.mark.anyio
async def test_check_command_reports_the_calendar(tmp_path: Path, world: World, capsys: pytest.CaptureFixture) -> None:
    import argparse

    service = make_service(tmp_path, world)
    (command,) = calendar_ns.NAMESPACE.commands
    assert await command.run(service, argparse.Namespace()) == 0
    assert str(world.shared.url) in capsys.readouterr().out
    bad = calendar_ns.create(CalendarConfig(**world.section(password="wrong")), env(tmp_path))
    assert await command.run(bad, argparse.Namespace()) == 1
    out = capsys.readouterr().out
    assert "refused the username or password" in out and "wrong" not in out.replace("refused", "")


@pytest.mark.anyio
async def test_caldav_exchange_dumps_stay_off(tmp_path: Path, world: World) -> None:
    from caldav.lib import error as dav_error

    dav_error.debug_dump_communication = "1"  # as PYTHON_CALDAV_COMMDUMP=1 in the environment would
    try:
        service = make_service(tmp_path, world)
        await service.check()
        assert not dav_error.debug_dump_communication
    finally:
        dav_error.debug_dump_communication = False


@pytest.mark.parametrize("text", ["9999-12-31", "0001-01-01", "9999-12-31T23:59", "1899-12-31"])
def test_moments_at_the_ends_of_the_calendar_are_refused_clearly(text: str) -> None:
    from mcp_tools.servers.calendar.timeutil import parse_moment

    with pytest.raises(ToolFailure) as refused:
        parse_moment(text, ZoneInfo("Pacific/Kiritimati"), "start")
    assert refused.value.kind == "invalid_arguments" and "between the years 1900 and 9000" in refused.value.message
