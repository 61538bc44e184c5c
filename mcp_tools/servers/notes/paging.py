"""Pages of a list (a cursor that is an offset) and of a note's text (an offset in characters)."""

from __future__ import annotations

from typing import Any

from mcp_tools.core.tooling import ToolFailure


def paginate(rows: list[Any], limit: int, cursor: str | None) -> tuple[int, list[Any], str | None]:
    try:
        start = int(cursor) if cursor else 0
    except ValueError:
        raise ToolFailure(
            "invalid_arguments", "cursor is not one this tool returned", "omit cursor to start over"
        ) from None
    if start < 0:
        raise ToolFailure("invalid_arguments", "cursor is not one this tool returned", "omit cursor to start over")
    page = rows[start : start + limit]
    next_cursor = str(start + limit) if start + limit < len(rows) else None
    return start, page, next_cursor


def text_page(text: str, offset: int, max_chars: int) -> tuple[str, int | None]:
    """The characters of `text` from `offset`, at most `max_chars`, and the offset of the rest (None: no more)."""
    if offset > len(text):
        raise ToolFailure(
            "invalid_arguments", f"offset {offset} is past the end ({len(text)} characters)", "start from offset 0"
        )
    end = min(len(text), offset + max_chars)
    return text[offset:end], (end if end < len(text) else None)
