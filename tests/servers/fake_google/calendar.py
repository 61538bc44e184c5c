"""A stateful fake of the Google Calendar API v3: calendars, events, instances and freeBusy.

Events are stored as Google keeps them: a series is one event with `recurrence` lines; a
changed or deleted occurrence is an exception event with `recurringEventId` and
`originalStartTime` (status "cancelled" when deleted). `singleEvents=true` listings and
`events.instances` expand series with dateutil in the event's own time zone, so a weekly
event keeps its local hour across a DST change. Time ranges overlap as Google's do: an event
is listed when it ends after timeMin and starts before timeMax; all-day dates are read in the
request's `timeZone` (else the calendar's; `all_day_in_calendar_zone` makes events.list always use
the calendar's).
"""

from __future__ import annotations

import copy
import datetime as dt
import re
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tests.servers.fake_google.discovery import Discovery
from tests.servers.fake_google.server import ApiError, FakeGoogle, Response, Token

EVENT_ID = re.compile(r"[a-v0-9]{5,1024}")
INSTANCE_ID = re.compile(r"(?P<series>[a-v0-9]{5,1024})_(?P<when>\d{8}(T\d{6}Z)?)")
KEPT_ON_UPDATE = ("kind", "id", "etag", "htmlLink", "created", "iCalUID", "sequence", "creator", "organizer")
KEPT_ON_UPDATE += ("recurringEventId", "originalStartTime")  # what events.update cannot replace
ATTENDEE = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
ALLOWED_CONFERENCES = ("hangoutsMeet",)  # a consumer account's calendar allows Meet only
MAX_INSTANCES = 3000  # per series and request: enough for years of daily events


class CalendarDiscovery(Discovery):
    """Calendar's method paths are relative to its servicePath (calendar/v3/), which requests carry."""

    def __init__(self) -> None:
        super().__init__("calendar", "v3")
        prefix = "^/" + re.escape(self.document["servicePath"])
        for method in self.methods:
            if not method.pattern.pattern.startswith(prefix):
                method.pattern = re.compile(prefix + method.pattern.pattern.removeprefix("^/"))


@dataclass
class StoredCalendar:
    id: str
    summary: str
    time_zone: str
    events: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> event (series, single or exception)


def _instant(text: str, where: str) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ApiError(400, f"Bad Request: {where} is not an RFC 3339 date-time", "badRequest") from None
    if moment.tzinfo is None:
        raise ApiError(400, f"Bad Request: {where} needs a time zone offset", "badRequest")
    return moment


def _zone(name: str | None, fallback: str) -> ZoneInfo:
    try:
        return ZoneInfo(name or fallback)
    except (ZoneInfoNotFoundError, ValueError):
        raise ApiError(400, f"Invalid time zone definition: {name}", "invalid") from None


