"""Two Google accounts signed in to the fake: `default` (me@example.com) and `work` (alice@corp.example)."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from tests.servers.fake_google import FakeGoogle
from tests.servers.gmail.fixtures import ALL_SCOPES, sign_in

WORK = "alice@corp.example"


def store_token(
    tmp_path: Path,
    google: FakeGoogle,
    label: str,
    granted: list[str] | None = None,
    expires_in: int = 3600,
    *,
    running: bool = False,
) -> dict[str, Any]:
    """A token of `google`'s account, stored as the account `label`: a token file of an older
    version (moved into the state store when the server starts), or, `running`, straight into the
    state store (what `auth google --account` does while a server runs)."""
    granted = granted if granted is not None else ALL_SCOPES
    access, refresh = google.issue(granted, seconds=max(expires_in, 1))
    folder = tmp_path / "state" / "google" / "accounts"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{label}.json"
    data = {
        "token": access,
        "refresh_token": refresh,
        "token_uri": google.url + "token",
        "client_id": next(iter(google.clients)),
        "scopes": sorted(granted),
        "expiry": (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=expires_in)).isoformat(),
        "account": google.account,
    }
    if running:
        put_token(tmp_path, data, label)
        return data
    path.write_text(json.dumps(data))
    os.chmod(path, 0o600)
    return data


def two_accounts(
    tmp_path: Path,
    fake: FakeGoogle,
    work: FakeGoogle,
    granted: list[str] | None = None,
    servers: list[str] | None = None,
    expires_in: int = 3600,
    **sections: Any,
) -> dict[str, Any]:
    """Settings with `default` (the fake's own account) and `work` signed in."""
    settings = sign_in(tmp_path, fake, granted, servers=servers, expires_in=expires_in)
    store_token(tmp_path, work, "work", granted, expires_in)
    for name, value in sections.items():
        settings[name] = {**settings.get(name, {}), **value}
    return settings


def raw_mail(subject: str, date: str, to: str = "me@example.com", sender: str = "ann@example.org") -> str:
    return (
        f"From: {sender}\r\nTo: {to}\r\nSubject: {subject}\r\nDate: {date}\r\n"
        f"Message-ID: <{subject.replace(' ', '.')}@example.org>\r\nMIME-Version: 1.0\r\n"
        f"Content-Type: text/plain; charset=utf-8\r\n\r\nAbout {subject}.\r\n"
    )


def stored_token(
    tmp_path: Path, label: str = "default", principal: str = "", secret: str | None = None
) -> dict[str, Any]:
    """The token of `label` as the state store in `tmp_path/state` holds it; a token file not yet
    moved there (before the server or the CLI first looked) is read where it is."""
    from mcp_tools.state import credentials_key
    from mcp_tools.state.google_tokens import SealedTokens
    from mcp_tools.state.sqlite import PolicyStore

    state = tmp_path / "state"
    store = PolicyStore(state / "policy.sqlite3")
    try:
        found = SealedTokens(store, credentials_key(secret)).read(principal, label)
    finally:
        store.close()
    if found is not None:
        return found[0]
    old = state / "google" / ("token.json" if label == "default" else f"accounts/{label}.json")
    data: dict[str, Any] = json.loads(old.read_text())
    return data


def put_token(tmp_path: Path, data: dict[str, Any], label: str = "default", principal: str = "") -> None:
    """Store `data` as the token of `label` (what a sign-in on another replica does)."""
    from mcp_tools.state.google_tokens import SealedTokens
    from mcp_tools.state.sqlite import PolicyStore

    store = PolicyStore(tmp_path / "state" / "policy.sqlite3")
    try:
        SealedTokens(store, None).write(principal, label, data)
    finally:
        store.close()


def stored_accounts(tmp_path: Path, principal: str = "") -> list[str]:
    """The labels the state store in `tmp_path/state` holds a token for."""
    from mcp_tools.state.sqlite import PolicyStore

    store = PolicyStore(tmp_path / "state" / "policy.sqlite3")
    try:
        return store.google_labels(principal)
    finally:
        store.close()
