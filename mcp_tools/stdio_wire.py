"""Lines on stdio that are not JSON-RPC messages get a JSON-RPC error, not silence.

The SDK's stdio transport hands an unreadable line to the server as an exception, which the server
drops: a client that sent one waits for an answer forever. JSON-RPC 2.0 answers such a line with
`id: null` and -32700 (not JSON) or -32600 (JSON, but not a request). Here those answers are
written, and only readable messages reach the server.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import INVALID_REQUEST, PARSE_ERROR
from pydantic import ValidationError

logger = logging.getLogger(__name__)


def error_for(exc: Exception) -> types.JSONRPCError:
    """The JSON-RPC error for a line the transport could not read as a message."""
    not_json = isinstance(exc, ValidationError) and any(error["type"] == "json_invalid" for error in exc.errors())
    if not_json:
        error = types.ErrorData(code=PARSE_ERROR, message="Parse error: the line is not valid JSON")
    else:
        error = types.ErrorData(
            code=INVALID_REQUEST,
            message="Invalid Request: expected one JSON-RPC 2.0 object with jsonrpc, method and (for a request) id",
        )
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=error)


@asynccontextmanager
async def answering_unreadable_lines(read_stream: Any, write_stream: Any) -> AsyncIterator[Any]:
    """The messages of `read_stream`, after answering each unreadable line on `write_stream`."""
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

    async def forward() -> None:
        async with send:
            async for item in read_stream:
                if isinstance(item, Exception):
                    logger.debug("answered an unreadable line: %s", type(item).__name__)
                    await write_stream.send(SessionMessage(error_for(item)))
                    continue
                await send.send(item)

    async with anyio.create_task_group() as group, receive:
        group.start_soon(forward)
        yield receive
        group.cancel_scope.cancel()
