"""The Google Calendar backend: one dedicated calendar of the `[google]` account, through Calendar API v3.

The calendar is found once, by id or by its name in the calendar list, and only its id is
kept: the person's other calendars are never read. Busy time comes from freeBusy (busy
slots only), events from events.list with Google's own expansion of repeating events.
Event ids are the uids the tools see; an occurrence of a series is found through
events.instances by its original start. All-day events stay `date`s, end exclusive.
Blocking calls (googleapiclient is synchronous) run in a worker thread. Finding the calendar and
reading it is `GoogleCalendarReads` (google_reads.py); creating, changing, answering and deleting
events is here.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from typing import Any

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.calendar.google_reads import GoogleCalendarReads, _rfc3339
from mcp_tools.servers.calendar.service import (
    CREATE_TOOL,
    DELETE_TOOL,
    RESPOND_TOOL,
    UPDATE_TOOL,
    CalendarBackend,
    Changes,
    Invite,
    Occurrence,
    Response,
    check_recurrence_text,
    resolve_times,
)
from mcp_tools.servers.calendar.timeutil import Moment, as_aware


class GoogleCalendar(GoogleCalendarReads):
    """The `CalendarBackend` of one Google calendar: the reads of `GoogleCalendarReads`, and the writes."""

    def __repr__(self) -> str:
        return f"GoogleCalendar(calendar={self.settings.calendar!r})"

    # --- writes -------------------------------------------------------------------------------
    def check_rule(self, rule: str) -> None:
        check_recurrence_text(rule)

    async def create(
        self,
        title: str,
        start: Moment,
        end: Moment,
        rule: str | None,
        location: str | None,
        description: str | None,
        invite: Invite,
    ) -> Occurrence:
        return await self._run(self._create, title, start, end, rule, location, description, invite)

    def check_invite(self, invite: Invite) -> None:
        """Google invites, adds Meet links and mails guests: nothing to refuse."""

    def _create(
        self,
        title: str,
        start: Moment,
        end: Moment,
        rule: str | None,
        location: str | None,
        description: str | None,
        invite: Invite,
    ) -> Occurrence:
        self.client.check_scopes(CREATE_TOOL)  # before the id is recorded as ours
        calendar = self.calendar_id()
        uid = uuid.uuid4().hex  # hex is base32hex too: an id Google accepts, known before the call
        body: dict[str, Any] = {"id": uid, "summary": title, "start": self._time(start), "end": self._time(end)}
        if rule:
            body["recurrence"] = ["RRULE:" + check_recurrence_text(rule)]
        if location:
            body["location"] = location
        if description:
            body["description"] = description
        body |= _invitation(invite, [])
        # Recorded first: a lost reply must not turn our own event into the person's.
        self.created.add(uid)
        made = self.call(
            CREATE_TOOL,
            lambda s: s.events().insert(calendarId=calendar, body=body, **_sending(invite)),
        )
        created = self._occurrence(made, {}, as_series=True)
        assert created is not None
        return created

    def _time(self, moment: Moment) -> dict[str, str]:
        """Dates stay dates; date-times go in the configured zone, which also expands a series."""
        if isinstance(moment, dt.datetime):
            return {"dateTime": moment.astimezone(self.zone).isoformat(), "timeZone": self.zone.key}
        return {"date": moment.isoformat()}

    def _plan(self, tool: str, uid: str, occurrence: Moment | None, changes: Changes) -> tuple[str, dict[str, Any]]:
        """The event id to patch and the patch; raises what the change would meet."""
        self.client.check_scopes(tool)
        master = self._series(tool, uid)
        target = master if occurrence is None else self._instance(tool, master, occurrence)
        patch: dict[str, Any] = {}
        if changes.title is not None:
            patch["summary"] = changes.title
        if changes.location is not None:
            patch["location"] = changes.location
        if changes.description is not None:
            patch["description"] = changes.description
        if changes.start is not None or changes.end is not None:
            current_start = self._moment(target["start"])
            current_end = self._moment(target.get("end") or target["start"])
            start, end = resolve_times(current_start, current_end, changes.start, changes.end)
            patch["start"], patch["end"] = self._time(start), self._time(end)
        patch |= _invitation(changes.invite, target.get("attendees") or [])
        if changes.recurrence is not None:
            kept = [line for line in master.get("recurrence", []) if not line.upper().startswith("RRULE")]
            if changes.recurrence == "":
                patch["recurrence"] = []
            else:
                patch["recurrence"] = ["RRULE:" + check_recurrence_text(changes.recurrence), *kept]
            if "start" not in patch and "dateTime" in master["start"]:
                # a series needs the zone it repeats in
                patch["start"] = {**master["start"], "timeZone": master["start"].get("timeZone", self.zone.key)}
                patch["end"] = {**master["end"], "timeZone": master["end"].get("timeZone", self.zone.key)}
        return target["id"], patch

    def _series(self, tool: str, uid: str) -> dict[str, Any]:
        found = self._get(tool, uid)
        if found is None:
            raise ToolFailure("not_found", f"no event with uid {uid!r} in the calendar")
        return found

    def _instance(self, tool: str, master: dict[str, Any], occurrence: Moment) -> dict[str, Any]:
        """The occurrence of a series that originally started at `occurrence`."""
        uid = master["id"]
        if not master.get("recurrence"):
            raise ToolFailure(
                "invalid_arguments", f"event {uid!r} does not repeat; leave occurrence out to change the event itself"
            )
        original = occurrence.isoformat() if not isinstance(occurrence, dt.datetime) else _rfc3339(occurrence)
        calendar = self.calendar_id()
        found = self.call(
            tool,
            lambda s: s.events().instances(
                calendarId=calendar, eventId=uid, originalStart=original, timeZone=self.zone.key, maxResults=5
            ),
        )
        for item in found.get("items", []):
            if item.get("status") != "cancelled" and self._same(item.get("originalStartTime", {}), occurrence):
                return dict(item)
        raise ToolFailure(
            "not_found",
            f"event {uid!r} has no occurrence at {occurrence.isoformat()}",
            hint="pass the recurrence_id of an occurrence exactly as calendar_events returned it",
        )

    def _same(self, original: dict[str, Any], occurrence: Moment) -> bool:
        if not original:
            return False
        moment = self._moment(original)
        if isinstance(moment, dt.datetime) != isinstance(occurrence, dt.datetime):
            return False
        return as_aware(moment, self.zone) == as_aware(occurrence, self.zone)

    async def check_update(self, uid: str, occurrence: Moment | None, changes: Changes) -> None:
        await self._run(self._plan, UPDATE_TOOL, uid, occurrence, changes)

    async def update(self, uid: str, occurrence: Moment | None, changes: Changes) -> Occurrence:
        return await self._run(self._update, uid, occurrence, changes)

    def _update(self, uid: str, occurrence: Moment | None, changes: Changes) -> Occurrence:
        target, patch = self._plan(UPDATE_TOOL, uid, occurrence, changes)
        calendar = self.calendar_id()
        changed = self.call(
            UPDATE_TOOL,
            lambda s: s.events().patch(calendarId=calendar, eventId=target, body=patch, **_sending(changes.invite)),
        )
        master = changed if occurrence is None else self._series(UPDATE_TOOL, uid)
        updated = self._occurrence(master, {}, as_series=True)
        assert updated is not None
        if occurrence is not None and changed.get("hangoutLink"):
            updated = dataclasses.replace(updated, meet_link=changed["hangoutLink"])
        return updated

    # --- invitations ----------------------------------------------------------------------------
    async def check_respond(self, uid: str) -> None:
        await self._run(self._answer, uid, None, None)

    async def respond(self, uid: str, response: Response, note: str | None) -> None:
        await self._run(self._respond, uid, response, note)

    def _answer(self, uid: str, response: Response | None, note: str | None) -> list[dict[str, Any]]:
        """The event's guest list with this account's own entry answered (checked only, for None)."""
        self.client.check_scopes(RESPOND_TOOL)
        event = self._series(RESPOND_TOOL, uid)
        guests = [dict(guest) for guest in event.get("attendees") or []]
        mine = [guest for guest in guests if guest.get("self")]
        if not mine:
            raise ToolFailure(
                "invalid_arguments",
                f"event {uid!r} does not invite this Google account, so there is nothing to answer",
                hint="calendar_respond answers invitations others sent to the account",
            )
        if response is not None:
            mine[0]["responseStatus"] = response
            if note is not None:
                mine[0]["comment"] = note
        return guests

    def _respond(self, uid: str, response: Response, note: str | None) -> None:
        guests = self._answer(uid, response, note)
        calendar = self.calendar_id()
        self.call(
            RESPOND_TOOL,
            lambda s: s.events().patch(calendarId=calendar, eventId=uid, body={"attendees": guests}),
        )

    async def check_delete(self, uid: str, occurrence: Moment | None) -> None:
        await self._run(self._target, uid, occurrence)

    def _target(self, uid: str, occurrence: Moment | None) -> str:
        self.client.check_scopes(DELETE_TOOL)
        master = self._series(DELETE_TOOL, uid)
        return str(master["id"] if occurrence is None else self._instance(DELETE_TOOL, master, occurrence)["id"])

    async def delete(self, uid: str, occurrence: Moment | None) -> None:
        await self._run(self._delete, uid, occurrence)

    def _delete(self, uid: str, occurrence: Moment | None) -> None:
        target = self._target(uid, occurrence)
        calendar = self.calendar_id()
        self.call(DELETE_TOOL, lambda s: s.events().delete(calendarId=calendar, eventId=target, sendUpdates="none"))
        if occurrence is None:
            self.created.remove(uid)


_SATISFIES_PROTOCOL: type[CalendarBackend] = GoogleCalendar  # checked by mypy


def _invitation(invite: Invite, current: list[dict[str, Any]]) -> dict[str, Any]:
    """The event fields an invitation sets: guests (keeping the answers of those already invited), a Meet link."""
    fields: dict[str, Any] = {}
    if invite.attendees is not None:
        known = {str(guest.get("email", "")).lower(): guest for guest in current}
        fields["attendees"] = [known.get(address.lower(), {"email": address}) for address in invite.attendees]
    if invite.meet:
        fields["conferenceData"] = {
            "createRequest": {"requestId": uuid.uuid4().hex, "conferenceSolutionKey": {"type": "hangoutsMeet"}}
        }
    return fields


def _sending(invite: Invite) -> dict[str, Any]:
    """The query parameters that say whom Google mails, and that a Meet link is wanted."""
    parameters: dict[str, Any] = {"sendUpdates": invite.send_updates}
    if invite.meet:
        parameters["conferenceDataVersion"] = 1
    return parameters
