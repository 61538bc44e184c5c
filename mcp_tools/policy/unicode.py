"""Text that is not valid Unicode in what a client sends: JSON may escape a lone surrogate
(`"doc\\udfffs"`), which no UTF-8 text can hold. Where it sits, the answer that names it, and a
copy of a value that can be written as UTF-8."""

from __future__ import annotations

import json
import re
from typing import Any

from mcp_tools.tooling import ToolFailure

_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "\ufffd"


def utf8_safe(value: Any) -> Any:
    """A copy of a JSON-like value whose strings all encode as UTF-8 (undecodable bytes as \\xHH)."""
    if isinstance(value, str):
        return _SURROGATE.sub(_escape_surrogate, value)
    if isinstance(value, dict):
        return {utf8_safe(k): utf8_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [utf8_safe(item) for item in value]
    return value


def not_unicode_failure(where: str) -> ToolFailure:
    """The answer to arguments whose text at `where` holds a lone surrogate (stdio and HTTP alike)."""
    return ToolFailure(
        "invalid_arguments",
        f"{where} is not valid Unicode text (it holds a lone surrogate)",
        "send UTF-8 text; name files that are not UTF-8 by the escaped form files.list shows",
    )


def not_unicode(value: Any) -> str | None:
    """Where a string (or key) holding a lone surrogate sits, e.g. 'edits[0].old_string'; None if nowhere."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return None
    except UnicodeEncodeError:
        return _surrogate_at(value, "") or "an argument"
    except (TypeError, ValueError):
        return None


def _surrogate_at(value: Any, where: str) -> str | None:
    if isinstance(value, str):
        return where if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            place = f"{where}.{key}" if where else str(key)
            if _SURROGATE.search(str(key)):
                return str(utf8_safe(place))
            found = _surrogate_at(item, place)
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _surrogate_at(item, f"{where}[{index}]")
            if found is not None:
                return found
    return None
