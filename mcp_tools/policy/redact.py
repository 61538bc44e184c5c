"""Redaction for anything shown or stored outside the tool call: audit rows, approvals, logs.

Known secrets are scrubbed before a string is cut, so a cut never leaves a secret's first
characters behind.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from mcp_tools.secrets import scrub_text

SECRET_KEY = re.compile(
    r"pass(word|wd|phrase)?|secret|token|api[_-]?key|authori[sz]ation|cookie|credential|private[_-]?key|ticket",
    re.IGNORECASE,
)
REDACTED = "[redacted]"
MAX_ITEMS = 50


def redact(value: Any, max_chars: int = 200, _key: str = "") -> Any:
    """Copy of `value` with secret-looking keys masked and long strings cut."""
    if _key and SECRET_KEY.search(_key):
        return REDACTED
    if isinstance(value, dict):
        kept = {scrub_text(str(k)): redact(v, max_chars, str(k)) for k, v in itertools.islice(value.items(), MAX_ITEMS)}
        if len(value) > MAX_ITEMS:
            kept["…"] = f"[+{len(value) - MAX_ITEMS} more names]"
        return kept
    if isinstance(value, list | tuple):
        items = [redact(v, max_chars) for v in list(value)[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            items.append(f"[+{len(value) - MAX_ITEMS} more items]")
        return items
    if isinstance(value, str):
        value = scrub_text(value)
        if len(value) > max_chars:
            return f"{value[:max_chars]}… [cut, {len(value)} chars]"
        return value
    if isinstance(value, bytes):
        return f"[{len(value)} bytes]"
    return value
