"""The `calendar` namespace: one dedicated calendar, privacy by design.

Only the configured calendar is opened; busy times are free to read, event details of
the person's own events need their confirmation. The tools and these rules live in
tools.py; a backend (CalDAV, the default, or Google Calendar) talks to the server.
caldav, icalendar and Google's libraries load lazily.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from mcp_tools.core.tooling import CliCommand, Environment, Namespace, NotConfigured, install_hint, missing_modules
from mcp_tools.servers.calendar.config import (
    CalDavSettings,
    CalendarConfig,
    resolve_google_settings,
    resolve_settings,
)
from mcp_tools.servers.calendar.models import Event
from mcp_tools.servers.calendar.service import READ_TOOL
from mcp_tools.servers.calendar.store import CreatedEvents
from mcp_tools.servers.calendar.tools import TOOLS
from mcp_tools.servers.google.argument import with_accounts, withheld
from mcp_tools.servers.google.merge import Merged, moment

if TYPE_CHECKING:
    from mcp_tools.servers.calendar.service import CalendarBackend


def create(config: CalendarConfig, env: Environment) -> CalendarBackend:
    """Cheap: validates the config and opens nothing; the server is first reached on use."""
    created = CreatedEvents(env.namespace_state_dir("calendar") / "created_events.sqlite3")
    if config.backend == "google":
        return _google(config, env, created)
    missing = missing_modules(("caldav", "icalendar"))
    if missing:
        raise NotConfigured(install_hint("calendar", missing))
    settings = resolve_settings(config, env.env)
    from mcp_tools.servers.calendar.caldav import CalDavCalendar

    return CalDavCalendar(settings, created)


def _google(config: CalendarConfig, env: Environment, created: CreatedEvents) -> CalendarBackend:
    """The `[google]` account's calendar; Google's libraries load on the first call."""
    from mcp_tools.servers.google.config import check_configured, google_config, require_libraries
    from mcp_tools.servers.google.scopes import requested_scopes

    try:
        require_libraries("google")
    except ImportError as missing:
        raise NotConfigured(
            install_hint("google", missing.name or "") + ' (for [calendar] backend = "google")'
        ) from None
    settings = resolve_google_settings(config, env.env)
    google = google_config(env)
    check_configured(google, env)
    from mcp_tools.servers.calendar.google import GoogleCalendar

    return GoogleCalendar(settings, created, google, env, requested_scopes(spec.name for spec in TOOLS))


async def _check(service: CalendarBackend, options: argparse.Namespace) -> int:
    from mcp_tools.core.tooling import ToolFailure

    try:
        url = await service.check()
    except ToolFailure as failure:
        print(f"calendar: {failure.message}" + (f" ({failure.hint})" if failure.hint else ""))
        return 1
    print(f"calendar: connected; using {url} (zone {service.zone.key})")
    return 0


def status(service: CalendarBackend) -> list[str]:
    """For `mcp-tools doctor`: which server, and a CalDAV login that lacks its password."""
    settings = service.settings
    if not isinstance(settings, CalDavSettings):
        return []  # the Google backend: `[google]` lines say how the account stands
    from mcp_tools.servers.calendar.config import PASSWORD_ENV

    lines = [f"CalDAV server {settings.server_label}, calendar {settings.calendar!r}"]
    if settings.password is None:
        user = "" if settings.username else "[calendar] username and "
        lines.append(
            f"missing: the CalDAV password, so the server will refuse every call: set {user}{PASSWORD_ENV} "
            "(for iCloud an app-specific password), or [calendar] password"
        )
    return lines


NAMESPACE: Namespace[CalendarBackend] = Namespace(
    name="calendar",
    description="One dedicated calendar (CalDAV or Google): busy times, events, and changes the person confirms.",
    config_model=CalendarConfig,
    create=create,
    tools=with_accounts(
        TOOLS, merged={READ_TOOL: Merged("events", Event, "cursor", "next_cursor", lambda e: -moment(e.start))}
    ),
    withheld=withheld,
    needs_account=True,
    status=status,
    commands=(
        CliCommand(
            name="check",
            help="connect to the calendar server and open the configured calendar",
            add_arguments=lambda parser: None,
            run=_check,
        ),
    ),
)
