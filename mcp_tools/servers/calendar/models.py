"""The arguments and results of the calendar tools, and the checks their fields share."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from mcp_tools.core.tooling import Arguments, Output
from mcp_tools.servers.calendar.service import Occurrence

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
    uid: str | None = Field(None, pattern=UID_PATTERN, description="one event, not a range")
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


ATTENDEE = r"^[^@\s<>,;\"()]+@[^@\s<>,;\"()]+$"
Notify = Literal["all", "externalOnly", "none"]
MAX_ATTENDEES = 20  # each one shown in full in the confirmation


class InviteArgs(Arguments):
    """Who is invited, a Meet link, and whether Google mails the guests (the Google backend only).

    Left without descriptions and schema limits (checked below): create_event is in the default
    tool list, so every character here is paid on every session.
    """

    attendees: list[str] | None = None
    meet: bool = False
    notify: Notify | None = None

    @field_validator("attendees")
    @classmethod
    def _addresses(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and len(value) > MAX_ATTENDEES:
            raise ValueError(f"attendees: at most {MAX_ATTENDEES} addresses")
        for address in value or []:
            if len(address) > 254 or not re.fullmatch(ATTENDEE, address):
                raise ValueError(f"attendees: {address[:80]!r} is not an email address")
        return value


class CreateArgs(InviteArgs):
    title: str
    start: str = Field(max_length=40, description=MOMENT_HELP + "; a date: all day")
    end: str | None = Field(None, max_length=40, description="all-day: the last day")
    recurrence: str | None = Field(None, description="RRULE, e.g. FREQ=WEEKLY;BYDAY=MO")
    location: str | None = None
    description: str | None = None

    @field_validator("title", "recurrence", "location", "description")
    @classmethod
    def _lengths(cls, value: str | None, info: ValidationInfo) -> str | None:
        most = {"title": 300, "recurrence": 300, "location": 500, "description": 8000}[str(info.field_name)]
        if value is not None and len(value) > most:
            raise ValueError(f"{info.field_name}: at most {most} characters")
        if info.field_name == "title" and not value:
            raise ValueError("title: must not be empty")
        return value


class UpdateArgs(InviteArgs):
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
    meet_link: str | None = None


class RespondArgs(Arguments):
    uid: str = Field(pattern=UID_PATTERN)
    response: Literal["accepted", "declined", "tentative"]
    note: str | None = Field(None, max_length=1000)


class RespondResult(Output):
    uid: str
    response: str


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
