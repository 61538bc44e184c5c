"""A real Radicale CalDAV server on 127.0.0.1 for the calendar tests, started once per session.

Auth checks passwords (htpasswd, plain) so the wrong-password path is real. Each test gets
its own shared calendar and a private calendar in the same account that must stay unseen.
"""

from __future__ import annotations

import datetime as dt
import logging
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

USERNAME = "alice"
PASSWORD = "correct horse battery staple"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Radicale:
    url: str
    folder: Path

    def client(self) -> Any:
        import caldav

        return caldav.DAVClient(url=self.url, username=USERNAME, password=PASSWORD, timeout=10)

    def make_calendar(self, name: str) -> Any:
        with self.client() as client:
            return client.principal().make_calendar(name=name)


@pytest.fixture(scope="session", name="radicale")
def radicale_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Radicale]:
    import radicale.config
    import radicale.server

    folder = tmp_path_factory.mktemp("radicale")
    users = folder / "users"
    users.write_text(f"{USERNAME}:{PASSWORD}\n")
    port = free_port()
    configuration = radicale.config.load("")
    configuration.update(
        {
            "server": {"hosts": f"127.0.0.1:{port}"},
            "storage": {"filesystem_folder": str(folder / "collections")},
            "auth": {
                "type": "htpasswd",
                "htpasswd_filename": str(users),
                "htpasswd_encryption": "plain",
                "delay": "0",
            },
            "logging": {"level": "error"},
        },
        "test",
        privileged=True,
    )
    shutdown, shutdown_peer = socket.socketpair()
    thread = threading.Thread(target=radicale.server.serve, args=(configuration, shutdown_peer), daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError("Radicale did not start") from None
            time.sleep(0.02)
    logging.getLogger("radicale").setLevel(logging.ERROR)
    yield Radicale(url=f"http://127.0.0.1:{port}/", folder=folder)
    shutdown.close()
    thread.join(timeout=5)
    shutdown_peer.close()


@dataclass
class World:
    """One test's calendars: the shared one the tools use, and a private one they must not see."""

    server: Radicale
    shared_name: str
    shared: Any
    private: Any
    timezone: str = "Europe/Berlin"

    def section(self, **overrides: Any) -> dict[str, Any]:
        section: dict[str, Any] = {
            "url": self.server.url,
            "username": USERNAME,
            "password": PASSWORD,
            "calendar": self.shared_name,
            "timezone": self.timezone,
            "timeout_seconds": 10,
        }
        section.update(overrides)
        return section

    def settings(self, **overrides: Any) -> dict[str, Any]:
        return {"server": {"servers": ["calendar"]}, "calendar": self.section(**overrides)}

    def add_person_event(self, calendar: Any, ics: str) -> None:
        """An event the person made in another client (its UID is not in our state)."""
        calendar.add_event(ics)


@pytest.fixture(name="world")
def world_fixture(radicale: Radicale) -> World:
    token = uuid.uuid4().hex[:8]
    shared_name = f"AI Assistant Shared {token}"
    return World(
        server=radicale,
        shared_name=shared_name,
        shared=radicale.make_calendar(shared_name),
        private=radicale.make_calendar(f"Private {token}"),
    )


def person_event(
    title: str,
    start: dt.datetime | dt.date,
    end: dt.datetime | dt.date,
    *,
    uid: str | None = None,
    extra: str = "",
) -> str:
    """iCalendar text as another client would write it (UTC times or dates)."""

    def stamp(value: dt.datetime | dt.date) -> str:
        if isinstance(value, dt.datetime):
            return ":" + value.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        return ";VALUE=DATE:" + value.strftime("%Y%m%d")

    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//Person//Other Client//EN",
        "BEGIN:VEVENT",
        f"UID:{uid or uuid.uuid4()}",
        "DTSTAMP:20260101T000000Z",
        f"DTSTART{stamp(start)}",
        f"DTEND{stamp(end)}",
        f"SUMMARY:{title}",
        *([extra] if extra else []),
        "END:VEVENT",
        "END:VCALENDAR",
    ]
    return "\r\n".join(lines) + "\r\n"


