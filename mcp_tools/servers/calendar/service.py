"""What the calendar tools need from a calendar server, whichever protocol it speaks.

The tools (tools.py) hold the privacy rules; a backend only talks to its server: CalDAV
(caldav.py) or Google Calendar (google.py). Both work on one dedicated calendar and on the
plain values below, so the rules never see iCalendar or Google JSON.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol
from zoneinfo import ZoneInfo

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.calendar.timeutil import Interval, Moment, as_aware

if TYPE_CHECKING:
    from mcp_tools.servers.calendar.config import Settings
    from mcp_tools.servers.calendar.store import CreatedEvents

# The calendar tools, named here for every backend (the google one checks each one's scopes)
READ_TOOL, BUSY_TOOL = "calendar.events", "calendar.availability"
CREATE_TOOL, UPDATE_TOOL, DELETE_TOOL = "calendar.create_event", "calendar.update_event", "calendar.delete_event"
RESPOND_TOOL = "calendar.respond"

DaySpan = tuple[dt.date, dt.date]  # first and last day, inclusive


@dataclass(frozen=True)
class Occurrence:
    """One event as the tools see it; `end` is exclusive (the day after, for all-day)."""

    uid: str
    title: str
    start: Moment
    end: Moment
    all_day: bool
    recurrence_id: Moment | None
    recurrence: str | None
    busy: bool
    location: str | None
    description: str | None
    meet_link: str | None = None


@dataclass(frozen=True)
class Invite:
    """Guests for an event and whether the server mails them; None and False change nothing."""

    attendees: tuple[str, ...] | None = None
    meet: bool = False
    notify: str | None = None

    @property
    def empty(self) -> bool:
        return self.attendees is None and not self.meet and self.notify is None

    @property
    def send_updates(self) -> str:
        """Google's sendUpdates: as asked, else everyone when there are guests, else nobody."""
        return self.notify or ("all" if self.attendees else "none")


Response = Literal["accepted", "declined", "tentative"]


@dataclass(frozen=True)
class Changes:
    """New values for an event; None leaves a value as it is."""

    title: str | None = None
    start: Moment | None = None
    end: Moment | None = None
    location: str | None = None
    description: str | None = None
    recurrence: str | None = None
    invite: Invite = Invite()


@dataclass(frozen=True)
class Busy:
    """Busy time without any detail: timed spans (not clipped to the range) and all-day days."""

    timed: list[Interval]
    days: list[DaySpan]


class CalendarBackend(Protocol):
    """One dedicated calendar. Failures are `ToolFailure`s in our own words, never the server's.

    CalDavCalendar (caldav.py) and GoogleCalendar (google.py) each declare that they satisfy it,
    so the type checker compares them with what the tools call.
    """

    @property
    def settings(self) -> Settings:
        """Read-only here, so each backend may hold its own kind of settings."""
        ...

    @property
    def created(self) -> CreatedEvents:
        """Ids of the events the assistant created: the basis of the read rule."""
        ...

    @property
    def zone(self) -> ZoneInfo: ...

    async def busy_between(self, start: dt.datetime, end: dt.datetime) -> Busy: ...

    async def events_between(self, start: dt.datetime, end: dt.datetime) -> list[Occurrence]:
        """Occurrences overlapping [start, end), repeating series expanded, sorted by start."""
        ...

    async def event(self, uid: str) -> Occurrence | None:
        """The series (or single event) as first defined; None when the calendar has no such event."""
        ...

    def check_rule(self, rule: str) -> None:
        """Raise `invalid_arguments` for a recurrence rule this backend would not store."""
        ...

    async def create(
        self,
        title: str,
        start: Moment,
        end: Moment,
        rule: str | None,
        location: str | None,
        description: str | None,
        invite: Invite,
    ) -> Occurrence: ...

    def check_invite(self, invite: Invite) -> None:
        """Raise `invalid_arguments` when guests, a Meet link or mail are asked of a backend without them."""
        ...

    async def respond(self, uid: str, response: Response, note: str | None) -> None:
        """Answer an invitation as the account's own attendee."""
        ...

    async def check_respond(self, uid: str) -> None:
        """The event exists and invites this account, writing nothing."""
        ...

    async def update(self, uid: str, occurrence: Moment | None, changes: Changes) -> Occurrence:
        """Change the series (occurrence None) or one occurrence; returns the series."""
        ...

    async def delete(self, uid: str, occurrence: Moment | None) -> None: ...

    async def check_update(self, uid: str, occurrence: Moment | None, changes: Changes) -> None:
        """Everything `update` would meet (event, occurrence, times), writing nothing."""
        ...

    async def check_delete(self, uid: str, occurrence: Moment | None) -> None: ...

    async def check(self) -> str:
        """Connect and open the calendar; a line naming it, for a person to read."""
        ...


