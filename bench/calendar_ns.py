"""Calendar namespace latency against a local Radicale server (loopback, no network).

Run: .venv/bin/python bench/calendar_ns.py [--events 300] [--repeat 7]
Prints the median and spread of each operation over the repeats.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import datetime as dt
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from zoneinfo import ZoneInfo

import anyio

from mcp_tools.core.tooling import CallContext, Environment
from mcp_tools.servers import calendar as calendar_ns
from mcp_tools.servers.calendar import ical
from mcp_tools.servers.calendar.tools import (
    AvailabilityArgs,
    EventsArgs,
    availability,
    events,
    events_risk,
)

ZONE = ZoneInfo("Europe/Berlin")


def start_radicale(folder: Path) -> tuple[str, socket.socket]:
    import radicale.config
    import radicale.server

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    configuration = radicale.config.load("")
    configuration.update(
        {
            "server": {"hosts": f"127.0.0.1:{port}"},
            "storage": {"filesystem_folder": str(folder / "collections")},
            "auth": {"type": "none"},
            "logging": {"level": "error"},
        },
        "bench",
        privileged=True,
    )
    shutdown, peer = socket.socketpair()
    threading.Thread(target=radicale.server.serve, args=(configuration, peer), daemon=True).start()
    for _ in range(500):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.02)
    return f"http://127.0.0.1:{port}/", shutdown


async def timed(repeat: int, work: Callable[[], Awaitable[object]]) -> list[float]:
    samples = []
    for _ in range(repeat):
        began = time.perf_counter()
        await work()
        samples.append((time.perf_counter() - began) * 1000)
    return samples


def report(name: str, samples: list[float]) -> None:
    print(f"{name:<48} median {statistics.median(samples):8.1f} ms   min {min(samples):8.1f}   max {max(samples):8.1f}")


async def main(count: int, repeat: int) -> None:
    import caldav

    folder = Path(tempfile.mkdtemp(prefix="calendar-bench-"))
    url, _shutdown = start_radicale(folder)
    with caldav.DAVClient(url=url, username="bench", password="x") as client:
        client.request(url + "bench/", "MKCOL")
        shared = client.principal().make_calendar(name="Bench")
        base = dt.datetime(2026, 3, 2, 8, tzinfo=ZONE)
        for index in range(count):
            start = base + dt.timedelta(days=index % 28, hours=index % 9)
            document = ical.new_calendar(
                f"seed-{index}", f"Event {index}", start, start + dt.timedelta(minutes=45), ZONE
            )
            shared.add_event(document.to_ical().decode())
        weekly = ical.new_calendar(
            "seed-weekly", "Weekly", base, base + dt.timedelta(hours=1), ZONE, ical.check_rule("FREQ=WEEKLY")
        )
        shared.add_event(weekly.to_ical().decode())

    env = Environment(folder / "data", folder / "state", {})
    service = calendar_ns.create(
        calendar_ns.CalendarConfig(url=url, username="bench", password="x", calendar="Bench", timezone="Europe/Berlin"),
        env,
    )
    ctx = CallContext()
    print(f"{count} events plus one weekly series in a 4-week month; {repeat} repeats each\n")
    began = time.perf_counter()
    await service.check()
    print(f"{'first call (finds the calendar by name)':<48} {(time.perf_counter() - began) * 1000:8.1f} ms")

    month = {"start": "2026-03-01", "end": "2026-03-31"}
    report(
        "availability, one day",
        await timed(repeat, lambda: availability(service, AvailabilityArgs(start="2026-03-03", end="2026-03-03"), ctx)),
    )
    report(
        "availability, month, with free slots",
        await timed(repeat, lambda: availability(service, AvailabilityArgs(**month, min_free_minutes=30), ctx)),
    )

    async def events_month() -> None:
        args = EventsArgs(**month, limit=200)
        await events_risk(service, args)
        await events(service, args, ctx)

    report("events, month (risk check + first page)", await timed(repeat, events_month))

    async def create_and_delete() -> None:
        created = await service.create("Bench", dt.date(2026, 4, 1), dt.date(2026, 4, 2), None, None, None)
        await service.delete(created.uid, None)

    report("create + delete one event", await timed(repeat, create_and_delete))

    calendars = []
    with caldav.DAVClient(url=url, username="bench", password="x") as client:
        found = client.calendar(url=service._calendar_url).search(event=True)
        calendars = [ical.parse_calendar(item.data) for item in found]
    start, end = dt.datetime(2026, 3, 1, tzinfo=ZONE), dt.datetime(2026, 4, 1, tzinfo=ZONE)

    async def expand_only() -> None:
        ical.expand(calendars, start, end, ZONE)

    report(f"expand {len(calendars)} resources in memory (no I/O)", await timed(repeat, expand_only))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()
    anyio.run(main, options.events, options.repeat)
