"""What a person reads before saying yes: values made visible, whatever the model put in them.

Every channel that shows a confirmation (the client's elicitation form, the approvals page,
Telegram, the CLI prompt, the notify hook) renders summaries and arguments through this module,
so no value can draw lines of its own (a newline in a URL followed by a fake "low risk" block),
reverse what follows it (U+202E), or hide characters (zero-width, invisible separators):
- control characters become `\\n`, `\\t`, `\\x1b`, ...; bidi overrides and isolates, zero-width
  and other invisible characters become `\\u202e`, `\\u200b`, ...;
- argument values are quoted (a backslash or quote inside is escaped), so where a value ends
  is never in doubt;
- a long value is cut and says so: `"aaaa…" (1,234 more characters)`.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from typing import Any

MAX_VALUE_CHARS = 300
MAX_SUMMARY_CHARS = 500
MAX_ITEMS = 20
# Letters that draw nothing though their category says otherwise (Hangul fillers, braille blank).
INVISIBLE_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# redact() marks the strings it cut for audit rows and approvals: `kept… [cut, 1234 chars]`
REDACT_CUT = re.compile(r"… \[cut, (\d+) chars\]\Z")
KNOWN_CLIENTS = {"claude-ai": "Claude Desktop", "claude-code": "Claude Code", "inspector-client": "the MCP Inspector"}


def hidden(char: str) -> bool:
    """Would this character, printed as is, be invisible or change how the text around it is drawn?"""
    if char == " ":
        return False
    if char in INVISIBLE_LETTERS:
        return True
    return unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp", "Zs", "Co", "Cn")


def escape_char(char: str) -> str:
    if char in NAMED_ESCAPES:
        return NAMED_ESCAPES[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str, max_chars: int = MAX_SUMMARY_CHARS) -> str:
    """`text` on one line, every hidden or line-drawing character as an escape, cut with a count."""
    text, more = _cut(text, max_chars)
    shown = "".join(escape_char(c) if hidden(c) else c for c in text)
    return shown + (f"… ({more:,} more characters)" if more else "")


def quoted(text: str, max_chars: int = MAX_VALUE_CHARS) -> str:
    """A value as a person should read it: in quotes, escaped, cut with a count after the quote."""
    text, more = _cut(text, max_chars)
    shown = "".join(
        "\\" + c if c in '"\\' else escape_char(c) if hidden(c) else c for c in text
    )  # a quote or backslash inside cannot end the value or fake an escape
    return f'"{shown}{"…" if more else ""}"' + (f" ({more:,} more characters)" if more else "")


def value_text(value: Any, max_chars: int = MAX_VALUE_CHARS) -> str:
    """Any JSON-like value, strings quoted and escaped, lists and objects on one line."""
    if isinstance(value, str):
        return quoted(value, max_chars)
    if isinstance(value, dict):
        items = list(value.items())
        parts = [f"{quoted(str(k), 80)}: {value_text(v, max_chars)}" for k, v in items[:MAX_ITEMS]]
        if len(items) > MAX_ITEMS:
            parts.append(f"({len(items) - MAX_ITEMS} more entries)")
        return "{" + ", ".join(parts) + "}"
    if isinstance(value, list | tuple):
        parts = [value_text(v, max_chars) for v in list(value)[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            parts.append(f"({len(value) - MAX_ITEMS} more items)")
        return "[" + ", ".join(parts) + "]"
    return visible(json.dumps(value, ensure_ascii=False, default=str), max_chars)


def arguments_text(arguments: dict[str, Any], max_chars: int = MAX_VALUE_CHARS) -> str:
    """One line per argument: `  name: "value"`, in name order."""
    if not arguments:
        return "  (none)"
    lines = [f"  {visible(str(key), 80)}: {value_text(arguments[key], max_chars)}" for key in sorted(arguments)]
    return "\n".join(lines)


def json_text(value: Any, indent: int | None = 2) -> str:
    """JSON for a person's terminal: still valid JSON, but hidden characters as `\\uXXXX` escapes.

    `json.dumps` escapes control characters in strings; bidi overrides and invisible characters
    it leaves raw (with `ensure_ascii=False`), and a terminal would draw them.
    """
    text = json.dumps(value, indent=indent, ensure_ascii=False, default=str)
    return "".join(_json_escape(c) if ord(c) >= 0x80 and hidden(c) else c for c in text)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


@functools.lru_cache(maxsize=256)  # asked for every call of a client
def client_name(name: str | None, title: str | None = None) -> str | None:
    """A client's own name from its clientInfo, in the words people know it by."""
    raw = (title or "").strip() or (name or "").strip()
    if not raw:
        return None
    return KNOWN_CLIENTS.get(raw, visible(raw, 60))


def asked_by(principal: str, transport: str | None, client: str | None = None) -> str:
    """Who asked, in plain words: `asked from the command line`, `asked by token ci-agent over HTTP`."""
    who = visible(principal, 60)
    named = f" ({visible(client, 60)})" if client else ""
    if transport in ("cli", "text") and principal == "local":
        return "asked from the command line"
    if transport == "stdio":
        return f"asked by {visible(client, 60)}" if client else "asked by a local client over stdio"
    if transport == "http":
        return f"asked by token {who} over HTTP{named}"
    if transport == "text":
        return f"asked by token {who} over HTTP, as a text call"
    return f"asked by {who} over {visible(transport or 'an unknown transport', 40)}{named}"


def _cut(text: str, max_chars: int) -> tuple[str, int]:
    """(kept text, how many characters are left out), counting what redact() already cut."""
    more = 0
    marked = REDACT_CUT.search(text)
    if marked:
        text = text[: marked.start()]
        more = max(0, int(marked[1]) - len(text))
    if len(text) > max_chars:
        more += len(text) - max_chars
        text = text[:max_chars]
    return text, more
