"""The arguments and results of the calendar tools, and the checks their fields share."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from mcp_tools.servers.calendar.service import Occurrence
from mcp_tools.tooling import Arguments, Output

UID_PATTERN = r"^[^\x00-\x1f\x7f]{1,255}$"
MOMENT_HELP = "ISO date or date-time; no offset: calendar's zone"


class RangeArgs(Arguments):
    start: str = Field(max_length=40, description=MOMENT_HELP)
    end: str = Field(max_length=40, description="exclusive; a date means through that day")


class AvailabilityArgs(RangeArgs):
    min_free_minutes: int | None = Field(None, ge=5, le=1440, description="also free slots this long in working hours")


class BusySlot(Output):
    start: str
    end: str = Field(description="exclusive; for all-day, the last day")
    all_day: bool


class FreeSlot(Output):
    start: str
    end: str
    minutes: int


class AvailabilityResult(Output):
    timezone: str
    start: str
    end: str
    busy: list[BusySlot]
    free: list[FreeSlot] | None = None


class EventsArgs(Arguments):
    start: str | None = Field(None, max_length=40, description=MOMENT_HELP)
    end: str | None = Field(None, max_length=40, description="exclusive; a date means through that day")
    uid: str | None = Field(None, pattern=UID_PATTERN, description="one event instead of a range")
    limit: int = Field(50, ge=1, le=100)
    cursor: str | None = Field(None, max_length=100)


class Event(Output):
    uid: str
    title: str
    start: str
    end: str = Field(description="exclusive; for all-day, the last day")
    all_day: bool
    recurrence_id: str | None = None
    recurrence: str | None = None  # RRULE
    created_by_assistant: bool
    location: str | None = None
    description: str | None = None


class EventsResult(Output):
    timezone: str
    events: list[Event]
    next_cursor: str | None = None


class CreateArgs(Arguments):
    title: str = Field(min_length=1, max_length=300)
    start: str = Field(max_length=40, description=MOMENT_HELP + "; a date: all day")
    end: str | None = Field(
        None,
        max_length=40,
        description="needed for timed events; for all-day, the last day",
    )
    recurrence: str | None = Field(None, max_length=300, description="RRULE, e.g. FREQ=WEEKLY;BYDAY=MO;COUNT=10")
    location: str | None = Field(None, max_length=500)
    description: str | None = Field(None, max_length=8000)


class UpdateArgs(Arguments):
    uid: str = Field(pattern=UID_PATTERN)
    occurrence: str | None = Field(
        None,
        max_length=40,
        description="recurrence_id of one occurrence; omit for the series",
    )
    title: str | None = Field(None, min_length=1, max_length=300)
    start: str | None = Field(None, max_length=40, description=MOMENT_HELP)
    end: str | None = Field(None, max_length=40, description="for all-day, the last day")
    recurrence: str | None = Field(None, max_length=300, description="RRULE; empty stops it")
    location: str | None = Field(None, max_length=500, description="empty removes")
    description: str | None = Field(None, max_length=8000, description="empty removes")


class DeleteArgs(Arguments):
    uid: str = Field(pattern=UID_PATTERN)
    occurrence: str | None = Field(
        None,
        max_length=40,
        description="recurrence_id of one occurrence; omit for the series",
    )


class EventResult(Output):
    event: Event


class DeleteResult(Output):
    deleted: str
    occurrence: str | None = None


@dataclass(frozen=True)
class EventsAnswer:
    """The page `calendar.events` will return, fetched once before the risk decision."""

    occurrences: list[Occurrence]
    ours: set[str]
    range_text: str
    next_offset: int | None = None

    @property
    def person_events(self) -> int:
        return sum(1 for occurrence in self.occurrences if occurrence.uid not in self.ours)
