"""Stored credentials encrypted under a key from `[state] secret` (AES-256-GCM, from the
`cryptography` package the MCP SDK already brings), so a copy of the state dir or a backup of a
replica holds no usable token without the secret."""

from __future__ import annotations

import base64
import json
import os
from typing import Any

FORMAT = "mcp-tools-sealed-v1"


def seal(data: dict[str, Any], key: bytes) -> dict[str, Any]:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = os.urandom(12)
    sealed = AESGCM(key).encrypt(nonce, json.dumps(data).encode(), FORMAT.encode())
    return {"format": FORMAT, "sealed": base64.b64encode(nonce + sealed).decode("ascii")}


def is_sealed(data: Any) -> bool:
    return isinstance(data, dict) and data.get("format") == FORMAT


def unseal(data: dict[str, Any], key: bytes) -> dict[str, Any]:
    """The original contents; ValueError under the wrong key or when the data was altered."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        raw = base64.b64decode(str(data.get("sealed", "")), validate=True)
        opened = AESGCM(key).decrypt(raw[:12], raw[12:], FORMAT.encode())
    except (InvalidTag, ValueError):
        raise ValueError("the stored credentials do not open with this [state] secret") from None
    result = json.loads(opened)
    if not isinstance(result, dict):
        raise ValueError("the stored credentials are not an object")
    return result
