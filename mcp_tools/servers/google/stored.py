"""The files store as the Google namespaces use it: through `files.read` and `files.write`.

No private copy of the files service: each read and write is a call through the policy gate,
as the caller, so `disabled`, `read_only`, an overwrite's confirmation and the audit row apply
exactly as they would to the caller's own `files.write`.
"""

from __future__ import annotations

import base64
from typing import Any

from mcp_tools.core.tooling import CallContext, ToolFailure


async def save(ctx: CallContext, path: str, data: bytes) -> dict[str, Any]:
    """Store `data` at `path` with `files.write` (an existing file is replaced only after the person's yes)."""
    content = base64.b64encode(data).decode("ascii")
    try:
        return await ctx.call_tool("files.write", {"path": path, "content": content, "encoding": "base64"})
    except ToolFailure as failure:
        if failure.kind == "too_large" and not failure.hint:
            failure.hint = "the person can raise [files] max_write_bytes, or open the file where it is"
        raise


async def save_named(ctx: CallContext, folder: str, filename: str, data: bytes) -> str:
    """Store an outside file under its own name, as close as the files store's name rule allows.

    The store's rule (`[files] names`) belongs to the files namespace, so the name the person
    would recognise is tried first and, when the store refuses it, the strict ASCII form."""
    from mcp_tools.util.sandbox import safe_name

    own, strict = safe_name(filename, "unicode", fallback="attachment"), safe_name(filename, fallback="attachment")
    if own != strict:
        try:
            await save(ctx, f"{folder}/{own}", data)
            return f"{folder}/{own}"
        except ToolFailure as failure:
            if failure.kind != "invalid_arguments":
                raise
    await save(ctx, f"{folder}/{strict}", data)
    return f"{folder}/{strict}"


async def load(ctx: CallContext, path: str, limit: int) -> bytes:
    """The whole file at `path`, read window by window with `files.read`; at most `limit` bytes."""
    parts: list[bytes] = []
    offset: int | None = 0
    digest = None
    while offset is not None:
        window = await ctx.call_tool("files.read", {"path": path, "offset": offset})
        if window["size"] > limit:
            raise ToolFailure("too_large", f"{path} is {window['size']} bytes; at most {limit} bytes fit here")
        if digest is not None and window["version"] != digest:
            raise ToolFailure("conflict", f"{path} changed while it was being read", "try again")
        digest = window["version"]
        content: str = window["content"]
        parts.append(content.encode("utf-8") if window["encoding"] == "text" else base64.b64decode(content))
        offset = window.get("next_offset")  # absent on the last window
    return b"".join(parts)
