"""The CalDAV backend: one CalDAV calendar, reached through a worker thread with a deadline.

caldav is synchronous, so every exchange runs in `anyio.to_thread.run_sync` under
`fail_after`. Failures become `ToolFailure`s built from our own words only: server
messages and exception texts never reach the model, so neither can the password.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import re
import threading
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar
from zoneinfo import ZoneInfo

import anyio
import anyio.to_thread

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.calendar.config import CalDavSettings
from mcp_tools.servers.calendar.service import (
    Busy,
    CalendarBackend,
    Changes,
    Invite,
    Occurrence,
    Response,
    busy_of,
)
from mcp_tools.servers.calendar.store import CreatedEvents
from mcp_tools.servers.calendar.timeutil import Moment

if TYPE_CHECKING:
    import icalendar
    from caldav.lib.url import URL

log = logging.getLogger(__name__)
T = TypeVar("T")
FETCH_MARGIN = dt.timedelta(days=1)
SIMPLE_UID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_@-]{0,200}")


# caldav annotates one API for its synchronous and asynchronous clients at once (a result or a
# coroutine of it) and leaves some methods unannotated: these are the synchronous calls we make.
class DavResource(Protocol):
    """One calendar object resource (a VCALENDAR document on the server)."""

    data: str

    def load(self) -> object: ...

    def save(self, *, increase_seqno: bool, only_this_recurrence: bool, all_recurrences: bool) -> object: ...

    def delete(self) -> None: ...


class DavCalendar(Protocol):
    """A calendar collection, as `DAVClient.calendar` opens it (by URL, so its URL is known)."""

    @property
    def url(self) -> URL: ...

    def get_display_name(self) -> object: ...

    def search(
        self, *, start: dt.datetime, end: dt.datetime, event: bool, expand: bool, post_filter: bool
    ) -> list[DavResource]: ...

    def add_event(self, ical: str, *, increase_seqno: bool) -> object: ...

    def event_by_url(self, href: URL) -> DavResource: ...

    def get_event_by_uid(self, uid: str) -> DavResource: ...


class DavPrincipal(Protocol):
    def calendar(self, *, name: str) -> DavCalendar: ...


class DavClient(Protocol):
    """`caldav.DAVClient`, which mypy checks against this where one is made."""

    def calendar(self, *, url: str) -> DavCalendar: ...

    def principal(self) -> DavPrincipal: ...

    def close(self) -> None: ...


class CalDavCalendar:
    """The `CalendarBackend` of one CalDAV calendar."""

    def __init__(self, settings: CalDavSettings, created: CreatedEvents) -> None:
        self.settings = settings
        self.created = created
        self._calendar_url: str | None = None
        self._resolve_lock = threading.Lock()
        self._clients = threading.local()

    def __repr__(self) -> str:
        return f"CalDavCalendar({self.settings.server_label}, calendar={self.settings.calendar!r})"

    @property
    def zone(self) -> ZoneInfo:
        return self.settings.zone

    async def busy_between(self, start: dt.datetime, end: dt.datetime) -> Busy:
        return busy_of(await self.events_between(start, end), self.zone)

    async def events_between(self, start: dt.datetime, end: dt.datetime) -> list[Occurrence]:
        """Occurrences overlapping [start, end), recurring series expanded."""
        from mcp_tools.servers.calendar import ical

        def work(calendar: DavCalendar) -> list[Occurrence]:
            found = calendar.search(
                start=start - FETCH_MARGIN,
                end=end + FETCH_MARGIN,
                event=True,
                expand=False,
                post_filter=False,
            )
            documents = [document for document in map(_parse_or_skip, found) if document is not None]
            return ical.expand(documents, start, end, self.zone)

        return await self._call(work)

    async def event(self, uid: str) -> Occurrence | None:
        from mcp_tools.servers.calendar import ical

        def work(calendar: DavCalendar) -> icalendar.Calendar | None:
            resource = _by_uid(calendar, uid)
            return None if resource is None else ical.parse_calendar(resource.data)

        found = await self._call(work)
        return None if found is None else ical.series(found, uid)

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
        from mcp_tools.servers.calendar import ical

        self.check_invite(invite)
        parsed_rule = ical.check_rule(rule) if rule else None
        uid = str(uuid.uuid4())
        document = ical.new_calendar(uid, title, start, end, self.zone, parsed_rule, location, description)
        # Recorded first: a lost reply must not turn our own event into the person's.
        self.created.add(uid)

        def work(calendar: DavCalendar) -> None:
            # A fresh UUID cannot collide, and a no-overwrite check costs a UID search on some servers.
            calendar.add_event(document.to_ical().decode(), increase_seqno=False)

        await self._call(work)
        created = ical.series(document, uid)
        assert created is not None
        return created

    async def update(self, uid: str, occurrence: Moment | None, changes: Changes) -> Occurrence:
        from mcp_tools.servers.calendar import ical

        self.check_invite(changes.invite)

        def edit(document: icalendar.Calendar) -> None:
            if occurrence is None:
                ical.update_series(document, uid, changes, self.zone)
            else:
                ical.update_occurrence(document, uid, occurrence, changes, self.zone)

        document = await self._call(lambda calendar: _rewrite(calendar, uid, edit))
        updated = ical.series(document, uid)
        assert updated is not None
        return updated

    async def delete(self, uid: str, occurrence: Moment | None) -> None:
        from mcp_tools.servers.calendar import ical

        if occurrence is None:

            def work(calendar: DavCalendar) -> None:
                resource = _by_uid(calendar, uid)
                if resource is None:
                    raise ToolFailure("not_found", f"no event with uid {uid!r} in the calendar")
                resource.delete()

            await self._call(work)
            self.created.remove(uid)
            return

        def edit(document: icalendar.Calendar) -> None:
            ical.delete_occurrence(document, uid, occurrence, self.zone)

        await self._call(lambda calendar: _rewrite(calendar, uid, edit))

    def check_invite(self, invite: Invite) -> None:
        """A CalDAV calendar here is one shared calendar, not a mailbox: it neither invites nor mails."""
        if not invite.empty:
            raise ToolFailure(
                "invalid_arguments",
                "the CalDAV calendar does not invite guests, add Meet links or send mail: it is one calendar "
                "shared with the assistant, and inviting would send the person's address and the event to others",
                hint='leave attendees, meet and notify out; inviting needs [calendar] backend = "google"',
            )

    async def check_respond(self, uid: str) -> None:
        raise ToolFailure(
            "invalid_arguments",
            "the CalDAV calendar does not answer invitations: it is one calendar shared with the assistant, "
            "and an answer would be mailed to the organiser from the person's account",
            hint='answer in the calendar app; this needs [calendar] backend = "google"',
        )

    async def respond(self, uid: str, response: Response, note: str | None) -> None:
        await self.check_respond(uid)

    def check_rule(self, rule: str) -> None:
        from mcp_tools.servers.calendar.ical import check_rule

        check_rule(rule)

    async def check_update(self, uid: str, occurrence: Moment | None, changes: Changes) -> None:
        """The edit is tried on a copy of the stored event."""
        from mcp_tools.servers.calendar import ical

        def edit(document: icalendar.Calendar) -> None:
            if occurrence is None:
                ical.update_series(document, uid, changes, self.zone)
            else:
                ical.update_occurrence(document, uid, occurrence, changes, self.zone)

        await self.rehearse(uid, edit)

    async def check_delete(self, uid: str, occurrence: Moment | None) -> None:
        """The deletion is tried on a copy of the stored event."""
        from mcp_tools.servers.calendar import ical

        def edit(document: icalendar.Calendar) -> None:
            if occurrence is not None:
                ical.delete_occurrence(document, uid, occurrence, self.zone)

        await self.rehearse(uid, edit)

    async def rehearse(self, uid: str, edit: Callable[[icalendar.Calendar], None] | None = None) -> None:
        """Find the event and try `edit` on a copy, writing nothing: what an update or delete would meet."""
        from mcp_tools.servers.calendar import ical

        def work(calendar: DavCalendar) -> None:
            resource = _by_uid(calendar, uid)
            if resource is None:
                raise ToolFailure("not_found", f"no event with uid {uid!r} in the calendar")
            if edit is not None:
                edit(ical.parse_calendar(resource.data))

        await self._call(work)

    async def check(self) -> str:
        """Connect and open the calendar; returns its URL for a person to read."""
        return await self._call(lambda calendar: str(calendar.url))

    async def _call(self, work: Callable[[DavCalendar], T]) -> T:
        label = self.settings.server_label
        try:
            with anyio.fail_after(self.settings.timeout_seconds + 1):
                return await anyio.to_thread.run_sync(self._in_thread, work, abandon_on_cancel=True)
        except TimeoutError:
            raise ToolFailure(
                "timeout",
                f"the CalDAV server {label} did not answer within {self.settings.timeout_seconds:g} s",
                hint="try again later, or raise [calendar] timeout_seconds",
            ) from None

    def _in_thread(self, work: Callable[[DavCalendar], T]) -> T:
        client = self._client()
        try:
            return work(self._open(client))
        except ToolFailure:
            raise
        except Exception as error:  # every upstream error is translated, never echoed
            self._drop_client(client)
            raise self._translate(error) from None

    def _client(self) -> DavClient:
        """One client per worker thread: it keeps its connection and the server's auth scheme."""
        from caldav.davclient import DAVClient
        from caldav.lib import error as dav_error

        # caldav can dump whole exchanges, credentials included, to temp files (PYTHON_CALDAV_COMMDUMP).
        dav_error.debug_dump_communication = False
        client: DavClient | None = getattr(self._clients, "client", None)
        if client is None:
            password = self.settings.password.get_secret_value() if self.settings.password else None
            client = DAVClient(
                url=self.settings.url,
                username=self.settings.username,
                password=password,
                # caldav annotates an int, and hands the value to its HTTP library, which takes float seconds
                timeout=self.settings.timeout_seconds,  # type: ignore[arg-type]
                enable_rfc6764=False,
            )
            self._clients.client = client
        return client

    def _drop_client(self, client: DavClient) -> None:
        """After a failure start afresh: the connection or the credentials may be stale."""
        self._clients.client = None
        with contextlib.suppress(Exception):
            client.close()

    def _open(self, client: DavClient) -> DavCalendar:
        """The configured calendar only; found once by name, then opened by URL."""
        from caldav.lib import error as dav_error

        if not self._resolve_lock.acquire(timeout=self.settings.timeout_seconds):
            raise ToolFailure("timeout", f"still waiting for {self.settings.server_label} on an earlier call")
        try:
            if self._calendar_url is None:
                try:
                    if self.settings.calendar_is_url:
                        calendar = client.calendar(url=self.settings.calendar)
                        calendar.get_display_name()
                    else:
                        calendar = client.principal().calendar(name=self.settings.calendar)
                except dav_error.NotFoundError:
                    raise ToolFailure(
                        "not_configured",
                        f"the calendar {self.settings.calendar!r} was not found on {self.settings.server_label}",
                        hint="check [calendar] calendar: the display name exactly as your calendar app "
                        "shows it, or the calendar's URL",
                    ) from None
                self._calendar_url = str(calendar.url)
        finally:
            self._resolve_lock.release()
        return client.calendar(url=self._calendar_url)

    def _translate(self, error: Exception) -> ToolFailure:
        from caldav.lib import error as dav_error

        label = self.settings.server_label
        names = {cls.__name__ for cls in type(error).__mro__}
        log.info("calendar upstream failure: %s", type(error).__name__)
        if isinstance(error, dav_error.AuthorizationError):
            return ToolFailure(
                "not_configured",
                f"the CalDAV server {label} refused the username or password",
                hint="check [calendar] username and the password (for iCloud an app-specific password)",
            )
        if isinstance(error, dav_error.ETagMismatchError | dav_error.ScheduleTagMismatchError):
            return ToolFailure("conflict", "the event changed on the server meanwhile", hint="read it again and retry")
        if isinstance(error, dav_error.NotFoundError):
            return ToolFailure("not_found", "the CalDAV server has no such event or calendar")
        if "Timeout" in names or any(name.endswith("TimeoutError") for name in names):
            return ToolFailure(
                "timeout",
                f"the CalDAV server {label} did not answer in time",
                hint="try again later, or raise [calendar] timeout_seconds",
            )
        if isinstance(error, dav_error.DAVError):
            status = getattr(error, "status", None) or "an error"
            return ToolFailure("upstream_error", f"the CalDAV server {label} answered with {status}")
        if "ConnectionError" in names or isinstance(error, OSError):
            return ToolFailure(
                "upstream_error",
                f"cannot reach the CalDAV server {label}",
                hint="check [calendar] url and the network",
            )
        return ToolFailure("upstream_error", f"unexpected failure talking to {label} ({type(error).__name__})")


