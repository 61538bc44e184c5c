"""Icons (2025-11-25) for the server and each namespace: small SVGs inline as `data:` URIs.

They travel where hosts show them and models do not read them: the server's `serverInfo` (a
namespace's own endpoint, `/files/mcp`, shows that namespace's icon) and the resource templates
of the namespaces that store documents. Tool definitions carry none, so `tools/list` and what it
costs in context stay as they were.
"""

from __future__ import annotations

import base64
from functools import cache

import mcp_types as types

# namespace: (background colour, the letters drawn on it)
MARKS: dict[str, tuple[str, str]] = {
    "calendar": ("#1a73e8", "Ca"),
    "contacts": ("#0b8043", "Co"),
    "docs": ("#4285f4", "Do"),
    "drive": ("#188038", "Dr"),
    "files": ("#5f6368", "Fi"),
    "gmail": ("#d93025", "M"),
    "http": ("#8430ce", "H"),
    "inbox": ("#b06000", "In"),
    "notes": ("#7048e8", "N"),
    "search": ("#12857e", "S"),
    "sheets": ("#0f9d58", "Sh"),
    "tasks": ("#2962ff", "T"),
    "terminal": ("#202124", ">_"),
    "web": ("#00796b", "W"),
}
SERVER_MARK = ("#3c4043", "mt")
MAX_ICON_BYTES = 600  # each data: URI stays small


def _svg(colour: str, letters: str) -> str:
    size = 12 if len(letters) > 1 else 14
    text = letters.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">'
        f'<rect width="24" height="24" rx="5" fill="{colour}"/>'
        f'<text x="12" y="{12 + size * 0.36:.1f}" font-family="sans-serif" font-size="{size}" '
        f'font-weight="700" text-anchor="middle" fill="#fff">{text}</text></svg>'
    )


@cache
def icon(namespace: str | None = None) -> types.Icon:
    """The namespace's icon (the server's for None, or for a namespace without a mark of its own)."""
    colour, letters = MARKS.get(namespace or "", SERVER_MARK)
    data = base64.b64encode(_svg(colour, letters).encode("utf-8")).decode("ascii")
    return types.Icon(src=f"data:image/svg+xml;base64,{data}", mime_type="image/svg+xml", sizes=["any"])