def _utc(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


class FakeCalendar:
    def __init__(self, google: FakeGoogle) -> None:
        self.google = google
        self.calendars: dict[str, StoredCalendar] = {}
        self.all_day_in_calendar_zone = False  # events.list: all-day dates in the calendar's zone, not timeZone's
        self.mailed: list[tuple[str, str]] = []  # (guest address, event id): the invitations and updates sent
        google.apis["/calendar/v3/"] = (CalendarDiscovery(), self)

    # --- set-up helpers for tests ---------------------------------------------------------------
    def add_calendar(self, summary: str, time_zone: str = "Europe/Berlin", primary: bool = False) -> StoredCalendar:
        calendar_id = self.google.account if primary else f"{secrets.token_hex(12)}@group.calendar.google.com"
        stored = StoredCalendar(calendar_id, summary, time_zone)
        with self.google.lock:
            self.calendars[calendar_id] = stored
        return stored

    def add_event(self, calendar: StoredCalendar, event: dict[str, Any]) -> dict[str, Any]:
        """An event the person made in Google Calendar (another client): stored as given."""
        with self.google.lock:
            return self._insert(calendar, copy.deepcopy(event))

    def stored(self, calendar: StoredCalendar, event_id: str) -> dict[str, Any] | None:
        return calendar.events.get(event_id)

    # --- dispatch -------------------------------------------------------------------------------
    def handle(
        self,
        method_id: str,
        path: dict[str, str],
        params: dict[str, Any],
        body: Any,
        token: Token,
        media: bytes | None,
        headers: dict[str, str],
    ) -> Any:
        path = {key: unquote(value) for key, value in path.items()}  # calendar ids hold @ (sent as %40)
        name = method_id.removeprefix("calendar.").replace(".", "_")
        handler = getattr(self, "do_" + name, None)
        if handler is None:
            raise ApiError(501, f"{method_id} is not implemented by the fake")
        return handler(path, params, body, headers)

    def _calendar(self, calendar_id: str) -> StoredCalendar:
        calendar_id = "primary" if calendar_id == "primary" else calendar_id
        if calendar_id == "primary":
            calendar_id = self.google.account
        found = self.calendars.get(calendar_id)
        if found is None:
            raise ApiError(404, "Not Found", "notFound")
        return found

    # --- calendars ------------------------------------------------------------------------------
    def do_calendarList_list(self, path: dict, params: dict, body: Any, headers: dict) -> dict[str, Any]:
        entries = [
            {
                "kind": "calendar#calendarListEntry",
                "etag": '"1"',
                "id": calendar.id,
                "summary": calendar.summary,
                "timeZone": calendar.time_zone,
                "accessRole": "owner",
                **({"primary": True} if calendar.id == self.google.account else {}),
            }
            for calendar in self.calendars.values()
        ]
        return self._page(entries, params, 100, 250, "calendar#calendarList")

    def do_calendars_get(self, path: dict, params: dict, body: Any, headers: dict) -> dict[str, Any]:
        calendar = self._calendar(path["calendarId"])
        return {
            "kind": "calendar#calendar",
            "etag": '"1"',
            "id": calendar.id,
            "summary": calendar.summary,
            "timeZone": calendar.time_zone,
        }

    @staticmethod
    def _page(items: list[Any], params: dict, default: int, most: int, kind: str, **extra: Any) -> dict[str, Any]:
        size = min(int(params.get("maxResults") or default), most)
        token = params.get("pageToken")
        if token is not None and not str(token).isdigit():
            raise ApiError(400, "Invalid page token", "invalid")
        offset = int(token or 0)
        page: dict[str, Any] = {"kind": kind, "etag": '"p1"', **extra, "items": items[offset : offset + size]}
        if offset + size < len(items):
            page["nextPageToken"] = str(offset + size)
        return page

    # --- storing events -------------------------------------------------------------------------
    def _insert(self, calendar: StoredCalendar, event: dict[str, Any]) -> dict[str, Any]:
        event_id = event.get("id") or secrets.token_hex(13)
        if not EVENT_ID.fullmatch(event_id):
            raise ApiError(400, "Invalid resource id value.", "invalid")
        if event_id in calendar.events:
            raise ApiError(409, "The requested identifier already exists.", "duplicate")
        self._check_times(event)
        now = _now()
        event.update(
            {
                "kind": "calendar#event",
                "id": event_id,
                "etag": f'"{secrets.randbelow(10**15)}"',
                "status": event.get("status", "confirmed"),
                "htmlLink": f"https://www.google.com/calendar/event?eid={event_id}",
                "created": now,
                "updated": now,
                "iCalUID": f"{event_id}@google.com",
                "sequence": 0,
                "creator": {"email": self.google.account, "self": True},
                "organizer": event.get("organizer") or {"email": calendar.id, "self": True},  # else: an invitation
                "eventType": "default",
            }
        )
        calendar.events[event_id] = event
        return event

    def _check_times(self, event: dict[str, Any]) -> None:
        start, end = event.get("start"), event.get("end")
        if not start or not end:
            raise ApiError(400, "Missing end time." if start else "Missing start time.", "required")
        if ("date" in start) != ("date" in end):
            raise ApiError(400, "Start and end times must either both be date or both be dateTime.", "invalid")
        if "date" in start:
            try:
                first, last = dt.date.fromisoformat(start["date"]), dt.date.fromisoformat(end["date"])
            except ValueError:
                raise ApiError(400, "Invalid date value.", "invalid") from None
            if last <= first:
                raise ApiError(400, "The specified time range is empty.", "timeRangeEmpty")
            return
        for part, name in ((start, "start"), (end, "end")):
            if "dateTime" not in part:
                raise ApiError(400, f"Missing {name} time.", "required")
            if part.get("timeZone"):
                _zone(part["timeZone"], "UTC")
            elif event.get("recurrence"):
                raise ApiError(400, f"Missing time zone definition for {name} time.", "required")
        if _instant(end["dateTime"], "end") < _instant(start["dateTime"], "start"):  # zero length is allowed
            raise ApiError(400, "The specified time range is empty.", "timeRangeEmpty")
        for line in event.get("recurrence") or []:
            if not line.upper().startswith(("RRULE:", "EXDATE", "RDATE", "EXRULE:")):
                raise ApiError(400, "Invalid recurrence rule.", "invalid")

    def _touch(self, event: dict[str, Any]) -> None:
        event["etag"] = f'"{secrets.randbelow(10**15)}"'
        event["updated"] = _now()
        event["sequence"] = int(event.get("sequence", 0)) + 1

    @staticmethod
    def _check_etag(event: dict[str, Any], headers: dict[str, str]) -> None:
        wanted = headers.get("if-match")
        if wanted and wanted != "*" and wanted != event.get("etag"):
            raise ApiError(412, "Precondition Failed", "conditionNotMet")

    # --- expanding series -----------------------------------------------------------------------
    def _start_of(self, part: dict[str, Any], calendar: StoredCalendar, zone: ZoneInfo) -> dt.datetime:
        """The instant an event time stands for; an all-day date is read as midnight in `zone`."""
        if "date" in part:
            return dt.datetime.combine(dt.date.fromisoformat(part["date"]), dt.time(0), tzinfo=zone)
        return _instant(part["dateTime"], "dateTime")

    def _instances(
        self, calendar: StoredCalendar, series: dict[str, Any], until: dt.datetime | None, show_deleted: bool = False
    ) -> list[dict[str, Any]]:
        """The occurrences of a series (exceptions applied), in order, up to `until`."""
        from dateutil.rrule import rrulestr

        all_day = "date" in series["start"]
        zone = _zone(series["start"].get("timeZone"), calendar.time_zone)
        if all_day:
            first: dt.datetime = dt.datetime.combine(dt.date.fromisoformat(series["start"]["date"]), dt.time(0))
            length = dt.date.fromisoformat(series["end"]["date"]) - first.date()
        else:
            first = _instant(series["start"]["dateTime"], "start").astimezone(zone)
            length = _instant(series["end"]["dateTime"], "end") - _instant(series["start"]["dateTime"], "start")
        rules = [line for line in series.get("recurrence", []) if line.upper().startswith("RRULE:")]
        excluded = self._exdates(series, zone, all_day)
        exceptions = {
            event["originalStartTime"].get("date") or _utc(_instant(event["originalStartTime"]["dateTime"], "o")): event
            for event in calendar.events.values()
            if event.get("recurringEventId") == series["id"]
        }
        found: list[dict[str, Any]] = []
        for rule in rules:
            try:
                starts = rrulestr(rule, dtstart=first)
            except (ValueError, TypeError):
                continue
            for index, start in enumerate(starts):
                if index >= MAX_INSTANCES or (until is not None and self._aware(start, zone) >= until + length):
                    break
                key = start.date().isoformat() if all_day else _utc(start)
                if key in excluded:
                    continue
                exception = exceptions.get(key)
                if exception is not None:
                    if exception.get("status") != "cancelled" or show_deleted:
                        found.append(exception)
                    continue
                found.append(self._instance(series, start, length, all_day, zone))
        return found

    @staticmethod
    def _aware(moment: dt.datetime, zone: ZoneInfo) -> dt.datetime:
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=zone)

    @staticmethod
    def _exdates(series: dict[str, Any], zone: ZoneInfo, all_day: bool) -> set[str]:
        keys = set()
        for line in series.get("recurrence", []):
            if not line.upper().startswith("EXDATE"):
                continue
            head, _, values = line.partition(":")
            tzid = re.search(r"TZID=([^;:]+)", head)
            for value in values.split(","):
                if len(value) == 8:
                    keys.add(f"{value[:4]}-{value[4:6]}-{value[6:]}")
                    continue
                moment = dt.datetime.strptime(value.rstrip("Z"), "%Y%m%dT%H%M%S")
                if value.endswith("Z"):
                    moment = moment.replace(tzinfo=dt.UTC)
                else:
                    moment = moment.replace(tzinfo=ZoneInfo(tzid.group(1)) if tzid else zone)
                keys.add(_utc(moment))
        return keys

    @staticmethod
    def _instance(
        series: dict[str, Any], start: dt.datetime, length: dt.timedelta, all_day: bool, zone: ZoneInfo
    ) -> dict[str, Any]:
        instance = {key: value for key, value in series.items() if key not in ("recurrence", "id")}
        if all_day:
            day = start.date()
            instance["id"] = f"{series['id']}_{day:%Y%m%d}"
            instance["start"] = {"date": day.isoformat()}
            instance["end"] = {"date": (day + length).isoformat()}
            instance["originalStartTime"] = {"date": day.isoformat()}
        else:
            name = series["start"].get("timeZone")
            instance["id"] = f"{series['id']}_{start.astimezone(dt.UTC):%Y%m%dT%H%M%SZ}"
            instance["start"] = {"dateTime": start.isoformat(), **({"timeZone": name} if name else {})}
            end = (start.astimezone(dt.UTC) + length).astimezone(zone)
            instance["end"] = {"dateTime": end.isoformat(), **({"timeZone": name} if name else {})}
            instance["originalStartTime"] = dict(instance["start"])
        instance["recurringEventId"] = series["id"]
        return instance

    def _expanded(self, calendar: StoredCalendar, until: dt.datetime | None) -> list[dict[str, Any]]:
        """Every single event and occurrence (exceptions in place of what they replace)."""
        out = []
        for event in calendar.events.values():
            if event.get("recurringEventId") or event.get("status") == "cancelled":
                continue
            if event.get("recurrence"):
                out += self._instances(calendar, event, until)
            else:
                out.append(event)
        return out

    def _overlaps(
        self, event: dict[str, Any], calendar: StoredCalendar, zone: ZoneInfo, low: dt.datetime, high: dt.datetime
    ) -> bool:
        start = self._start_of(event["start"], calendar, zone)
        end = self._start_of(event.get("end") or event["start"], calendar, zone)
        return end > low and start < high

    def _present(self, event: dict[str, Any], zone: ZoneInfo | None) -> dict[str, Any]:
        """As Google answers: date-times written in the request's time zone, when one was given."""
        out = copy.deepcopy(event)
        if zone is not None:
            for name in ("start", "end", "originalStartTime"):
                part = out.get(name)
                if part and "dateTime" in part:
                    part["dateTime"] = _instant(part["dateTime"], name).astimezone(zone).isoformat()
        return out

    def _range(self, params: dict) -> tuple[dt.datetime, dt.datetime]:
        low = _instant(params["timeMin"], "timeMin") if "timeMin" in params else dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
        high = _instant(params["timeMax"], "timeMax") if "timeMax" in params else dt.datetime(9999, 1, 1, tzinfo=dt.UTC)
        if high <= low:
            raise ApiError(400, "The specified time range is empty.", "timeRangeEmpty")
        return low, high

    # --- events ---------------------------------------------------------------------------------
    def do_events_list(self, path: dict, params: dict, body: Any, headers: dict) -> dict[str, Any]:
        calendar = self._calendar(path["calendarId"])
        single = params.get("singleEvents") == "true"
        if params.get("orderBy") == "startTime" and not single:
            raise ApiError(400, "The requested ordering is not available for the particular query.", "badRequest")
        low, high = self._range(params)
        zone = _zone(params.get("timeZone"), calendar.time_zone)
        if single:
            candidates = self._expanded(calendar, high)
        else:
            candidates = [
                event
                for event in calendar.events.values()
                if event.get("status") != "cancelled"
                and (not event.get("recurrence") or self._instances(calendar, event, high))
            ]
        # Which zone all-day dates are matched in is not documented; tests can choose the calendar's
        matching = _zone(calendar.time_zone, "UTC") if self.all_day_in_calendar_zone else zone
        chosen = [
            event
            for event in candidates
            if event.get("recurrence") or self._overlaps(event, calendar, matching, low, high)
        ]
        if params.get("orderBy") == "startTime":
            chosen.sort(key=lambda event: self._start_of(event["start"], calendar, zone))
        shown = [self._present(event, zone if "timeZone" in params else None) for event in chosen]
        return self._page(shown, params, 250, 2500, "calendar#events", summary=calendar.summary, timeZone=zone.key)

    def _find(self, calendar: StoredCalendar, event_id: str) -> dict[str, Any]:
        """A stored event, or the occurrence an instance id names (not stored until changed)."""
        stored = calendar.events.get(event_id)
        if stored is not None:
            return stored
        match = INSTANCE_ID.fullmatch(event_id)
        series = calendar.events.get(match.group("series")) if match else None
        if match is None or series is None or not series.get("recurrence") or series.get("status") == "cancelled":
            raise ApiError(404, "Not Found", "notFound")
        when = match.group("when")
        for instance in self._instances(calendar, series, None, show_deleted=True):
            original = instance["originalStartTime"]
            key = original["date"].replace("-", "") if "date" in original else None
            if key is None:
                key = _instant(original["dateTime"], "o").astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
            if key == when:
                return instance
        raise ApiError(404, "Not Found", "notFound")

    def do_events_get(self, path: dict, params: dict, body: Any, headers: dict) -> dict[str, Any]:
        calendar = self._calendar(path["calendarId"])
        zone = _zone(params.get("timeZone"), calendar.time_zone) if "timeZone" in params else None
        return self._present(self._find(calendar, path["eventId"]), zone)

    def do_events_instances(self, path: dict, params: dict, body: Any, headers: dict) -> dict[str, Any]:
        calendar = self._calendar(path["calendarId"])
        series = self._find(calendar, path["eventId"])
        zone = _zone(params.get("timeZone"), calendar.time_zone)
        low, high = self._range(params)
        if series.get("status") == "cancelled":
            raise ApiError(410, "Resource has been deleted", "deleted")
        found = self._instances(calendar, series, high, show_deleted=params.get("showDeleted") == "true")
        if "originalStart" in params:
            wanted = params["originalStart"]
            found = [item for item in found if self._same_original(item["originalStartTime"], wanted)]
        found = [item for item in found if self._overlaps(item, calendar, zone, low, high) or "originalStart" in params]
        shown = [self._present(item, zone if "timeZone" in params else None) for item in found]
        return self._page(shown, params, 250, 2500, "calendar#events", summary=calendar.summary, timeZone=zone.key)

    @staticmethod
    def _same_original(original: dict[str, Any], wanted: str) -> bool:
        if "date" in original:
            return original["date"] == wanted
        if len(wanted) == 10:
            return False
        return _instant(original["dateTime"], "o") == _instant(wanted, "originalStart")

    def do_events_insert(self, path: dict, params: dict, body: Any, headers: dict) -> dict[str, Any]:
        calendar = self._calendar(path["calendarId"])
        event = copy.deepcopy(body or {})
        self._invitation(event, params)
        made = self._insert(calendar, event)
        self._mail(made, params)
        return made

    # --- guests and conferences ----------------------------------------------------------------
    def _invitation(self, event: dict[str, Any], params: dict) -> None:
        """Guests as Google stores them, and a Meet conference when version 1 asks for one."""
        guests = event.get("attendees")
        if guests is not None:
            for guest in guests:
                address = guest.get("email")
                if not address:
                    raise ApiError(400, "Missing attendee email.", "required")
                if not ATTENDEE.fullmatch(address):
                    raise ApiError(400, "Invalid attendee email.", "invalid")
                guest.setdefault("responseStatus", "needsAction")
                if address.lower() == self.google.account.lower():
                    guest["self"] = True
        conference = event.pop("conferenceData", None)
        version = int(params.get("conferenceDataVersion", 0))
        if version not in (0, 1):
            raise ApiError(400, "Invalid value for conferenceDataVersion.", "invalid")
        if conference is None or version == 0:  # version 0: conference data in the body is ignored
            return
        request = conference.get("createRequest")
        if request is None:
            event["conferenceData"] = conference
            return
        if not request.get("requestId"):
            raise ApiError(400, "Invalid conference create request: missing requestId.", "invalid")
        kind = (request.get("conferenceSolutionKey") or {}).get("type")
        if kind not in ALLOWED_CONFERENCES:
            raise ApiError(400, "Invalid conference type value.", "invalid")
        code = "-".join(secrets.token_hex(2)[:n] for n in (3, 4, 3)).translate(
            str.maketrans("0123456789", "qrstuvwxyz")
        )
        link = f"https://meet.google.com/{code}"
        event["conferenceData"] = {
            "createRequest": {**request, "status": {"statusCode": "success"}},
            "entryPoints": [{"entryPointType": "video", "uri": link, "label": link.removeprefix("https://")}],
            "conferenceSolution": {"key": {"type": kind}, "name": "Google Meet"},
            "conferenceId": code,
        }
        event["hangoutLink"] = link

    def _mail(self, event: dict[str, Any], params: dict) -> None:
        """Who Google mails, as sendUpdates says (absent: nobody)."""
        wanted = params.get("sendUpdates", "none")
        domain = self.google.account.rpartition("@")[2]
        for guest in event.get("attendees") or []:
            if guest.get("self"):
                continue
            if wanted == "all" or (wanted == "externalOnly" and guest["email"].rpartition("@")[2] != domain):
                self.mailed.append((guest["email"], event["id"]))

    def _writable(self, calendar: StoredCalendar, event_id: str, headers: dict) -> dict[str, Any]:
        """The stored event to change; an occurrence becomes an exception on its first change."""
        event = self._find(calendar, event_id)
        if event.get("status") == "cancelled":
            raise ApiError(410, "Resource has been deleted", "deleted")
        self._check_etag(event, headers)
        if event["id"] not in calendar.events:
            event = copy.deepcopy(event)
            event["etag"] = f'"{secrets.randbelow(10**15)}"'
            calendar.events[event["id"]] = event
        return event

    def do_events_patch(self, path: dict, params: dict, body: Any, headers: dict) -> dict[str, Any]:
        calendar = self._calendar(path["calendarId"])
        event = self._writable(calendar, path["eventId"], headers)
        body = copy.deepcopy(body or {})
        self._guest_may(event, body)
        self._invitation(body, params)
        if "conferenceData" not in body and event.get("conferenceData") and int(params.get("conferenceDataVersion", 0)):
            body["conferenceData"] = event["conferenceData"]
        changed = {**copy.deepcopy(event), **body}
        self._apply(calendar, event, changed)
        self._mail(event, params)
        return event

    def _guest_may(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        """On an event someone else organises, a guest changes only their own answer and note."""
        if (event.get("organizer") or {}).get("self"):
            return
        if set(body) - {"attendees"}:
            raise ApiError(403, "You need to have writer access to this calendar.", "forbiddenForNonOrganizer")
        before = {guest["email"]: guest for guest in event.get("attendees") or []}
        after = {guest.get("email"): guest for guest in body.get("attendees") or []}
        if set(before) != set(after):
            raise ApiError(403, "Only the organizer can change the guest list.", "forbiddenForNonOrganizer")
        for address, guest in after.items():
            if before[address].get("self"):
                continue
            if guest != before[address]:
                raise ApiError(403, "Only the organizer can change other guests.", "forbiddenForNonOrganizer")

    def do_events_update(self, path: dict, params: dict, body: Any, headers: dict) -> dict[str, Any]:
        calendar = self._calendar(path["calendarId"])
        event = self._writable(calendar, path["eventId"], headers)
        kept = {key: event[key] for key in KEPT_ON_UPDATE if key in event}
        self._apply(calendar, event, {**kept, **copy.deepcopy(body or {})})
        return event

    def _apply(self, calendar: StoredCalendar, event: dict[str, Any], changed: dict[str, Any]) -> None:
        if event.get("recurringEventId") and changed.get("recurrence"):
            raise ApiError(400, "Invalid recurrence: an occurrence cannot repeat.", "invalid")
        self._check_times(changed)
        if event.get("recurrence") and not changed.get("recurrence"):
            for other in [key for key, item in calendar.events.items() if item.get("recurringEventId") == event["id"]]:
                del calendar.events[other]  # no longer a series: its exceptions go
        event.clear()
        event.update({key: value for key, value in changed.items() if key != "recurrence" or value})
        self._touch(event)

    def do_events_delete(self, path: dict, params: dict, body: Any, headers: dict) -> Response:
        calendar = self._calendar(path["calendarId"])
        event = self._find(calendar, path["eventId"])
        if event.get("status") == "cancelled":
            raise ApiError(410, "Resource has been deleted", "deleted")
        self._check_etag(event, headers)
        if event["id"] not in calendar.events:  # an occurrence: store it as a cancelled exception
            event = copy.deepcopy(event)
            calendar.events[event["id"]] = event
        event["status"] = "cancelled"
        self._touch(event)
        return Response(204)

    # --- freeBusy -------------------------------------------------------------------------------
    def do_freebusy_query(self, path: dict, params: dict, body: Any, headers: dict) -> dict[str, Any]:
        body = body or {}
        for name in ("timeMin", "timeMax"):
            if name not in body:
                raise ApiError(400, f"Missing {name}.", "required")
        low, high = self._range(body)
        if high - low > dt.timedelta(days=62):
            raise ApiError(400, "The requested time range is too long.", "timeRangeTooLong")
        answers: dict[str, Any] = {}
        for item in body.get("items", []):
            calendar_id = item.get("id", "")
            calendar = self.calendars.get(self.google.account if calendar_id == "primary" else calendar_id)
            if calendar is None:
                answers[calendar_id] = {"errors": [{"domain": "global", "reason": "notFound"}], "busy": []}
                continue
            zone = _zone(body.get("timeZone"), calendar.time_zone)
            spans = []
            for event in self._expanded(calendar, high):
                if event.get("transparency") == "transparent" or event.get("status") == "cancelled":
                    continue
                if not self._overlaps(event, calendar, zone, low, high):
                    continue
                start = max(self._start_of(event["start"], calendar, zone), low)
                end = min(self._start_of(event["end"], calendar, zone), high)
                spans.append((start.astimezone(dt.UTC), end.astimezone(dt.UTC)))
            merged: list[list[dt.datetime]] = []
            for start, end in sorted(spans):
                if merged and start <= merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], end)
                else:
                    merged.append([start, end])
            answers[calendar_id] = {"busy": [{"start": _utc(start), "end": _utc(end)} for start, end in merged]}
        return {
            "kind": "calendar#freeBusy",
            "timeMin": _utc(low),
            "timeMax": _utc(high),
            "calendars": answers,
        }
