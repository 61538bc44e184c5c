"""Reading one Google calendar: finding it, its busy time, its events and one event by uid.

`GoogleCalendar` (google.py) is built on `GoogleCalendarReads` and adds the writes: creating,
changing, answering and deleting events. Blocking calls run in a worker thread (`_run`).
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from collections.abc import Callable
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import anyio.to_thread

from mcp_tools.core.tooling import Environment, ToolFailure
from mcp_tools.servers.calendar.config import GoogleSettings
from mcp_tools.servers.calendar.service import BUSY_TOOL, READ_TOOL, Busy, Occurrence
from mcp_tools.servers.calendar.store import CreatedEvents
from mcp_tools.servers.calendar.timeutil import Interval, Moment, as_aware, merge_intervals
from mcp_tools.servers.google.config import GoogleConfig
from mcp_tools.servers.google.service import GoogleService

T = TypeVar("T")
MAX_OCCURRENCES = 5000
PAGE_SIZE = 2500  # the most events.list returns per page
# All-day events are matched against a range in the calendar's own zone, which may not be ours: ask
# a day wider and keep what overlaps the range in our zone (as the CalDAV backend does)
FETCH_MARGIN = dt.timedelta(days=1)
FREEBUSY_WINDOW = dt.timedelta(days=30)  # freeBusy refuses long ranges (timeRangeTooLong); ask in pieces
EVENT_ID = re.compile(r"[A-Za-z0-9_-]{1,1024}")  # base32hex ids, instances add _<original start>
EVENT_FIELDS = (
    "id,status,summary,start,end,recurrence,recurringEventId,originalStartTime,transparency,location,description,"
    "attendees,hangoutLink"
)


class GoogleCalendarReads(GoogleService):
    """Finding the one calendar and reading it; no call here changes anything in Google."""

    NAMESPACE, API, VERSION = "calendar", "calendar", "v3"

    def __init__(
        self,
        settings: GoogleSettings,
        created: CreatedEvents,
        google: GoogleConfig,
        env: Environment,
        scopes: list[str],
    ) -> None:
        super().__init__(google, env, scopes)
        self.settings = settings
        self.created = created
        self._calendar_id = settings.calendar_id
        self._resolve_lock = threading.Lock()

    @property
    def zone(self) -> ZoneInfo:
        return self.settings.zone

    # --- the one calendar ---------------------------------------------------------------------
    def calendar_id(self) -> str:
        """The configured id, or the id of the calendar with the configured name (looked up once)."""
        with self._resolve_lock:
            if self._calendar_id is None:
                self._calendar_id = self._find_by_name(self.settings.calendar)
            return self._calendar_id

    def _find_by_name(self, name: str) -> str:
        """Exactly one calendar must carry the name; none or several is a configuration error."""
        token = None
        found: list[str] = []
        while True:
            try:
                page = self.call(
                    READ_TOOL,
                    lambda s, token=token: s.calendarList().list(
                        pageToken=token, maxResults=250, fields="items(id,summary,summaryOverride),nextPageToken"
                    ),
                )
            except ToolFailure as failure:
                if failure.details.get("missing_scopes"):
                    raise ToolFailure(
                        "not_configured",
                        f"finding the calendar named {name!r} needs the Google scope calendar.readonly",
                        "set [calendar] calendar_id to the calendar's id instead (Google Calendar > Settings > "
                        "Integrate calendar), or enable calendar.events and run `mcp-tools auth google`",
                    ) from None
                raise
            found += [
                str(item["id"])
                for item in page.get("items", [])
                if name in (item.get("summaryOverride"), item.get("summary"))
            ]
            token = page.get("nextPageToken")
            if not token:
                break
        if len(found) == 1:
            return found[0]
        if found:
            raise ToolFailure(
                "not_configured",
                f"{len(found)} calendars in the Google account are named {name!r}",
                "set [calendar] calendar_id to the id of the one to use (Settings > Integrate calendar)",
            )
        raise ToolFailure(
            "not_configured",
            f"the calendar {name!r} was not found in the Google account",
            "check [calendar] calendar: the name exactly as Google Calendar shows it, or set calendar_id",
        )

    def _missing_calendar(self, failure: ToolFailure) -> ToolFailure:
        if failure.kind == "not_found":
            return ToolFailure(
                "not_configured",
                f"the Google calendar {self.settings.calendar!r} was not found or is not shared with this account",
                "check [calendar] calendar_id (or calendar)",
            )
        return failure

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(lambda: function(*args))

    # --- reads --------------------------------------------------------------------------------
    async def busy_between(self, start: dt.datetime, end: dt.datetime) -> Busy:
        return await self._run(self._busy, start, end)

    def _busy(self, start: dt.datetime, end: dt.datetime) -> Busy:
        calendar = self.calendar_id()
        spans: list[Interval] = []
        window_start = start
        while window_start < end:
            window_end = min(end, window_start + FREEBUSY_WINDOW)
            body = {
                "timeMin": _rfc3339(window_start),
                "timeMax": _rfc3339(window_end),
                "timeZone": self.zone.key,
                "items": [{"id": calendar}],
            }
            answer = self.call(BUSY_TOOL, lambda s, body=body: s.freebusy().query(body=body))
            found = answer.get("calendars", {}).get(calendar, {})
            if found.get("errors"):
                reasons = sorted({str(error.get("reason")) for error in found["errors"]})
                if "notFound" in reasons:
                    raise self._missing_calendar(ToolFailure("not_found", "no such calendar"))
                raise ToolFailure("upstream_error", f"Google could not give the busy times ({', '.join(reasons)})")
            spans += [Interval.of(_instant(slot["start"]), _instant(slot["end"])) for slot in found.get("busy", [])]
            window_start = window_end
        return self._split_days(merge_intervals(spans))

    def _split_days(self, spans: list[Interval]) -> Busy:
        """freeBusy has no all-day flag: a span from local midnight to local midnight counts as whole days."""
        timed, days = [], []
        for span in spans:
            first, last = span.start.astimezone(self.zone), span.end.astimezone(self.zone)
            if first.time() == dt.time(0) and last.time() == dt.time(0) and last.date() > first.date():
                days.append((first.date(), last.date() - dt.timedelta(days=1)))
            else:
                timed.append(span)
        return Busy(timed, days)

    async def events_between(self, start: dt.datetime, end: dt.datetime) -> list[Occurrence]:
        return await self._run(self._events_between, start, end)

    def _events_between(self, start: dt.datetime, end: dt.datetime) -> list[Occurrence]:
        calendar = self.calendar_id()
        items: list[dict[str, Any]] = []
        token = None
        while True:
            request = {
                "calendarId": calendar,
                "singleEvents": True,
                "orderBy": "startTime",
                "timeMin": _rfc3339(start - FETCH_MARGIN),
                "timeMax": _rfc3339(end + FETCH_MARGIN),
                "timeZone": self.zone.key,
                "maxResults": PAGE_SIZE,
                "pageToken": token,
                "fields": f"items({EVENT_FIELDS}),nextPageToken",
            }
            try:
                page = self.call(READ_TOOL, lambda s, request=request: s.events().list(**request))
            except ToolFailure as failure:
                raise self._missing_calendar(failure) from None
            items += page.get("items", [])
            if len(items) > MAX_OCCURRENCES:
                raise ToolFailure(
                    "too_large", f"more than {MAX_OCCURRENCES} events in this range", hint="ask for a shorter range"
                )
            token = page.get("nextPageToken")
            if not token:
                break
        rules = self._rules({item["recurringEventId"] for item in items if item.get("recurringEventId")})
        found = []
        for item in items:
            occurrence = self._occurrence(item, rules)
            if occurrence is None:
                continue
            first, last = as_aware(occurrence.start, self.zone), as_aware(occurrence.end, self.zone)
            if first < end and (last > start or (first == last and first >= start)):
                found.append(occurrence)
        found.sort(key=lambda item: (as_aware(item.start, self.zone), item.uid))
        return found

    def _rules(self, series: set[str]) -> dict[str, str | None]:
        """The RRULE of each series on the page, read from its first definition (one batch)."""
        if not series:
            return {}
        calendar = self.calendar_id()
        requests = [
            (uid, lambda s, uid=uid: s.events().get(calendarId=calendar, eventId=uid, fields="recurrence"))
            for uid in sorted(series)
        ]
        results, _ = self.batch(READ_TOOL, requests)
        return {uid: _rule_of(result) for uid, result in results.items()}

    async def event(self, uid: str) -> Occurrence | None:
        return await self._run(self._event, uid)

    def _event(self, uid: str) -> Occurrence | None:
        found = self._get(READ_TOOL, uid)
        if found is None:
            return None
        return self._occurrence(found, {found["id"]: _rule_of(found)}, as_series=True)

    def _get(self, tool: str, uid: str) -> dict[str, Any] | None:
        """The event (or series) by id; None when this calendar has none (or it was deleted)."""
        if not EVENT_ID.fullmatch(uid):
            return None
        calendar = self.calendar_id()
        try:
            found = self.call(
                tool,
                lambda s: s.events().get(calendarId=calendar, eventId=uid, timeZone=self.zone.key, fields=EVENT_FIELDS),
            )
        except ToolFailure as failure:
            if failure.kind == "not_found":
                return None
            raise
        return None if found.get("status") == "cancelled" else found

    def _occurrence(
        self, item: dict[str, Any], rules: dict[str, str | None], as_series: bool = False
    ) -> Occurrence | None:
        if item.get("status") == "cancelled" or "start" not in item:
            return None
        series = item.get("recurringEventId")
        uid = series if series and not as_series else item["id"]
        start = self._moment(item["start"])
        end = self._moment(item.get("end") or item["start"])
        recurrence_id = None
        if series and not as_series and item.get("originalStartTime"):
            recurrence_id = self._moment(item["originalStartTime"])
        return Occurrence(
            uid=uid,
            title=str(item.get("summary", "")),
            start=start,
            end=end if end >= start else start,
            all_day="date" in item["start"],
            recurrence_id=recurrence_id,
            recurrence=rules.get(uid) if not as_series else _rule_of(item),
            busy=item.get("transparency") != "transparent",
            location=item.get("location") or None,
            description=item.get("description") or None,
            meet_link=item.get("hangoutLink") or None,
        )

    def _moment(self, value: dict[str, Any]) -> Moment:
        if "date" in value:
            return dt.date.fromisoformat(value["date"])
        return _instant(value["dateTime"]).astimezone(self.zone)

    async def check(self) -> str:
        def work() -> str:
            calendar = self.calendar_id()
            try:
                found = self.call(READ_TOOL, lambda s: s.calendars().get(calendarId=calendar, fields="id,summary"))
            except ToolFailure as failure:
                raise self._missing_calendar(failure) from None
            return f"Google calendar {found.get('summary', '')!r} ({calendar})"

        return await self._run(work)


def _rfc3339(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _rule_of(event: dict[str, Any] | None) -> str | None:
    for line in (event or {}).get("recurrence") or []:
        if line.upper().startswith("RRULE:"):
            return str(line[6:])
    return None
