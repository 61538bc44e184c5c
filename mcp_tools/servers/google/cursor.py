"""The cursor of a search of every account (`account: "all"`): the whole state, sealed, in the cursor.

For each account still holding hits it carries that account's own upstream cursor and how many
hits of that page were already given, so any server (after a restart, or another replica) goes
on from it without remembering anything. It is sealed (AES-256-GCM) under a key derived from
`[state] secret`, or, on a server without one, under a key kept in the state dir, and bound to the
tool it pages: a cursor altered, sealed elsewhere, or made by another tool does not open.
"""

from __future__ import annotations

import base64
import json
import os
import zlib
from pathlib import Path
from typing import Any

from mcp_tools.core.tooling import Environment, ToolFailure

PREFIX = "all."
_PLAIN, _PACKED = b"j", b"z"  # the payload as JSON, or as JSON deflated (when that is shorter)
_NONCE = 12
KEY_FILE = "merged-cursor.key"  # under <state_dir>/google, on a server without [state] secret

State = dict[str, tuple[Any, int]]  # account label -> (its own cursor, hits of that page already given)


def _key(env: Environment) -> bytes:
    from mcp_tools.state import derive_key

    if env.state_secret:
        return derive_key(env.state_secret, "merged cursors")
    path = env.state_dir / "google" / KEY_FILE
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except FileNotFoundError:
        return _new_key(path)


def _new_key(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    key = os.urandom(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use that one
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(key.hex())
    return key


def _bound(tool: str) -> bytes:
    return f"mcp-tools merged cursor v1 {tool}".encode()


def seal(env: Environment, tool: str, state: State) -> str:
    """The cursor that goes on from `state` (each account's cursor and hits already given)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    payload = json.dumps([[label, cursor, skip] for label, (cursor, skip) in state.items()], separators=(",", ":"))
    raw = payload.encode()
    packed = zlib.compress(raw, 9)
    body = _PACKED + packed if len(packed) < len(raw) else _PLAIN + raw
    nonce = os.urandom(_NONCE)
    sealed = AESGCM(_key(env)).encrypt(nonce, body, _bound(tool))
    return PREFIX + base64.urlsafe_b64encode(nonce + sealed).decode("ascii").rstrip("=")


def open_cursor(env: Environment, tool: str, cursor: str) -> State:
    """The state a cursor of `tool` carries; `invalid_arguments` for one that does not open here."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    refused = ToolFailure(
        "invalid_arguments",
        f"this cursor is not one a search of every account by {tool} gave (altered, cut short, "
        "from another tool, or from a server with another [state] secret)",
        "copy next_cursor exactly as the last page gave it, or search again without cursor",
    )
    text = cursor.strip()
    if not text.startswith(PREFIX):
        raise refused
    encoded = text[len(PREFIX) :]
    try:
        data = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        body = AESGCM(_key(env)).decrypt(data[:_NONCE], data[_NONCE:], _bound(tool))
        raw = zlib.decompress(body[1:]) if body[:1] == _PACKED else body[1:]
        items = json.loads(raw)
    except (InvalidTag, ValueError, zlib.error):
        raise refused from None
    state: State = {}
    for item in items if isinstance(items, list) else [None]:
        if not (
            isinstance(item, list)
            and len(item) == 3
            and isinstance(item[0], str)
            and isinstance(item[2], int)
            and item[2] >= 0
        ):
            raise refused
        state[item[0]] = (item[1], item[2])
    return state
