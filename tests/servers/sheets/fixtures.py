"""An account signed in to the fake Google with the sheets namespace on, shared by the sheets tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp_tools.servers.google import scopes
from tests.servers.fake_google import FakeGoogle
from tests.servers.gmail.fixtures import sign_in

APP_SCOPES = [scopes.DRIVE_FILE]


def sheets_settings(
    tmp_path: Path,
    google: FakeGoogle,
    granted: list[str] | None = None,
    **section: Any,
) -> dict[str, Any]:
    """Settings serving every sheets tool against the fake, with `[sheets]` set from `section`."""
    settings = sign_in(tmp_path, google, APP_SCOPES if granted is None else granted, servers=["sheets"])
    settings["sheets"] = section
    settings.pop("gmail", None)
    return settings
