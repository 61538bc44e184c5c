"""The calendar tools: handlers and their declarations (the models are in models.py).

Read permission has two axes. Busy slots (`calendar.availability`) never carry titles and
run without asking. Details (`calendar.events`) run without asking only when every event
in the answer was created by the assistant; `events_risk` fetches the answer first, keeps
it on the arguments, and `describe_events` tells the person how many of their own events
and which range they are about to share. The handler then returns exactly what was judged.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_tools.core.tooling import CallContext, Risk, ToolAlias, ToolFailure, ToolSpec, UpstreamScopes
from mcp_tools.servers.calendar.models import (
    AvailabilityArgs,
    AvailabilityResult,
    BusySlot,
    CreateArgs,
    DeleteArgs,
    DeleteResult,
    Event,
    EventResult,
    EventsAnswer,
    EventsArgs,
    EventsResult,
    FreeSlot,
    InviteArgs,
    RespondArgs,
    RespondResult,
    UpdateArgs,
)
from mcp_tools.servers.calendar.service import (
    BUSY_TOOL,
    CREATE_TOOL,
    DELETE_TOOL,
    READ_TOOL,
    RESPOND_TOOL,
    UPDATE_TOOL,
    Changes,
    Invite,
    Occurrence,
    check_order,
)
from mcp_tools.servers.calendar.timeutil import (
    Interval,
    day_start,
    format_moment,
    free_slots,
    merge_day_spans,
    merge_intervals,
    parse_moment,
    parse_range,
)
from mcp_tools.servers.google.aliases import PAGING
from mcp_tools.servers.google.scopes import CALENDAR_EVENTS, CALENDAR_FREEBUSY, CALENDAR_READONLY

if TYPE_CHECKING:
    from mcp_tools.servers.calendar.service import CalendarBackend

MAX_RANGE_DAYS = 366
MAX_AVAILABILITY_DAYS = 92


# -- availability -------------------------------------------------------------------------


async def availability(service: CalendarBackend, args: AvailabilityArgs, ctx: CallContext) -> AvailabilityResult:
    """Busy slots only: no titles, so a scheduling question never needs a confirmation."""
    zone = service.zone
    start, end = parse_range(args.start, args.end, zone, MAX_AVAILABILITY_DAYS)
    await ctx.report_progress(0, 2, "reading the calendar")
    found = await service.busy_between(start, end)
    await ctx.report_progress(1, 2, "merging busy times")
    timed = merge_intervals(
        Interval.of(max(slot.start, start), min(slot.end, end)) for slot in found.timed if slot.start < end
    )
    first_day = start.astimezone(zone).date()
    last_day = (end - dt.timedelta(microseconds=1)).astimezone(zone).date()
    days = merge_day_spans((max(first, first_day), min(last, last_day)) for first, last in found.days)
    busy = [BusySlot(start=first.isoformat(), end=last.isoformat(), all_day=True) for first, last in days]
    busy += [
        BusySlot(start=format_moment(slot.start, zone), end=format_moment(slot.end, zone), all_day=False)
        for slot in timed
    ]
    busy.sort(key=lambda slot: slot.start[:10] + ("0" if slot.all_day else "1") + slot.start)
    free = None
    if args.min_free_minutes is not None:
        blocked = list(timed) + [
            Interval.of(day_start(first, zone), day_start(last + dt.timedelta(days=1), zone)) for first, last in days
        ]
        settings = service.settings
        minimum = dt.timedelta(minutes=args.min_free_minutes)
        slots = free_slots(blocked, start, end, settings.hours, settings.weekdays, minimum, zone)
        free = [
            FreeSlot(start=format_moment(slot.start, zone), end=format_moment(slot.end, zone), minutes=slot.minutes)
            for slot in slots
        ]
    return AvailabilityResult(
        timezone=zone.key,
        start=format_moment(start, zone),
        end=format_moment(end, zone),
        busy=busy,
        free=free,
    )


def describe_availability(args: AvailabilityArgs) -> str:
    return f"Show busy times (no titles) from {args.start} to {args.end}"


# -- events -------------------------------------------------------------------------------


async def fetch_events_answer(service: CalendarBackend, args: EventsArgs) -> EventsAnswer:
    if args.uid is not None:
        if args.start is not None or args.end is not None:
            raise ToolFailure("invalid_arguments", "give either uid or start and end, not both")
        found = await service.event(args.uid)
        occurrences = [] if found is None else [found]
        range_text = f"event {args.uid}"
    else:
        if args.start is None or args.end is None:
            raise ToolFailure(
                "invalid_arguments",
                "events needs start and end (or a uid)",
                hint="e.g. start 2026-03-02, end 2026-03-08 for that week",
            )
        start, end = parse_range(args.start, args.end, service.zone, MAX_RANGE_DAYS)
        occurrences = await service.events_between(start, end)
        range_text = f"{format_moment(start, service.zone)} to {format_moment(end, service.zone)}"
    offset = _offset(args)
    page = occurrences[offset : offset + args.limit]
    following = offset + args.limit
    ours = service.created.known(item.uid for item in page)
    return EventsAnswer(page, ours, range_text, following if following < len(occurrences) else None)


@dataclass
class EventsFacts:
    """The answer as the risk check fetched it: the handler returns that page, not another one."""

    answer: EventsAnswer | None = None


async def events_risk(service: CalendarBackend, args: EventsArgs, facts: EventsFacts) -> Risk:
    """Low when every event in the answer was created by the assistant, high otherwise."""
    facts.answer = await fetch_events_answer(service, args)
    return Risk.HIGH if facts.answer.person_events else Risk.LOW


def describe_events(args: EventsArgs, facts: EventsFacts) -> str:
    answer = facts.answer
    where = answer.range_text if answer else (f"event {args.uid}" if args.uid else f"{args.start} to {args.end}")
    if answer is None:
        return f"Show calendar event details ({where}), which may include events you created yourself"
    count = answer.person_events
    noun = "event" if count == 1 else "events"
    return f"Show details of {count} {noun} you created yourself ({where})"


def _cursor_key(args: EventsArgs) -> str:
    return hashlib.sha256(f"{args.uid}|{args.start}|{args.end}".encode()).hexdigest()[:8]


def _offset(args: EventsArgs) -> int:
    if args.cursor is None:
        return 0
    offset_text, _, key = args.cursor.partition(".")
    if key != _cursor_key(args) or not offset_text.isdigit():
        raise ToolFailure(
            "invalid_arguments",
            "cursor does not belong to this query",
            hint="pass next_cursor with the same start, end and uid as the call that returned it",
        )
    return int(offset_text)


async def events(service: CalendarBackend, args: EventsArgs, ctx: CallContext, facts: EventsFacts) -> EventsResult:
    answer = facts.answer or await fetch_events_answer(service, args)
    if args.uid is not None and not answer.occurrences:
        raise ToolFailure("not_found", f"no event with uid {args.uid!r} in the calendar")
    following = answer.next_offset
    return EventsResult(
        timezone=service.zone.key,
        events=[to_event(service, item, item.uid in answer.ours) for item in answer.occurrences],
        next_cursor=None if following is None else f"{following}.{_cursor_key(args)}",
    )


def to_event(service: CalendarBackend, occurrence: Occurrence, ours: bool) -> Event:
    """Title, times and all-day flag; location and description for the assistant's own events, or when configured."""
    zone, settings = service.zone, service.settings
    end = occurrence.end
    if occurrence.all_day and end > occurrence.start:
        end = end - dt.timedelta(days=1)
    return Event(
        uid=occurrence.uid,
        title=occurrence.title,
        start=format_moment(occurrence.start, zone),
        end=format_moment(end, zone),
        all_day=occurrence.all_day,
        recurrence_id=None if occurrence.recurrence_id is None else format_moment(occurrence.recurrence_id, zone),
        recurrence=occurrence.recurrence,
        created_by_assistant=ours,
        location=occurrence.location if ours or settings.include_location else None,
        description=occurrence.description if ours or settings.include_description else None,
    )


