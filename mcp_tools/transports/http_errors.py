"""JSON-RPC errors the SDK's HTTP transport gives in its own words, said so a client and a model
can act on them: what was wrong and what to send instead; and the refusal of a protocol version
header that names no version this server speaks."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_tools.transports.http_limits import read_at_most, replay

# The SDK's answer to a body that is JSON but not one JSON-RPC message: -32602 and a validation dump.
_SDK_NOT_A_MESSAGE = "Validation error:"
_MOST_BUFFERED = 64 * 1024  # an error answer is small; anything larger passes as it is


class BodyTooLargeExplained:
    """The SDK refuses a request body over `[http] max_body_bytes` with a bare 413 ("Request body
    too large"), which a client shows as a vague failure. Here that answer becomes a JSON-RPC
    error naming the limit, the setting and what to do, which the SDK's client hands to the caller
    as the request's error. The SDK still does the counting, declared or streamed."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = False

        async def explain(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 413:
                refused = True
                return
            if not refused:
                await send(message)
            elif not message.get("more_body", False):
                await send_explanation(send)

        async def send_explanation(send: Send) -> None:
            body = json.dumps({"jsonrpc": "2.0", "id": None, "error": self.error()}).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 413, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, explain)

    def error(self) -> dict[str, Any]:
        return too_large_error(self.limit)


def too_large_error(limit: int) -> dict[str, Any]:
    """The JSON-RPC error for a body over `[http] max_body_bytes`: the limit, the setting, what to do."""
    from mcp_types.jsonrpc import INVALID_REQUEST

    size = f"{limit / (1024 * 1024):.3g} MiB" if limit >= 1024 * 1024 else f"{limit // 1024} KiB"
    return {
        "code": INVALID_REQUEST,
        "message": f"the request is larger than this server accepts ({limit} bytes, {size}; "
        "[http] max_body_bytes): nothing ran. Send less in one call, e.g. split a large write into "
        "smaller files; or the server's operator raises [http] max_body_bytes",
        "data": {"limit_bytes": limit, "setting": "[http] max_body_bytes"},
    }


class InvalidRequestExplained:
    """A body that is JSON but not one JSON-RPC message (`[]`, `42`, a batch, an object without
    `method`) gets -32600 Invalid Request, as JSON-RPC 2.0 says, with what to send, instead of the
    SDK's -32602 and a pydantic dump with links. Only 400 answers are looked at."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        start: Message | None = None  # a 400 answer's start, held until its body is seen
        parts: list[Message] = []
        passing = False

        async def explain(message: Message) -> None:
            nonlocal start, passing
            if passing:
                await send(message)
                return
            if start is None:
                if message["type"] == "http.response.start" and message["status"] == 400:
                    start = message
                    return
                passing = True
                await send(message)
                return
            parts.append(message)
            held = sum(len(part.get("body", b"")) for part in parts)
            if message.get("more_body", False) and held < _MOST_BUFFERED:
                return
            passing = True
            complete = not message.get("more_body", False)
            better = rewritten(b"".join(part.get("body", b"") for part in parts)) if complete else None
            if better is None:
                await send(start)
                for part in parts:
                    await send(part)
                return
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(better)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": better})

        await self.app(scope, receive, explain)


def rewritten(body: bytes) -> bytes | None:
    """The -32600 answer for the SDK's validation dump, or None to pass the answer as it is."""
    from mcp_types.jsonrpc import INVALID_PARAMS, INVALID_REQUEST

    try:
        answer = json.loads(body)
    except ValueError:
        return None
    error = answer.get("error") if isinstance(answer, dict) else None
    if not isinstance(error, dict) or error.get("code") != INVALID_PARAMS:
        return None
    if answer.get("id") is not None or not str(error.get("message", "")).startswith(_SDK_NOT_A_MESSAGE):
        return None
    better: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": INVALID_REQUEST,
            "message": 'Invalid Request: send one JSON-RPC 2.0 object per POST, with jsonrpc "2.0", a method '
            'and (for a request) an id, e.g. {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}; '
            "batches (arrays) are not accepted",
        },
    }
    return json.dumps(better).encode()


