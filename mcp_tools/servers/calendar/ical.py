"""iCalendar in and out: expanding occurrences, building and editing events.

Imported lazily (icalendar and recurring_ical_events are not free to import). All-day
values stay `date`s end to end so they never shift a day for anyone east or west of UTC.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from zoneinfo import ZoneInfo

import icalendar
import recurring_ical_events

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.calendar.service import Changes, Occurrence, is_all_day, resolve_times
from mcp_tools.servers.calendar.timeutil import Moment, as_aware

PRODID = "-//mcp-tools//calendar//EN"
ALLOWED_FREQUENCIES = frozenset({"DAILY", "WEEKLY", "MONTHLY", "YEARLY"})
MAX_OCCURRENCES = 5000


def parse_calendar(data: str | bytes) -> icalendar.Calendar:
    return icalendar.Calendar.from_ical(data)


def local_span(start: Moment, end: Moment, zone: ZoneInfo) -> tuple[dt.datetime, dt.datetime]:
    """The instants an event covers, all-day days taken in the configured zone."""
    return as_aware(start, zone), as_aware(end, zone)


def expand(
    calendars: Iterable[icalendar.Calendar], start: dt.datetime, end: dt.datetime, zone: ZoneInfo
) -> list[Occurrence]:
    """Occurrences overlapping [start, end), recurring series expanded, sorted by start."""
    found: list[Occurrence] = []
    margin = dt.timedelta(days=1)
    for calendar in calendars:
        recurring = _recurring_uids(calendar)
        rules = _rules_by_uid(calendar)
        query = recurring_ical_events.of(calendar, skip_bad_series=True)
        for component in query.between(start - margin, end + margin):
            occurrence = _occurrence(component, recurring, rules)
            if occurrence is None:
                continue
            first, last = local_span(occurrence.start, occurrence.end, zone)
            if first < end and (last > start or (first == last and first >= start)):
                found.append(occurrence)
            if len(found) > MAX_OCCURRENCES:
                raise ToolFailure(
                    "too_large",
                    f"more than {MAX_OCCURRENCES} events in this range",
                    hint="ask for a shorter range",
                )
    found.sort(key=lambda item: (as_aware(item.start, zone), item.uid))
    return found


def series(calendar: icalendar.Calendar, uid: str) -> Occurrence | None:
    """The series (or single event) with `uid`, as first defined."""
    master = _master(calendar, uid)
    if master is None:
        return None
    return _occurrence(master, _recurring_uids(calendar), _rules_by_uid(calendar), as_series=True)


def _events(calendar: icalendar.Calendar) -> Iterator[icalendar.Event]:
    """The VEVENTs of a calendar (icalendar parses every VEVENT into an `Event`)."""
    for component in calendar.walk("VEVENT"):
        if isinstance(component, icalendar.Event):
            yield component


def _moment(component: icalendar.Component, name: str) -> Moment:
    """The date or date-time of a DTSTART, DTEND or RECURRENCE-ID property."""
    value = component[name]
    if isinstance(value, icalendar.vDDDTypes) and isinstance(value.dt, dt.date):
        return value.dt
    raise ValueError(f"{name} holds no date or date-time")


def _duration(component: icalendar.Component) -> dt.timedelta:
    """The length a DURATION property gives."""
    value = component["duration"]
    if isinstance(value, icalendar.vDDDTypes) and isinstance(value.dt, dt.timedelta):
        return value.dt
    raise ValueError("DURATION holds no duration")


def _recurring_uids(calendar: icalendar.Calendar) -> set[str]:
    uids: set[str] = set()
    for component in _events(calendar):
        if component.get("rrule") or component.get("rdate") or component.get("recurrence-id"):
            uids.add(str(component.get("uid", "")))
    return uids


def _rules_by_uid(calendar: icalendar.Calendar) -> dict[str, str]:
    rules: dict[str, str] = {}
    for component in _events(calendar):
        rule = component.get("rrule")
        if rule is not None and component.get("recurrence-id") is None:
            rules[str(component.get("uid", ""))] = rule.to_ical().decode()
    return rules


def _occurrence(
    component: icalendar.Event, recurring: set[str], rules: dict[str, str], as_series: bool = False
) -> Occurrence | None:
    if str(component.get("status", "")).upper() == "CANCELLED" or component.get("dtstart") is None:
        return None
    uid = str(component.get("uid", ""))
    start = _moment(component, "dtstart")
    end = _end_of(component, start)
    recurrence_id: Moment | None = None
    if uid in recurring and not as_series and component.get("recurrence-id") is not None:
        recurrence_id = _moment(component, "recurrence-id")
    return Occurrence(
        uid=uid,
        title=str(component.get("summary", "")),
        start=start,
        end=end,
        all_day=is_all_day(start),
        recurrence_id=recurrence_id,
        recurrence=rules.get(uid),
        busy=str(component.get("transp", "OPAQUE")).upper() != "TRANSPARENT",
        location=_text(component.get("location")),
        description=_text(component.get("description")),
    )


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _end_of(component: icalendar.Event, start: Moment) -> Moment:
    if component.get("dtend") is not None:
        end = _moment(component, "dtend")
    elif component.get("duration") is not None:
        end = start + _duration(component)
    else:
        end = start + dt.timedelta(days=1) if is_all_day(start) else start
    if is_all_day(start) and isinstance(end, dt.datetime):
        end = end.date()
    return end if end >= start else start


def holds_uid(calendar: icalendar.Calendar, uid: str) -> bool:
    return any(str(component.get("uid", "")) == uid for component in _events(calendar))


def _master(calendar: icalendar.Calendar, uid: str) -> icalendar.Event | None:
    for component in _events(calendar):
        if str(component.get("uid", "")) == uid and component.get("recurrence-id") is None:
            return component
    return None


def check_rule(rule: str) -> icalendar.vRecur:
    """A recurrence rule we are willing to store: parseable and at most daily."""
    text = rule.strip()
    if text.upper().startswith("RRULE:"):
        text = text[6:]
    try:
        parsed: icalendar.vRecur = icalendar.vRecur.from_ical(text)
    except (ValueError, TypeError):
        raise ToolFailure(
            "invalid_arguments",
            f"recurrence is not an RFC 5545 RRULE: {text[:80]!r}",
            hint="for example FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10 or FREQ=MONTHLY;UNTIL=20261231T000000Z",
        ) from None
    frequency = parsed.get("FREQ", [None])[0]
    if frequency not in ALLOWED_FREQUENCIES:
        raise ToolFailure(
            "invalid_arguments",
            "recurrence must be an RRULE with FREQ=DAILY, WEEKLY, MONTHLY or YEARLY",
            hint="for example FREQ=WEEKLY;COUNT=10",
        )
    return parsed


def _stored(moment: Moment, zone: ZoneInfo) -> Moment:
    """Date-times are stored in the configured zone (with a VTIMEZONE); dates stay dates."""
    if isinstance(moment, dt.datetime):
        return moment.astimezone(zone)
    return moment


def new_calendar(
    uid: str,
    title: str,
    start: Moment,
    end: Moment,
    zone: ZoneInfo,
    rule: icalendar.vRecur | None = None,
    location: str | None = None,
    description: str | None = None,
) -> icalendar.Calendar:
    """A VCALENDAR with one VEVENT and the VTIMEZONE its times need."""
    calendar = icalendar.Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    event = icalendar.Event()
    event.add("uid", uid)
    event.add("dtstamp", dt.datetime.now(dt.UTC))
    event.add("summary", title)
    event.add("dtstart", _stored(start, zone))
    event.add("dtend", _stored(end, zone))
    if rule is not None:
        event.add("rrule", rule)
    if location:
        event.add("location", location)
    if description:
        event.add("description", description)
    calendar.add_component(event)
    calendar.add_missing_timezones()
    return calendar


def _apply(component: icalendar.Event, changes: Changes, zone: ZoneInfo, times: tuple[Moment, Moment]) -> None:
    if changes.title is not None:
        _replace(component, "summary", changes.title)
    if changes.location is not None:
        _replace(component, "location", changes.location or None)
    if changes.description is not None:
        _replace(component, "description", changes.description or None)
    if changes.start is not None or changes.end is not None:
        _replace(component, "dtstart", _stored(times[0], zone))
        _replace(component, "dtend", _stored(times[1], zone))
        component.pop("duration", None)
    _replace(component, "dtstamp", dt.datetime.now(dt.UTC))
    _replace(component, "sequence", int(component.get("sequence", 0)) + 1)


def _replace(component: icalendar.Event, name: str, value: object) -> None:
    component.pop(name, None)
    if value is not None:
        component.add(name, value)


def update_series(calendar: icalendar.Calendar, uid: str, changes: Changes, zone: ZoneInfo) -> None:
    master = _require_master(calendar, uid)
    current_start = _moment(master, "dtstart")
    times = resolve_times(current_start, _end_of(master, current_start), changes.start, changes.end)
    _apply(master, changes, zone, times)
    if changes.recurrence == "":
        _stop_repeating(calendar, master, uid)
    elif changes.recurrence is not None:
        _replace(master, "rrule", check_rule(changes.recurrence))
    calendar.add_missing_timezones()


def _stop_repeating(calendar: icalendar.Calendar, master: icalendar.Event, uid: str) -> None:
    """The series becomes its first occurrence; per-occurrence changes and deletions go with it."""
    for name in ("rrule", "rdate", "exdate"):
        master.pop(name, None)
    calendar.subcomponents[:] = [
        component
        for component in calendar.subcomponents
        if not (str(component.get("uid", "")) == uid and component.get("recurrence-id") is not None)
    ]


def update_occurrence(
    calendar: icalendar.Calendar, uid: str, occurrence: Moment, changes: Changes, zone: ZoneInfo
) -> None:
    """Change one occurrence: edit its override, or add one copied from the series."""
    master = _require_master(calendar, uid)
    instance = _find_instance(calendar, uid, occurrence, zone)
    override = _override(calendar, uid, occurrence, zone)
    if override is None:
        override = icalendar.Event()
        override.add("uid", uid)
        for name in ("summary", "location", "description", "transp"):
            if master.get(name) is not None:
                override.add(name, master[name])
        override.add("recurrence-id", instance.recurrence_id)
        override.add("dtstart", instance.start)
        override.add("dtend", instance.end)
        override.add("dtstamp", dt.datetime.now(dt.UTC))
        calendar.add_component(override)
    current_start = _moment(override, "dtstart")
    times = resolve_times(current_start, _end_of(override, current_start), changes.start, changes.end)
    _apply(override, changes, zone, times)
    calendar.add_missing_timezones()


def delete_occurrence(calendar: icalendar.Calendar, uid: str, occurrence: Moment, zone: ZoneInfo) -> None:
    """Drop one occurrence: EXDATE on the series, and its override if it had one."""
    master = _require_master(calendar, uid)
    instance = _find_instance(calendar, uid, occurrence, zone)
    override = _override(calendar, uid, occurrence, zone)
    if override is not None:
        calendar.subcomponents.remove(override)
    assert instance.recurrence_id is not None
    master.add("exdate", instance.recurrence_id)
    _replace(master, "dtstamp", dt.datetime.now(dt.UTC))
    _replace(master, "sequence", int(master.get("sequence", 0)) + 1)


def _require_master(calendar: icalendar.Calendar, uid: str) -> icalendar.Event:
    master = _master(calendar, uid)
    if master is None:
        raise ToolFailure("not_found", f"no event with uid {uid!r} in the calendar")
    return master


def _same_moment(left: Moment, right: Moment, zone: ZoneInfo) -> bool:
    if is_all_day(left) or is_all_day(right):
        return is_all_day(left) and is_all_day(right) and left == right
    return as_aware(left, zone) == as_aware(right, zone)


def _find_instance(calendar: icalendar.Calendar, uid: str, occurrence: Moment, zone: ZoneInfo) -> Occurrence:
    if uid not in _recurring_uids(calendar):
        raise ToolFailure(
            "invalid_arguments",
            f"event {uid!r} does not repeat; leave occurrence out to change the event itself",
        )
    around = as_aware(occurrence, zone)
    window = dt.timedelta(days=2)
    for instance in expand([calendar], around - window, around + window, zone):
        matches = instance.recurrence_id is not None and _same_moment(instance.recurrence_id, occurrence, zone)
        if instance.uid == uid and matches:
            return instance
    raise ToolFailure(
        "not_found",
        f"event {uid!r} has no occurrence at {occurrence.isoformat()}",
        hint="pass the recurrence_id of an occurrence exactly as calendar_events returned it",
    )


def _override(calendar: icalendar.Calendar, uid: str, occurrence: Moment, zone: ZoneInfo) -> icalendar.Event | None:
    for component in _events(calendar):
        if (
            str(component.get("uid", "")) == uid
            and component.get("recurrence-id") is not None
            and _same_moment(_moment(component, "recurrence-id"), occurrence, zone)
        ):
            return component
    return None