# -- writes -------------------------------------------------------------------------------


def _exclusive_end(moment: dt.date | dt.datetime) -> dt.date | dt.datetime:
    """All-day ends are given as the last day; iCalendar wants the day after."""
    if isinstance(moment, dt.datetime):
        return moment
    return moment + dt.timedelta(days=1)


def _event_times(service: CalendarBackend, args: CreateArgs) -> tuple[dt.date | dt.datetime, dt.date | dt.datetime]:
    zone = service.zone
    start = parse_moment(args.start, zone, "start")
    if args.end is None:
        if isinstance(start, dt.datetime):
            raise ToolFailure("invalid_arguments", "a timed event needs end", hint="e.g. end 2026-03-02T10:00")
        end: dt.date | dt.datetime = start + dt.timedelta(days=1)
    else:
        end = _exclusive_end(parse_moment(args.end, zone, "end"))
    check_order(start, end)
    return start, end


def _invite(args: InviteArgs) -> Invite:
    return Invite(
        attendees=None if args.attendees is None else tuple(args.attendees), meet=args.meet, notify=args.notify
    )


def _sends(args: InviteArgs) -> bool:
    """Does the call invite anyone or mail anyone? Then it reaches people beyond the calendar."""
    return bool(args.attendees) or _invite(args).send_updates != "none"


