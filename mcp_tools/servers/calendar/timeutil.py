"""Pure time arithmetic for the calendar namespace: parsing, ranges, busy merging, free slots.

Everything here works on aware datetimes in the configured zone and plain dates for
all-day events, so day boundaries follow the person's zone, never UTC.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from mcp_tools.core.tooling import ToolFailure

Moment = dt.datetime | dt.date

WEEKDAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


FIRST_YEAR, LAST_YEAR = 1900, 9000  # room for a day's or a zone's arithmetic at either end


def parse_moment(text: str, zone: ZoneInfo, field: str) -> Moment:
    """An ISO 8601 date (all-day) or date-time; naive date-times are read in `zone`."""
    value = text.strip()
    moment: Moment | None = None
    if len(value) == 10:
        with contextlib.suppress(ValueError):
            moment = dt.date.fromisoformat(value)
    if moment is None:
        try:
            moment = dt.datetime.fromisoformat(value)
        except ValueError:
            raise ToolFailure(
                "invalid_arguments",
                f"{field} is not an ISO 8601 date or date-time: {value[:40]!r}",
                hint="use e.g. 2026-03-02 (all day) or 2026-03-02T09:30 or 2026-03-02T09:30:00+01:00",
            ) from None
    if not FIRST_YEAR <= moment.year <= LAST_YEAR:
        raise ToolFailure(
            "invalid_arguments", f"{field} must lie between the years {FIRST_YEAR} and {LAST_YEAR}: {value[:40]!r}"
        )
    if isinstance(moment, dt.datetime) and moment.tzinfo is None:
        local = moment.replace(tzinfo=zone)
        actual = local.astimezone(dt.UTC).astimezone(zone)
        if actual.replace(tzinfo=None) != moment:  # a local time the clocks skip (spring forward)
            raise ToolFailure(
                "invalid_arguments",
                f"{field} {value[:40]!r} does not exist in {zone.key}: the clocks skip that time",
                hint=f"use {actual.replace(tzinfo=None).isoformat()} or give the offset you mean",
            )
        return local
    return moment


def day_start(day: dt.date, zone: ZoneInfo) -> dt.datetime:
    """Local midnight of `day` (the first instant of that day in `zone`)."""
    return dt.datetime.combine(day, dt.time(0, 0), tzinfo=zone)


def parse_range(start: str, end: str, zone: ZoneInfo, max_days: int) -> tuple[dt.datetime, dt.datetime]:
    """A half-open range; a date as `end` means through the end of that day."""
    first = parse_moment(start, zone, "start")
    last = parse_moment(end, zone, "end")
    range_start = first if isinstance(first, dt.datetime) else day_start(first, zone)
    range_end = last if isinstance(last, dt.datetime) else day_start(last + dt.timedelta(days=1), zone)
    range_start, range_end = range_start.astimezone(dt.UTC), range_end.astimezone(dt.UTC)
    if range_end <= range_start:
        raise ToolFailure("invalid_arguments", "end must be after start", hint="swap start and end?")
    if range_end - range_start > dt.timedelta(days=max_days):
        raise ToolFailure(
            "too_large",
            f"the range spans more than {max_days} days",
            hint=f"ask for at most {max_days} days at a time",
        )
    return range_start.astimezone(zone), range_end.astimezone(zone)


def format_moment(moment: Moment, zone: ZoneInfo) -> str:
    """ISO 8601: a date for all-day values, a date-time with offset in `zone` otherwise."""
    if isinstance(moment, dt.datetime):
        return moment.astimezone(zone).isoformat()
    return moment.isoformat()


def as_aware(moment: Moment, zone: ZoneInfo) -> dt.datetime:
    """Floating times and dates are read in the configured zone."""
    if isinstance(moment, dt.datetime):
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=zone)
    return day_start(moment, zone)


@dataclass(frozen=True)
class Interval:
    """A span of time held in UTC, so arithmetic is exact across DST changes."""

    start: dt.datetime
    end: dt.datetime

    @classmethod
    def of(cls, start: dt.datetime, end: dt.datetime) -> Interval:
        return cls(start.astimezone(dt.UTC), end.astimezone(dt.UTC))

    @property
    def minutes(self) -> int:
        return int((self.end - self.start).total_seconds() // 60)


def merge_intervals(intervals: Iterable[Interval]) -> list[Interval]:
    """Overlapping or touching intervals become one."""
    merged: list[Interval] = []
    for interval in sorted(intervals, key=lambda item: (item.start, item.end)):
        if merged and interval.start <= merged[-1].end:
            if interval.end > merged[-1].end:
                merged[-1] = Interval(merged[-1].start, interval.end)
        else:
            merged.append(interval)
    return merged


def merge_day_spans(spans: Iterable[tuple[dt.date, dt.date]]) -> list[tuple[dt.date, dt.date]]:
    """Inclusive (first, last) day spans, merged when they overlap or touch."""
    merged: list[tuple[dt.date, dt.date]] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1] + dt.timedelta(days=1):
            if last > merged[-1][1]:
                merged[-1] = (merged[-1][0], last)
        else:
            merged.append((first, last))
    return merged


def parse_working_hours(text: str) -> tuple[dt.time, dt.time]:
    """'09:00-17:00' -> (09:00, 17:00); raises ValueError with what is wrong."""
    try:
        start_text, end_text = (part.strip() for part in text.split("-"))
        start, end = dt.time.fromisoformat(start_text), dt.time.fromisoformat(end_text)
    except ValueError:
        raise ValueError(f"working_hours must look like '09:00-17:00', got {text!r}") from None
    if end <= start:
        raise ValueError(f"working_hours must end after they start, got {text!r}")
    return start, end


def free_slots(
    busy: Sequence[Interval],
    window_start: dt.datetime,
    window_end: dt.datetime,
    hours: tuple[dt.time, dt.time],
    weekdays: frozenset[int],
    min_length: dt.timedelta,
    zone: ZoneInfo,
) -> list[Interval]:
    """Gaps of at least `min_length` inside working hours on working days."""
    merged = merge_intervals(busy)
    slots: list[Interval] = []
    day = window_start.astimezone(zone).date()
    last_day = window_end.astimezone(zone).date()
    while day <= last_day:
        if day.weekday() in weekdays:
            open_at = max(dt.datetime.combine(day, hours[0], tzinfo=zone), window_start).astimezone(dt.UTC)
            close_at = min(dt.datetime.combine(day, hours[1], tzinfo=zone), window_end).astimezone(dt.UTC)
            slots.extend(_gaps(merged, open_at, close_at, min_length))
        day += dt.timedelta(days=1)
    return slots


def _gaps(
    merged: Sequence[Interval], open_at: dt.datetime, close_at: dt.datetime, min_length: dt.timedelta
) -> list[Interval]:
    gaps: list[Interval] = []
    cursor = open_at
    for interval in merged:
        if interval.end <= cursor:
            continue
        if interval.start >= close_at:
            break
        if interval.start - cursor >= min_length:
            gaps.append(Interval(cursor, interval.start))
        cursor = max(cursor, interval.end)
    if close_at - cursor >= min_length:
        gaps.append(Interval(cursor, close_at))
    return gaps
