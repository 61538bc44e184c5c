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
