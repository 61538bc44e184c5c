"""Text helpers every Google namespace reuses: decoding bodies, HTML to text, pages, fences.

Mail and documents come from outside, so their text is fenced as untrusted with the same
markers the inbox uses; HTML becomes readable text with link targets kept.
"""

from __future__ import annotations

import base64
import re

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.util.text import decode_bytes, fence, html_to_text

__all__ = ["b64url_decode", "b64url_encode", "decode_bytes", "fence", "html_to_text", "is_browser_stub", "page"]

_STUB = re.compile(
    r"view (this|it|the)( e-?mail| message| newsletter)? (online|in (a|your) (web )?browser)|"
    r"(your|this) (e-?mail )?(client|program|reader) (does not|doesn't|cannot|can't) (support|display) html|"
    r"html[- ]only|im browser (anzeigen|ansehen)|version en ligne",
    re.IGNORECASE,
)
STUB_MAX_CHARS = 600


def b64url_decode(data: str) -> bytes:
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


def is_browser_stub(plain: str, html_text: str) -> bool:
    """A plain part that only says 'view this in your browser' while the HTML holds the mail."""
    stripped = plain.strip()
    if not stripped:
        return True
    if len(html_text) < 2 * len(stripped):
        return False
    return (len(stripped) <= STUB_MAX_CHARS and bool(_STUB.search(stripped))) or len(stripped) < 0.1 * len(html_text)


def page(text: str, offset: int, max_chars: int, what: str = "body") -> tuple[str, int | None]:
    """The slice at `offset` and the next offset (None at the end)."""
    if offset > len(text):
        raise ToolFailure(
            "invalid_arguments",
            f"offset {offset} is past the end of the {what} ({len(text)} characters)",
            f"use an offset below {what}_chars",
        )
    end = min(len(text), offset + max_chars)
    return text[offset:end], (end if end < len(text) else None)
