"""An account signed in to the fake Google with Drive scopes, shared by the drive tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp_tools.servers.google import scopes
from tests.servers.fake_google import FakeGoogle
from tests.servers.gmail.fixtures import sign_in

APP_SCOPES = [scopes.DRIVE_FILE]


def drive_settings(
    tmp_path: Path,
    google: FakeGoogle,
    granted: list[str] | None = None,
    *,
    drive: dict[str, Any] | None = None,
    servers: list[str] | None = None,
) -> dict[str, Any]:
    """Settings for a config with drive (and the files store) on, signed in to the fake."""
    settings = sign_in(
        tmp_path, google, granted if granted is not None else APP_SCOPES, servers=servers or ["drive", "files"]
    )
    settings["drive"] = drive or {}
    return settings


def markdown_doc() -> str:
    return "# Plan\n\n- one\n- two\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n\n[site](https://example.org)\n"