class LoneSurrogatesAnswered:
    """A request whose JSON escapes a lone surrogate (`"doc\\udfffs"`) is valid JSON that the
    SDK's parser refuses with a 400 parse error and `id: null`, which no client can match to its
    request. Here such a request gets its own answer, as over stdio: a tool call an
    `invalid_arguments` result naming the argument, anything else -32602 naming where the text is.
    Nothing runs either way. Only a 400 answer to a body holding `\\u` is looked at."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        held: Message | None = None
        passing = False

        async def recording() -> Message:
            message = await receive()
            if message["type"] == "http.request" and not passing:
                chunks.append(message.get("body", b""))
            return message

        async def answering(message: Message) -> None:
            nonlocal held, passing
            if passing:
                await send(message)
                return
            if held is None and message["type"] == "http.response.start" and message["status"] == 400:
                held = message
                return
            if held is None:
                passing = True
                chunks.clear()  # an answer other than 400: the body is not needed
                await send(message)
                return
            passing = True
            body = b"".join(chunks)
            chunks.clear()
            better = surrogate_answer(body) if b"\\u" in body and not message.get("more_body", False) else None
            if better is None:
                await send(held)
                await send(message)
                return
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(better)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": better})

        await self.app(scope, recording, answering)


def surrogate_answer(body: bytes) -> bytes | None:
    """The JSON-RPC answer to a request refused only for a lone surrogate in its text, else None."""
    from mcp_tools.policy.gate import failure_outcome
    from mcp_tools.policy.unicode import not_unicode_failure
    from mcp_tools.transports.mcp_server import call_result
    from mcp_tools.util.text import not_unicode, utf8_safe

    try:
        request = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(request, dict) or not isinstance(request.get("id"), str | int) or "method" not in request:
        return None
    where = not_unicode(request)
    if where is None:
        return None
    answer: dict[str, Any] = {"jsonrpc": "2.0", "id": utf8_safe(request["id"])}
    params = request.get("params")
    params = params if isinstance(params, dict) else {}
    # a tool call whose name and the rest are text: its arguments are what holds the surrogate
    if request["method"] == "tools/call" and not_unicode({**params, "arguments": None}) is None:
        broken = not_unicode(params.get("arguments")) or "an argument"
        result = call_result(failure_outcome(not_unicode_failure(broken)))
        answer["result"] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    else:
        from mcp_types.jsonrpc import INVALID_PARAMS

        message = f"Invalid params: {where} is not valid Unicode text (it holds a lone surrogate); send UTF-8 text"
        answer["error"] = {"code": INVALID_PARAMS, "message": message}
    return json.dumps(answer).encode()


class ProtocolVersionCheck:
    """A `MCP-Protocol-Version` header naming no version we speak is refused with 400, saying so,
    with the request's own id (a client matches the error to what it sent).

    A 2026-07-28 request (its `params._meta` names a protocol version) goes on to the SDK, which
    answers as that version's spec says: a header that differs from the body's version is -32020
    HeaderMismatch, a version it does not serve is -32022 UnsupportedProtocolVersionError whose
    `data.supported` lists what `server/discover` lists, with `data.requested`. Anything else with
    such a header (a 2025-era request, say) is answered here: left to the SDK it would be read as a
    2026-era request and refused for its missing `params._meta`, which sends the client looking
    in the wrong place.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

        supported = [*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS]
        sent = header_of(scope, b"mcp-protocol-version")
        if scope["type"] != "http" or sent is None or sent in supported:
            await self.app(scope, receive, send)
            return
        raw, whole = await read_at_most(receive, _MOST_BUFFERED) if scope.get("method") == "POST" else (b"", True)
        request = parsed(raw) if whole else None
        if request is not None and names_version(request):
            await self.app(scope, replay(raw, receive), send)
            return
        body = json.dumps(unsupported_version(sent, supported, request)).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 400, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def header_of(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def parsed(body: bytes) -> dict[str, Any] | None:
    try:
        request = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return request if isinstance(request, dict) else None


def names_version(request: dict[str, Any]) -> bool:
    """Whether a request is written as a 2026-07-28 one: its `params._meta` names its protocol version."""
    params = request.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta


def unsupported_version(sent: str, supported: list[str], request: dict[str, Any] | None) -> dict[str, Any]:
    """-32022 for an unknown `MCP-Protocol-Version` header, with the request's id where it has one."""
    from mcp_types.jsonrpc import UNSUPPORTED_PROTOCOL_VERSION

    shown = sent if len(sent) <= 40 and sent.isprintable() else f"{sent[:40]!r}..."
    request_id = request.get("id") if request is not None else None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        request_id = None
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": UNSUPPORTED_PROTOCOL_VERSION,
            "message": f"unsupported MCP-Protocol-Version header {shown!r}: send one of {', '.join(supported)}",
            "data": {"supported": supported, "requested": sent[:100]},
        },
    }
