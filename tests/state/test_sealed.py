"""Stored Google tokens encrypted under `[state] secret`: a copy of a replica's state (its
SQLite file, a dump of its database) holds no usable token without the secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_tools.state import credentials_key
from mcp_tools.state.google_tokens import SealedTokens
from mcp_tools.state.sealed import is_sealed, seal, unseal
from mcp_tools.state.sqlite import PolicyStore

SECRET = "replicas-share-this-secret-of-32-bytes"
TOKEN = {"refresh_token": "1//refresh-token-value-xyz", "token": "ya29.access-token-value", "scopes": ["s"]}


def test_a_token_written_under_the_secret_is_unreadable_without_it(tmp_path: Path) -> None:
    """ATTACK: the state file copied off a machine gives up no token."""
    store = PolicyStore(tmp_path / "policy.sqlite3")
    try:
        SealedTokens(store, credentials_key(SECRET)).write("", "default", TOKEN)
        found = store.google_token("", "default")
        assert found is not None and is_sealed(json.loads(found[0]))
        for path in tmp_path.iterdir():  # the database and its write-ahead log
            assert b"refresh-token-value" not in path.read_bytes() and b"access-token-value" not in path.read_bytes()
        assert SealedTokens(store, credentials_key(SECRET)).read("", "default") == (TOKEN, 1)
        with pytest.raises(ValueError, match=r"\[state\] secret"):
            SealedTokens(store, None).read("", "default")
        with pytest.raises(ValueError, match="do not open"):
            SealedTokens(store, credentials_key("another-secret-of-at-least-32-bytes!")).read("", "default")
    finally:
        store.close()


def test_an_altered_sealed_token_is_refused() -> None:
    key = credentials_key(SECRET)
    assert key is not None
    sealed = seal(TOKEN, key)
    raw = bytearray(sealed["sealed"].encode())
    raw[-5] = ord("A") if raw[-5] != ord("A") else ord("B")
    with pytest.raises(ValueError):
        unseal({**sealed, "sealed": raw.decode()}, key)


def test_a_plain_token_file_from_one_machine_is_moved_in_and_sealed_when_there_is_a_secret(tmp_path: Path) -> None:
    store = PolicyStore(tmp_path / "policy.sqlite3")
    try:
        for label, key in (("plain", None), ("sealed", credentials_key(SECRET))):
            path = tmp_path / f"{label}.json"
            path.write_text(json.dumps(TOKEN))
            tokens = SealedTokens(store, key)
            assert tokens.adopt("", label, path) and not path.exists()  # read once, then gone
            assert tokens.read("", label) == (TOKEN, 1)
        plain, sealed = store.google_token("", "plain"), store.google_token("", "sealed")
        assert plain is not None and json.loads(plain[0]) == TOKEN  # one machine, no secret: as the file was
        assert sealed is not None and "refresh-token-value" not in sealed[0]
        path = tmp_path / "again.json"
        path.write_text(json.dumps({**TOKEN, "refresh_token": "an-older-one"}))
        assert SealedTokens(store, None).adopt("", "plain", path)  # written since: newer than the stored one
        again = SealedTokens(store, None).read("", "plain")
        assert again == ({**TOKEN, "refresh_token": "an-older-one"}, 2) and not path.exists()
    finally:
        store.close()
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
    (tmp_path / "state").mkdir()
    store = PolicyStore(tmp_path / "state" / "policy.sqlite3")
    SealedTokens(store, credentials_key(SECRET)).write("", "default", {**TOKEN, "account": "ada@example.org"})
    store.close()
    shown = "\n".join(doctor_lines(parse_config(settings, {})))
    assert "ada@example.org" in shown and "not signed in" not in shown
    without = dict(settings)
    without.pop("state")
    assert "not signed in" in "\n".join(doctor_lines(parse_config(without, {})))