async def create_risk(service: CalendarBackend, args: CreateArgs) -> Risk:
    """High when the call invites or mails anyone; otherwise the configured level stands."""
    return Risk.HIGH if _sends(args) else Risk.LOW


async def update_risk(service: CalendarBackend, args: UpdateArgs, facts: TargetFacts) -> Risk:
    return Risk.HIGH if _sends(args) else Risk.LOW


def _describe_invite(args: InviteArgs) -> str:
    """Every address invited, who is mailed, and a Meet link: for the line a person reads."""
    invite = _invite(args)
    parts = []
    if args.meet:
        parts.append("add a Google Meet link")
    mailed = {"all": "Google emails every guest", "externalOnly": "Google emails guests outside your domain"}
    if args.attendees is not None or args.notify is not None:
        parts.append(mailed.get(invite.send_updates, "no email to guests"))
    if args.attendees is not None:  # last, so a cut summary keeps the rest; the arguments list each address
        guests = ", ".join(repr(address) for address in args.attendees)
        parts.append(f"invite {len(args.attendees)}: {guests}" if args.attendees else "remove every guest")
    return "; " + "; ".join(parts) if parts else ""


async def create_precheck(service: CalendarBackend, args: CreateArgs) -> None:
    """Times that parse and are in order, and a rule the calendar accepts (no server round trip)."""
    service.check_invite(_invite(args))
    _event_times(service, args)
    if args.recurrence:
        service.check_rule(args.recurrence)


async def create_event(service: CalendarBackend, args: CreateArgs, ctx: CallContext) -> EventResult:
    start, end = _event_times(service, args)
    created = await service.create(
        args.title, start, end, args.recurrence, args.location, args.description, _invite(args)
    )
    return EventResult(event=to_event(service, created, True), meet_link=created.meet_link)


def describe_create(args: CreateArgs) -> str:
    when = args.start if args.end is None else f"{args.start} to {args.end}"
    repeat = f", repeating {args.recurrence}" if args.recurrence else ""
    return f"Add the event {args.title!r} ({when}{repeat}) to the calendar{_describe_invite(args)}"


def _update_plan(service: CalendarBackend, args: UpdateArgs) -> tuple[Changes, dt.date | dt.datetime | None]:
    zone = service.zone
    fields = ("title", "start", "end", "recurrence", "location", "description", "attendees", "notify")
    if all(getattr(args, name) is None for name in fields) and not args.meet:
        raise ToolFailure("invalid_arguments", f"update needs at least one of {', '.join(fields)} or meet")
    if args.occurrence is not None and args.recurrence is not None:
        raise ToolFailure("invalid_arguments", "recurrence changes the whole series; leave occurrence out")
    if args.recurrence:
        service.check_rule(args.recurrence)
    changes = Changes(
        title=args.title,
        start=None if args.start is None else parse_moment(args.start, zone, "start"),
        end=None if args.end is None else _exclusive_end(parse_moment(args.end, zone, "end")),
        location=args.location,
        description=args.description,
        recurrence=args.recurrence,
        invite=_invite(args),
    )
    occurrence = None if args.occurrence is None else parse_moment(args.occurrence, zone, "occurrence")
    return changes, occurrence


