"""The `calendar` namespace: one dedicated CalDAV calendar, privacy by design.

Only the configured calendar is opened; busy times are free to read, event details of
the person's own events need their confirmation. caldav and icalendar load lazily.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from mcp_tools.servers.calendar.config import CalendarConfig, resolve_settings
from mcp_tools.servers.calendar.store import CreatedEvents
from mcp_tools.servers.calendar.tools import TOOLS
from mcp_tools.tooling import CliCommand, Environment, Namespace

if TYPE_CHECKING:
    from mcp_tools.servers.calendar.backend import CalendarBackend


def create(config: CalendarConfig, env: Environment) -> CalendarBackend:
    """Cheap: validates the config and opens nothing; the server is first reached on use."""
    settings = resolve_settings(config, env.env)
    created = CreatedEvents(env.namespace_state_dir("calendar") / "created_events.sqlite3")
    from mcp_tools.servers.calendar.caldav import CalDavCalendar

    return CalDavCalendar(settings, created)


async def _check(service: CalendarBackend, options: argparse.Namespace) -> int:
    from mcp_tools.tooling import ToolFailure

    try:
        url = await service.check()
    except ToolFailure as failure:
        print(f"calendar: {failure.message}" + (f" ({failure.hint})" if failure.hint else ""))
        return 1
    print(f"calendar: connected; using {url} (zone {service.zone.key})")
    return 0


NAMESPACE: Namespace[CalendarBackend] = Namespace(
    name="calendar",
    description="One dedicated CalDAV calendar: busy times, events, and changes the person confirms.",
    config_model=CalendarConfig,
    create=create,
    tools=TOOLS,
    needs_account=True,
    requires=("caldav", "icalendar"),
    commands=(
        CliCommand(
            name="check",
            help="connect to the CalDAV server and open the configured calendar",
            add_arguments=lambda parser: None,
            run=_check,
        ),
    ),
)
