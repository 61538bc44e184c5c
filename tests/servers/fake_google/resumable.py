"""Resumable uploads as Google serves them (`uploadType=resumable`), for the fake's upload methods.

The first request carries the JSON metadata and `X-Upload-Content-Type` / `X-Upload-Content-Length`
and gets a session URI in `Location`; each chunk is a PUT to it with `Content-Range: bytes a-b/total`,
answered `308` with `Range: bytes=0-n` until the last, which runs the method with the whole media
and answers as it would. A DELETE to the session drops it (499). A session that never finished
leaves nothing: the file exists only once its last chunk arrived. Chunks that do not follow on, or
that overrun the declared length, are violations.
"""

from __future__ import annotations

import re
import secrets
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.servers.fake_google.server import FakeGoogle


@dataclass
class Session:
    handler: Any
    method_id: str
    path: str
    path_params: dict[str, str]
    params: dict[str, Any]
    metadata: Any
    headers: dict[str, str]
    declared: int | None
    scopes: list[str]
    received: bytearray = field(default_factory=bytearray)


class ResumableUploads:
    def __init__(self, google: FakeGoogle) -> None:
        self.google = google
        self.sessions: dict[str, Session] = {}
        self.finished: list[str] = []  # method ids of the sessions that ended with a file
        self.dropped: list[str] = []  # session ids a DELETE dropped
        self.chunks: list[int] = []  # the size of every chunk received
        self.dropping = threading.Event()  # set once a DELETE has dropped a session

    @staticmethod
    def asked(query: dict[str, list[str]]) -> bool:
        return (query.get("uploadType") or [""])[0] == "resumable"

    def start(
        self,
        handler: Any,
        method_id: str,
        path: str,
        path_params: dict[str, str],
        params: dict[str, Any],
        metadata: Any,
        headers: dict[str, str],
        scopes: list[str],
    ) -> Any:
        from tests.servers.fake_google.server import Response

        declared = headers.get("x-upload-content-length")
        session_id = secrets.token_urlsafe(16)
        kept = {"x-upload-content-type": headers.get("x-upload-content-type", "")}
        with self.google.lock:
            self.sessions[session_id] = Session(
                handler,
                method_id,
                path,
                path_params,
                params,
                metadata,
                kept,
                int(declared) if declared else None,
                scopes,
            )
        location = f"{self.google.url.rstrip('/')}{path}?uploadType=resumable&upload_id={session_id}"
        return Response(200, b"", {"Location": location})

    def chunk(self, verb: str, session_id: str, headers: dict[str, str], body: bytes) -> Any:
        from tests.servers.fake_google.server import ApiError, Response, apply_fields, parse_fields

        with self.google.lock:
            session = self.sessions.get(session_id)
        if session is None:
            raise ApiError(404, "No such upload session.", "notFound")
        token = self.google.check_token(headers.get("authorization", ""), session.scopes)
        if self.google.hold is not None:
            self.google.hold(f"{session.method_id}:{verb.lower()}", headers)
        if verb == "DELETE":
            with self.google.lock:
                self.sessions.pop(session_id, None)
                self.dropped.append(session_id)
            self.dropping.set()
            return Response(499, b"")
        if verb != "PUT":
            self.google.violations.append(f"{verb} to an upload session")
            raise ApiError(400, "Upload chunks are PUT.", "badRequest")
        found = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+|\*)|bytes \*/(\d+|\*)", headers.get("content-range", ""))
        if found is None:
            self.google.violations.append("upload chunk without a valid Content-Range")
            raise ApiError(400, "Invalid Content-Range.", "badRequest")
        if found.group(1) is not None:
            start, end = int(found.group(1)), int(found.group(2))
            total = None if found.group(3) == "*" else int(found.group(3))
            if start != len(session.received) or end - start + 1 != len(body):
                self.google.violations.append(f"upload chunk {start}-{end} after {len(session.received)} bytes")
                raise ApiError(400, "The chunk does not follow the bytes received.", "badRequest")
            if session.declared is not None and total not in (None, session.declared):
                self.google.violations.append(f"upload of {total} bytes declared as {session.declared}")
                raise ApiError(400, "The length differs from the one declared.", "badRequest")
            session.received += body
            self.chunks.append(len(body))
        else:
            total = None if found.group(4) == "*" else int(found.group(4))
        if total is None or len(session.received) < total:
            range_header = {"Range": f"bytes=0-{len(session.received) - 1}"} if session.received else {}
            return Response(308, b"", range_header)
        with self.google.lock:
            self.sessions.pop(session_id, None)
            self.finished.append(session.method_id)
            result = session.handler.handle(
                session.method_id,
                session.path_params,
                session.params,
                session.metadata,
                token,
                bytes(session.received),
                session.headers,
            )
        if "fields" in session.params:
            result = apply_fields(result, parse_fields(session.params["fields"]))
        return Response.json(200, result)
