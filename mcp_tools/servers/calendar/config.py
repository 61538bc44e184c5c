"""The `[calendar]` config section and how it becomes settings a backend can trust."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypedDict
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from mcp_tools.core.tooling import NotConfigured
from mcp_tools.servers.calendar.timeutil import WEEKDAY_NAMES, parse_working_hours

PASSWORD_ENV = "MCP_TOOLS_CALDAV_PASSWORD"
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


class CalendarConfig(BaseModel):
    """One dedicated calendar (CalDAV or Google); other calendars of the account stay closed."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["caldav", "google"] = Field(
        "caldav", description="A CalDAV server, or a Google calendar through the [google] account."
    )
    url: str | None = Field(None, description="CalDAV server or principal URL", examples=["https://caldav.icloud.com/"])
    username: str | None = Field(None, description="CalDAV account name", examples=["you@icloud.com"])
    password: SecretStr | None = Field(None, description=f"or set {PASSWORD_ENV}")
    calendar: str | None = Field(
        None,
        description="display name (or CalDAV URL) of the one calendar to use",
        examples=["AI Assistant Shared"],
    )
    calendar_id: str | None = Field(None, max_length=300, description="Google: the calendar's id instead of its name")
    timezone: str | None = Field(
        None, description="IANA zone; default the system's, else UTC", examples=["Europe/Berlin"]
    )
    working_hours: str = Field("09:00-17:00", description="Local hours within which free slots are looked for")
    working_days: list[str] = Field(
        default_factory=lambda: list(WEEKDAY_NAMES[:5]), description="Days on which free slots are looked for"
    )
    include_location: bool = Field(False, description="Return the locations of your own events too")
    include_description: bool = Field(False, description="Return the descriptions (notes) of your own events too")
    timeout_seconds: float = Field(
        20.0, gt=0, le=300, description="Deadline for each tool call's exchange with the server"
    )
    allow_insecure_http: bool = Field(False, description="allow http:// to hosts other than loopback")

    @field_validator("working_hours")
    @classmethod
    def _check_hours(cls, value: str) -> str:
        parse_working_hours(value)
        return value

    @field_validator("working_days")
    @classmethod
    def _check_days(cls, value: list[str]) -> list[str]:
        days = [day.strip().lower()[:3] for day in value]
        unknown = [day for day in days if day not in WEEKDAY_NAMES]
        if unknown:
            raise ValueError(f"working_days must be among {', '.join(WEEKDAY_NAMES)}; got {unknown}")
        return days


@dataclass(frozen=True)
class Settings:
    """What every backend shares: the calendar chosen, the zone, working hours, fields returned."""

    calendar: str
    zone: ZoneInfo
    hours: tuple[dt.time, dt.time]
    weekdays: frozenset[int]
    include_location: bool
    include_description: bool
    timeout_seconds: float


@dataclass(frozen=True)
class CalDavSettings(Settings):
    """Validated, resolved CalDAV configuration; `repr` never shows the password."""

    url: str
    username: str | None
    password: SecretStr | None = field(repr=False)

    @property
    def calendar_is_url(self) -> bool:
        return self.calendar.startswith(("http://", "https://"))

    @property
    def server_label(self) -> str:
        """Scheme and host only: safe for error messages."""
        return safe_url(self.url)


def safe_url(url: str) -> str:
    """A URL without credentials, path or query, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


@dataclass(frozen=True)
class GoogleSettings(Settings):
    """The Google backend: `calendar_id` when given, else `calendar` is the name to look up."""

    calendar_id: str | None


class CommonSettings(TypedDict):
    """The `Settings` fields both backends resolve alike (all but `calendar`)."""

    zone: ZoneInfo
    hours: tuple[dt.time, dt.time]
    weekdays: frozenset[int]
    include_location: bool
    include_description: bool
    timeout_seconds: float


def common_settings(config: CalendarConfig, env: Mapping[str, str]) -> CommonSettings:
    start, end = parse_working_hours(config.working_hours)
    return {
        "zone": resolve_zone(config.timezone, env),
        "hours": (start, end),
        "weekdays": frozenset(WEEKDAY_NAMES.index(day) for day in config.working_days),
        "include_location": config.include_location,
        "include_description": config.include_description,
        "timeout_seconds": config.timeout_seconds,
    }


def resolve_google_settings(config: CalendarConfig, env: Mapping[str, str]) -> GoogleSettings:
    """The Google backend needs a calendar id or name; the account comes from `[google]`."""
    if not config.calendar_id and not config.calendar:
        raise NotConfigured(
            "set [calendar] calendar to the name of the one Google calendar to use, for example calendar = "
            '"AI Assistant Shared" (or calendar_id to its id, from Settings > Integrate calendar)'
        )
    name = config.calendar_id or config.calendar or ""
    return GoogleSettings(calendar=name, calendar_id=config.calendar_id, **common_settings(config, env))


def resolve_settings(config: CalendarConfig, env: Mapping[str, str]) -> CalDavSettings:
    """Check everything that can be checked without I/O; raise NotConfigured with what to set."""
    if not config.url:
        raise NotConfigured(
            "set [calendar] url (for example https://caldav.icloud.com/), username, calendar, "
            f"and the password in {PASSWORD_ENV}"
        )
    parts = urlsplit(config.url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise NotConfigured("[calendar] url must be an http(s) URL such as https://caldav.example.com/")
    if parts.username or parts.password:
        raise NotConfigured("[calendar] url must not contain credentials; set username and the password")
    insecure = parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS
    if insecure and not config.allow_insecure_http:
        raise NotConfigured(
            "[calendar] url uses http:// to a remote host, which would send the password in clear; "
            "use https:// (or set allow_insecure_http = true on a trusted network)"
        )
    if not config.calendar:
        raise NotConfigured(
            "set [calendar] calendar to the display name (or URL) of the one calendar to use, "
            'for example calendar = "AI Assistant Shared"'
        )
    password = config.password
    if env.get(PASSWORD_ENV):
        password = SecretStr(env[PASSWORD_ENV])
    return CalDavSettings(
        url=config.url,
        username=config.username,
        password=password,
        calendar=config.calendar,
        **common_settings(config, env),
    )


def resolve_zone(name: str | None, env: Mapping[str, str]) -> ZoneInfo:
    """The configured IANA zone, else the system's (TZ or /etc/localtime), else UTC."""
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise NotConfigured(f"[calendar] timezone {name!r} is not an IANA zone such as Europe/Berlin") from None
    for candidate in (env.get("TZ", "").lstrip(":"), _system_zone_name()):
        if candidate:
            try:
                return ZoneInfo(candidate)
            except (ZoneInfoNotFoundError, ValueError):
                continue
    return ZoneInfo("UTC")


def _system_zone_name() -> str | None:
    localtime = Path("/etc/localtime")
    try:
        target = os.readlink(localtime)
    except OSError:
        return None
    marker = "zoneinfo/"
    return target.split(marker, 1)[1] if marker in target else None