# --- the same calendar behind either backend ------------------------------------------------------


@dataclass
class CalDavUnderTest:
    """The Radicale world seen through what the shared behaviour tests need."""

    world: World
    backend: str = "caldav"

    @property
    def timezone(self) -> str:
        return self.world.timezone

    @timezone.setter
    def timezone(self, value: str) -> None:
        self.world.timezone = value

    def settings(self, **overrides: Any) -> dict[str, Any]:
        return self.world.settings(**overrides)

    def add(
        self, title: str, start: dt.datetime | dt.date, end: dt.datetime | dt.date, *, private: bool = False
    ) -> str:
        """An event the person made in another client; returns its uid."""
        uid = str(uuid.uuid4())
        self.world.add_person_event(
            self.world.private if private else self.world.shared, person_event(title, start, end, uid=uid)
        )
        return uid

    def title(self, uid: str, *, private: bool = False) -> str | None:
        """The stored title of an event, None when it is gone."""
        calendar = self.world.private if private else self.world.shared
        with self.world.server.client() as client:
            try:
                found = client.calendar(url=calendar.url).get_event_by_uid(uid)
            except Exception:
                return None
        return str(found.icalendar_component.get("summary"))

    def all_day_dates(self, uid: str) -> tuple[str, str]:
        """The stored first day and exclusive end day of an all-day event."""
        with self.world.server.client() as client:
            component = client.calendar(url=self.world.shared.url).get_event_by_uid(uid).icalendar_component
        return component["dtstart"].dt.isoformat(), component["dtend"].dt.isoformat()


class GoogleUnderTest:
    """The fake Google Calendar with a shared calendar, a private one and the primary one."""

    backend = "google"

    def __init__(self, tmp_path: Path, google: Any, fake: Any) -> None:
        from mcp_tools.servers.google import scopes
        from tests.servers.gmail.fixtures import sign_in

        self.fake = fake
        self.shared = fake.add_calendar("AI Assistant Shared")
        self.private = fake.add_calendar("Private")
        self.primary = fake.add_calendar(google.account, primary=True)
        granted = [scopes.CALENDAR_READONLY, scopes.CALENDAR_EVENTS, scopes.CALENDAR_FREEBUSY]
        self.base = sign_in(tmp_path, google, granted=granted, servers=["calendar"])
        self.timezone = "Europe/Berlin"

    def settings(self, **overrides: Any) -> dict[str, Any]:
        section = {"backend": "google", "calendar": self.shared.summary, "timezone": self.timezone, **overrides}
        return {**self.base, "calendar": section}

    def add(
        self, title: str, start: dt.datetime | dt.date, end: dt.datetime | dt.date, *, private: bool = False
    ) -> str:
        def when(value: dt.datetime | dt.date) -> dict[str, str]:
            if isinstance(value, dt.datetime):
                return {"dateTime": value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")}
            return {"date": value.isoformat()}

        event = {"summary": title, "start": when(start), "end": when(end)}
        return str(self.fake.add_event(self.private if private else self.shared, event)["id"])

    def title(self, uid: str, *, private: bool = False) -> str | None:
        found = self.fake.stored(self.private if private else self.shared, uid)
        return None if found is None or found.get("status") == "cancelled" else str(found.get("summary"))

    def all_day_dates(self, uid: str) -> tuple[str, str]:
        found = self.fake.stored(self.shared, uid)
        return found["start"]["date"], found["end"]["date"]


@pytest.fixture(name="cal", params=["caldav", "google"])
def calendar_under_test(request: pytest.FixtureRequest, tmp_path: Path) -> CalDavUnderTest | GoogleUnderTest:
    """The one dedicated calendar, once on Radicale (CalDAV) and once on the fake Google Calendar."""
    if request.param == "caldav":
        return CalDavUnderTest(request.getfixturevalue("world"))
    return GoogleUnderTest(tmp_path, request.getfixturevalue("google"), request.getfixturevalue("gcal"))