@dataclass
class TargetFacts:
    """Whether the event a change or delete targets was created by the assistant (None: not known)."""

    ours: bool | None = None


async def update_precheck(service: CalendarBackend, args: UpdateArgs, facts: TargetFacts) -> None:
    """The change is valid and the event (and occurrence) exist: tried first, nothing written."""
    service.check_invite(_invite(args))
    changes, occurrence = _update_plan(service, args)
    await service.check_update(args.uid, occurrence, changes)
    facts.ours = bool(service.created.known([args.uid]))


async def update_event(service: CalendarBackend, args: UpdateArgs, ctx: CallContext, facts: TargetFacts) -> EventResult:
    changes, occurrence = _update_plan(service, args)
    updated = await service.update(args.uid, occurrence, changes)
    ours = bool(service.created.known([args.uid]))
    return EventResult(
        event=to_event(service, updated, ours), meet_link=updated.meet_link if ours or args.meet else None
    )


def _whose(ours: bool | None) -> str:
    """Whose event it is, for the confirmation line (never its title: that is the person's to share)."""
    if ours is None:
        return ""
    return " (created by the assistant)" if ours else " (one of your own events)"


def describe_update(args: UpdateArgs, facts: TargetFacts) -> str:
    target = f"the occurrence at {args.occurrence} of" if args.occurrence else "the event"
    changed = ", ".join(
        f"{name} to {getattr(args, name)!r}"
        for name in ("title", "start", "end", "recurrence", "location", "description")
        if getattr(args, name) is not None
    )
    invite = _describe_invite(args)
    changed = f"{changed}{invite}" if changed else invite.removeprefix("; ")
    return f"Change {target} {args.uid}{_whose(facts.ours)}: {changed}"


async def delete_event(
    service: CalendarBackend, args: DeleteArgs, ctx: CallContext, facts: TargetFacts
) -> DeleteResult:
    occurrence = None if args.occurrence is None else parse_moment(args.occurrence, service.zone, "occurrence")
    await service.delete(args.uid, occurrence)
    return DeleteResult(deleted=args.uid, occurrence=args.occurrence)


async def delete_precheck(service: CalendarBackend, args: DeleteArgs, facts: TargetFacts) -> None:
    """The event (and occurrence) exist: tried first, nothing written."""
    occurrence = None if args.occurrence is None else parse_moment(args.occurrence, service.zone, "occurrence")
    await service.check_delete(args.uid, occurrence)
    facts.ours = bool(service.created.known([args.uid]))


def describe_delete(args: DeleteArgs, facts: TargetFacts) -> str:
    if args.occurrence:
        return f"Delete the occurrence at {args.occurrence} of event {args.uid}{_whose(facts.ours)}"
    return f"Delete event {args.uid}{_whose(facts.ours)} (every occurrence, if it repeats)"


async def respond_precheck(service: CalendarBackend, args: RespondArgs) -> None:
    """The event exists and invites the account: checked before the person is asked."""
    await service.check_respond(args.uid)


async def respond(service: CalendarBackend, args: RespondArgs, ctx: CallContext) -> RespondResult:
    await service.respond(args.uid, args.response, args.note)
    return RespondResult(uid=args.uid, response=args.response)


def describe_respond(args: RespondArgs) -> str:
    answer = {"accepted": "Accept", "declined": "Decline", "tentative": "Tentatively accept"}[args.response]
    note = f" with the note {args.note!r}" if args.note else ""
    return f"{answer} the invitation to event {args.uid}{note} (the organiser sees the answer)"


# Google Calendar API argument names, as other systems' calendar tools pass them.
_ALIAS_RENAMES = {
    **PAGING,
    "timeMin": "start",
    "timeMax": "end",
    "eventId": "uid",
    "event_id": "uid",
    "summary": "title",
}


def _event_alias(arguments: dict[str, Any]) -> dict[str, Any]:
    """Google's `{"dateTime": ...}` / `{"date": ...}` start and end as the one string our tools take."""
    out = dict(arguments)
    for key in ("start", "end"):
        value = out.get(key)
        if isinstance(value, dict):
            out[key] = next((value[part] for part in ("dateTime", "date") if isinstance(value.get(part), str)), value)
    return out


