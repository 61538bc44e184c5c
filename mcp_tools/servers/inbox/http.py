"""`POST /inbox`: raw MIME from a forwarding webhook, behind the server's bearer auth."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from mcp_tools.core.tooling import HttpRoute
from mcp_tools.servers.inbox.service import EmptyMessage, InboxService, MessageTooLarge

logger = logging.getLogger("mcp_tools.inbox")

_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def routes(service: InboxService) -> Sequence[HttpRoute]:
    async def receive(request: Any) -> Any:
        from starlette.responses import JSONResponse

        limit = service.config.max_message_bytes
        too_large = JSONResponse({"error": f"message is larger than {limit} bytes"}, status_code=413)
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type in _FORM_TYPES:
            return JSONResponse(
                {"error": "send the raw MIME message as the body (message/rfc822), not a form"},
                status_code=415,
            )
        if request.headers.get("content-encoding", "identity").strip().lower() != "identity":
            return JSONResponse({"error": "send the message uncompressed (no Content-Encoding)"}, status_code=415)
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            return too_large
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                return too_large
            chunks.append(chunk)
        try:
            result = await service.ingest(b"".join(chunks), via="http")
        except EmptyMessage:
            return JSONResponse({"error": "the request body is empty; send the raw MIME message"}, status_code=400)
        except MessageTooLarge:
            return too_large
        except Exception:
            logger.exception("could not store a message posted over HTTP")
            return JSONResponse({"error": "could not store the message"}, status_code=500)
        return JSONResponse(
            {"id": result.id, "duplicate": result.duplicate, "warnings": result.warnings},
            status_code=200 if result.duplicate else 201,
        )

    return [HttpRoute(path="/inbox", methods=("POST",), endpoint=receive)]