def is_all_day(moment: Moment) -> bool:
    return not isinstance(moment, dt.datetime)


def all_day_busy_days(occurrence: Occurrence) -> DaySpan:
    """Inclusive first and last day of an all-day occurrence."""
    start, end = occurrence.start, occurrence.end
    assert not isinstance(start, dt.datetime) and not isinstance(end, dt.datetime), "all-day values are dates"
    last = end - dt.timedelta(days=1) if end > start else start
    return start, last


def busy_of(occurrences: Iterable[Occurrence], zone: ZoneInfo) -> Busy:
    """The busy time of occurrences (those not marked free)."""
    busy = [item for item in occurrences if item.busy]
    return Busy(
        timed=[Interval.of(as_aware(item.start, zone), as_aware(item.end, zone)) for item in busy if not item.all_day],
        days=[all_day_busy_days(item) for item in busy if item.all_day],
    )


def resolve_times(
    current_start: Moment, current_end: Moment, start: Moment | None, end: Moment | None
) -> tuple[Moment, Moment]:
    """New (start, end): a new start alone keeps the duration; all-day and timed never mix."""
    new_start = current_start if start is None else start
    if end is not None:
        new_end = end
    elif start is not None and is_all_day(start) == is_all_day(current_start):
        new_end = start + _length(current_start, current_end)
    elif start is not None and is_all_day(start):
        new_end = start + dt.timedelta(days=1)
    elif start is not None:
        raise ToolFailure(
            "invalid_arguments",
            "changing an all-day event to a timed one needs end as well",
            hint="give end, e.g. 2026-03-02T10:00",
        )
    else:
        new_end = current_end
    check_order(new_start, new_end)
    return new_start, new_end


def _length(start: Moment, end: Moment) -> dt.timedelta:
    """`end - start`: a date-time minus a date is as much an error as Python makes it."""
    if isinstance(end, dt.datetime):
        if isinstance(start, dt.datetime):
            return end - start
        raise TypeError("unsupported operand type(s) for -: 'datetime.datetime' and 'datetime.date'")
    return end - start


def check_order(start: Moment, end: Moment) -> None:
    if is_all_day(start) != is_all_day(end):
        raise ToolFailure(
            "invalid_arguments",
            "start and end must both be dates (all day) or both date-times",
            hint="e.g. start 2026-03-02 with end 2026-03-03, or 2026-03-02T09:00 with 2026-03-02T10:00",
        )
    if end <= start:
        raise ToolFailure("invalid_arguments", "end must be after start")


RULE_PARTS = frozenset(
    {"FREQ", "UNTIL", "COUNT", "INTERVAL", "BYSECOND", "BYMINUTE", "BYHOUR", "BYDAY", "BYMONTHDAY", "BYYEARDAY"}
    | {"BYWEEKNO", "BYMONTH", "BYSETPOS", "WKST"}
)
RULE_PART = re.compile(r"[A-Z]+=[A-Z0-9,+\-]+")
ALLOWED_FREQUENCIES = ("DAILY", "WEEKLY", "MONTHLY", "YEARLY")


def check_recurrence_text(rule: str) -> str:
    """An RRULE we are willing to store (well formed, at most daily), without the `RRULE:` prefix.

    Needs no iCalendar library: the server parses the rule itself; this keeps an invalid one from
    reaching the person's confirmation.
    """
    text = rule.strip()
    if text.upper().startswith("RRULE:"):
        text = text[6:]
    parts = text.upper().split(";")
    names = [part.split("=", 1)[0] for part in parts]
    if not all(RULE_PART.fullmatch(part) for part in parts) or not set(names) <= RULE_PARTS or "FREQ" not in names:
        raise ToolFailure(
            "invalid_arguments",
            f"recurrence is not an RFC 5545 RRULE: {text[:80]!r}",
            hint="for example FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10 or FREQ=MONTHLY;UNTIL=20261231T000000Z",
        )
    frequency = dict(part.split("=", 1) for part in parts)["FREQ"]
    if frequency not in ALLOWED_FREQUENCIES:
        raise ToolFailure(
            "invalid_arguments",
            "recurrence must be an RRULE with FREQ=DAILY, WEEKLY, MONTHLY or YEARLY",
            hint="for example FREQ=WEEKLY;COUNT=10",
        )
    return text.upper()
