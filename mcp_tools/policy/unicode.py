"""The answer to arguments holding text that is not valid Unicode (a lone surrogate, which JSON
may escape as `"doc\\udfffs"` and no UTF-8 text can hold). Finding it and making a value safe to
write are `mcp_tools.util.text.not_unicode` and `utf8_safe`."""

from __future__ import annotations

from mcp_tools.core.tooling import ToolFailure


def not_unicode_failure(where: str) -> ToolFailure:
    """The answer to arguments whose text at `where` holds a lone surrogate (stdio and HTTP alike)."""
    return ToolFailure(
        "invalid_arguments",
        f"{where} is not valid Unicode text (it holds a lone surrogate)",
        "send UTF-8 text; name files that are not UTF-8 by the escaped form files.list shows",
    )