_SATISFIES_PROTOCOL: type[CalendarBackend] = CalDavCalendar  # checked by mypy


def _parse_or_skip(resource: DavResource) -> icalendar.Calendar | None:
    """One unreadable event must not hide the rest of the calendar."""
    from mcp_tools.servers.calendar import ical

    try:
        return ical.parse_calendar(resource.data)
    except Exception:  # icalendar raises several types for malformed data
        log.warning("skipping an unreadable calendar object")
        return None


def _by_uid(calendar: DavCalendar, uid: str) -> DavResource | None:
    """The resource holding `uid`: first where we store our own events, else by a UID search."""
    from caldav.lib import error as dav_error

    from mcp_tools.servers.calendar import ical

    if SIMPLE_UID.fullmatch(uid):
        guess = calendar.url.join(uid + ".ics")
        try:
            resource = calendar.event_by_url(guess)
            resource.load()
            if ical.holds_uid(ical.parse_calendar(resource.data), uid):
                return resource
        except dav_error.AuthorizationError:
            raise
        except dav_error.DAVError:
            pass  # not stored under its UID: search for it
    try:
        return calendar.get_event_by_uid(uid)
    except dav_error.NotFoundError:
        return None


def _rewrite(calendar: DavCalendar, uid: str, edit: Callable[[icalendar.Calendar], None]) -> icalendar.Calendar:
    """Read, edit and write back one resource; the ETag guards against a concurrent change."""
    from mcp_tools.servers.calendar import ical

    resource = _by_uid(calendar, uid)
    if resource is None:
        raise ToolFailure("not_found", f"no event with uid {uid!r} in the calendar")
    document = ical.parse_calendar(resource.data)
    edit(document)
    resource.data = document.to_ical().decode()
    resource.save(increase_seqno=False, only_this_recurrence=False, all_recurrences=True)
    return document
