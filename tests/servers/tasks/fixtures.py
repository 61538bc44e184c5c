"""An account signed in to the fake Google with the Tasks scopes, shared by the tasks tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp_tools.servers.google import scopes
from tests.servers.fake_google import FakeGoogle
from tests.servers.gmail.fixtures import sign_in

BOTH = [scopes.TASKS_READONLY, scopes.TASKS]


def tasks_settings(tmp_path: Path, google: FakeGoogle, granted: list[str] | None = None) -> dict[str, Any]:
    """Settings serving the tasks namespace alone, signed in with `granted` (both Tasks scopes by default)."""
    settings = sign_in(tmp_path, google, granted or BOTH, servers=["tasks"])
    del settings["gmail"]
    settings["tasks"] = {}
    return settings
