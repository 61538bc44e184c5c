"""The stdio wire as scripts and clients use it: every request read gets an answer.

- A line that is not a JSON-RPC message gets a JSON-RPC error (`id: null`, -32700 when it is not
  JSON, -32600 when it is JSON but no message) instead of silence: the SDK's transport hands such
  a line to the server as an exception, which the server drops.
- A request whose JSON escapes a lone surrogate (`"doc\\udfffs"`, which models and clients send)
  is valid JSON that the SDK's parser refuses; it is read here with Python's parser and passed
  on, so the tool call gets its `invalid_arguments` result naming the argument. What goes back
  for it is made valid UTF-8 first (`\\udfff` cannot be written as UTF-8).
- End of input (`printf '...' | mcp-tools serve`) does not drop the requests read before it: the
  server's input stays open until each of them is answered (or cancelled by the client), then
  closes. A request the server sends the client after the client's input ended (an elicitation)
  cannot be answered by it, so it is answered here with an error, and the call goes on without.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from pydantic import ValidationError

logger = logging.getLogger(__name__)

RequestId = str | int


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


def read_with_lone_surrogates(exc: Exception) -> types.JSONRPCMessage | None:
    """The message of a line the SDK refused only for an escaped lone surrogate, else None.

    JSON may escape any code unit (RFC 8259 allows `\\udfff` alone); the SDK's parser refuses
    such text, Python's reads it as the lone surrogate it says.
    """
    if not isinstance(exc, ValidationError):
        return None
    for error in exc.errors():
        line = error.get("input")
        if error["type"] != "json_invalid" or not isinstance(line, str) or "\\u" not in line:
            continue
        try:
            parsed = json.loads(line)
            message = types.jsonrpc_message_adapter.validate_python(parsed, by_name=False)
        except (ValueError, RecursionError, ValidationError):
            return None
        return message if _holds_surrogate(parsed) else None
    return None


def _holds_surrogate(value: Any) -> bool:
    from mcp_tools.util.text import not_unicode

    return not_unicode(value) is not None


def _utf8_safe_message(message: SessionMessage) -> SessionMessage:
    """The same message with every string made writable as UTF-8 (lone surrogates escaped)."""
    from mcp_tools.util.text import utf8_safe

    dumped = message.message.model_dump(by_alias=True, exclude_unset=True)
    safe = types.jsonrpc_message_adapter.validate_python(utf8_safe(dumped), by_name=False)
    return SessionMessage(safe, metadata=message.metadata)


class _Exchange:
    """What the server still owes the client, and what it asked the client, on one connection."""

    def __init__(self) -> None:
        self.owed: set[RequestId] = set()  # client requests not answered yet
        self.asked: set[RequestId] = set()  # server requests the client has not answered yet
        self.repaired: set[RequestId] = set()  # requests read with lone surrogates: answers made UTF-8
        self.input_ended = False
        self.settled = anyio.Event()  # set when input has ended and nothing is owed

    def check(self) -> None:
        if self.input_ended and not self.owed:
            self.settled.set()

    def read(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self.owed.add(message.id)
        elif isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            self.asked.discard(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            cancelled = (message.params or {}).get("requestId")
            if isinstance(cancelled, str | int):  # a cancelled request is never answered (the spec)
                self.owed.discard(cancelled)
                self.check()

    def written(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            self.owed.discard(message.id)
            self.repaired.discard(message.id)
            self.check()
        elif isinstance(message, types.JSONRPCRequest):
            self.asked.add(message.id)


class _AnsweringWriter:
    """The server's write stream: notes each answer, and makes answers to repaired requests UTF-8."""

    def __init__(self, inner: Any, exchange: _Exchange, unanswerable: Any) -> None:
        self.inner = inner
        self.exchange = exchange
        self.unanswerable = unanswerable  # where server requests go once the client's input has ended

    async def send(self, item: SessionMessage) -> None:
        message = item.message
        if self.exchange.repaired and (
            getattr(message, "id", None) in self.exchange.repaired or isinstance(message, types.JSONRPCNotification)
        ):
            item = _utf8_safe_message(item)
        await self.inner.send(item)
        self.exchange.written(message)
        if self.exchange.input_ended and isinstance(message, types.JSONRPCRequest):
            await self.unanswerable(message.id)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> _AnsweringWriter:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _no_answer(request_id: RequestId) -> SessionMessage:
    error = types.ErrorData(code=INTERNAL_ERROR, message="the client's input has ended: it cannot answer this request")
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


@asynccontextmanager
async def answering_every_request(read_stream: Any, write_stream: Any) -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) streams to serve on, over the stdio transport's pair (see the module)."""
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    exchange = _Exchange()

    async def unanswerable(request_id: RequestId) -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):  # serving has ended
            await send.send(_no_answer(request_id))

    writer = _AnsweringWriter(write_stream, exchange, unanswerable)

    async def forward() -> None:
        async with send:
            async for item in read_stream:
                if isinstance(item, Exception):
                    repaired = read_with_lone_surrogates(item)
                    if repaired is None:
                        logger.debug("answered an unreadable line: %s", type(item).__name__)
                        await writer.inner.send(SessionMessage(error_for(item)))
                        continue
                    if isinstance(repaired, types.JSONRPCRequest):
                        exchange.repaired.add(repaired.id)
                    item = SessionMessage(repaired)
                exchange.read(item.message)
                await send.send(item)
            exchange.input_ended = True
            exchange.check()
            for request_id in sorted(exchange.asked, key=str):  # asked before the end: never answered now
                await send.send(_no_answer(request_id))
            await exchange.settled.wait()

    async with anyio.create_task_group() as group, receive:
        group.start_soon(forward)
        yield receive, writer
        group.cancel_scope.cancel()