TOOLS: list[ToolSpec[Any, Any, Any]] = [
    ToolSpec(
        name=BUSY_TOOL,
        scopes=UpstreamScopes((CALENDAR_FREEBUSY,), ("calendar.freebusy.query",)),
        aliases=(ToolAlias("calendar_availability", _ALIAS_RENAMES, _event_alias),),
        tier="core",
        title="Busy and free times",
        description="Busy slots (no titles) between start and end; free slots on request.",
        input_model=AvailabilityArgs,
        output_model=AvailabilityResult,
        handler=availability,
        risk=Risk.LOW,
        describe=describe_availability,
        read_only=True,
        open_world=True,
        idempotent=True,
    ),
    ToolSpec(
        name=READ_TOOL,
        scopes=UpstreamScopes(
            (CALENDAR_READONLY,),
            ("calendar.calendarList.list", "calendar.calendars.get", "calendar.events.list", "calendar.events.get"),
        ),
        aliases=(
            ToolAlias("calendar_list", _ALIAS_RENAMES, _event_alias),
            ToolAlias("calendar_events", _ALIAS_RENAMES, _event_alias),
        ),
        tier="core",
        title="Calendar events",
        description="Events between start and end (repeating ones as occurrences), or one by uid.",
        input_model=EventsArgs,
        output_model=EventsResult,
        handler=events,
        risk=Risk.LOW,
        describe=describe_events,
        dynamic_risk=events_risk,
        facts=EventsFacts,
        read_only=True,
        open_world=True,
        idempotent=True,
    ),
    ToolSpec(
        name=CREATE_TOOL,
        scopes=UpstreamScopes((CALENDAR_EVENTS,), ("calendar.events.insert",)),
        aliases=(ToolAlias("calendar_create", _ALIAS_RENAMES, _event_alias),),
        tier="core",
        title="Create an event",
        description="Create an event; returns its uid.",
        input_model=CreateArgs,
        output_model=EventResult,
        handler=create_event,
        risk=Risk.HIGH,
        describe=describe_create,
        dynamic_risk=create_risk,
        open_world=True,
        precheck=create_precheck,
    ),
    ToolSpec(
        name=UPDATE_TOOL,
        scopes=UpstreamScopes(
            (CALENDAR_EVENTS,), ("calendar.events.get", "calendar.events.instances", "calendar.events.patch")
        ),
        aliases=(ToolAlias("calendar_update", _ALIAS_RENAMES, _event_alias),),
        tier="extended",
        title="Change an event",
        description="Change an event (series or one occurrence); a new start alone keeps the duration.",
        input_model=UpdateArgs,
        output_model=EventResult,
        handler=update_event,
        risk=Risk.HIGH,
        describe=describe_update,
        dynamic_risk=update_risk,
        open_world=True,
        precheck=update_precheck,
        facts=TargetFacts,
    ),
    ToolSpec(
        name=DELETE_TOOL,
        scopes=UpstreamScopes(
            (CALENDAR_EVENTS,), ("calendar.events.get", "calendar.events.instances", "calendar.events.delete")
        ),
        aliases=(ToolAlias("calendar_delete", _ALIAS_RENAMES, _event_alias),),
        tier="extended",
        title="Delete an event",
        description="Delete an event: the series or one occurrence.",
        input_model=DeleteArgs,
        output_model=DeleteResult,
        handler=delete_event,
        risk=Risk.HIGH,
        describe=describe_delete,
        open_world=True,
        precheck=delete_precheck,
        facts=TargetFacts,
    ),
    ToolSpec(
        name=RESPOND_TOOL,
        scopes=UpstreamScopes((CALENDAR_EVENTS,), ("calendar.events.get", "calendar.events.patch")),
        tier="extended",
        title="Answer an invitation",
        description="Accept, decline or tentatively accept an invitation (Google).",
        input_model=RespondArgs,
        output_model=RespondResult,
        handler=respond,
        risk=Risk.MEDIUM,
        describe=describe_respond,
        open_world=True,
        idempotent=True,
        precheck=respond_precheck,
    ),
]
