"""Stored Google tokens encrypted under `[state] secret`: a copy of a replica's state dir holds
no usable token without the secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_tools.servers.google.account import read_token, write_private
from mcp_tools.state import credentials_key
from mcp_tools.state.sealed import seal, unseal

SECRET = "replicas-share-this-secret-of-32-bytes"
TOKEN = {"refresh_token": "1//refresh-token-value-xyz", "token": "ya29.access-token-value", "scopes": ["s"]}


def test_a_token_written_under_the_secret_is_unreadable_without_it(tmp_path: Path) -> None:
    """ATTACK: the token file copied off a replica gives up no token."""
    path = tmp_path / "google" / "token.json"
    write_private(path, TOKEN, credentials_key(SECRET))
    stored = path.read_text()
    assert "refresh-token-value" not in stored and "access-token-value" not in stored
    assert path.stat().st_mode & 0o777 == 0o600
    assert read_token(path, credentials_key(SECRET)) == TOKEN
    with pytest.raises(ValueError, match=r"\[state\] secret"):
        read_token(path, None)
    with pytest.raises(ValueError, match="do not open"):
        read_token(path, credentials_key("another-secret-of-at-least-32-bytes!"))


def test_an_altered_sealed_token_is_refused() -> None:
    key = credentials_key(SECRET)
    assert key is not None
    sealed = seal(TOKEN, key)
    raw = bytearray(sealed["sealed"].encode())
    raw[-5] = ord("A") if raw[-5] != ord("A") else ord("B")
    with pytest.raises(ValueError):
        unseal({**sealed, "sealed": raw.decode()}, key)


def test_a_plain_token_from_one_machine_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "token.json"
    write_private(path, TOKEN)
    assert json.loads(path.read_text()) == TOKEN
    assert read_token(path, None) == TOKEN
    assert read_token(path, credentials_key(SECRET)) == TOKEN  # re-written sealed at the next refresh
    assert credentials_key(None) is None


def test_doctor_reads_a_sealed_token_with_the_secret(tmp_path: Path) -> None:
    from mcp_tools.cli.google import doctor_lines
    from mcp_tools.core.config import parse_config

    secrets_file = tmp_path / "client.json"
    secrets_file.write_text(json.dumps({"installed": {"client_id": "c", "client_secret": "s"}}))
    settings = {
        "server": {"state_dir": str(tmp_path / "state"), "data_dir": str(tmp_path / "data"), "servers": ["gmail"]},
        "google": {"client_secrets": str(secrets_file)},
        "gmail": {},
        "state": {"secret": SECRET},
    }
    write_private(
        tmp_path / "state" / "google" / "token.json", {**TOKEN, "account": "ada@example.org"}, credentials_key(SECRET)
    )
    shown = "\n".join(doctor_lines(parse_config(settings, {})))
    assert "ada@example.org" in shown and "not signed in" not in shown
    without = dict(settings)
    without.pop("state")
    assert "not signed in" in "\n".join(doctor_lines(parse_config(without, {})))
