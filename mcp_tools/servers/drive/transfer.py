"""Large Drive transfers, chunk by chunk, with progress: downloads saved to the files store, uploads.

A file larger than one chunk moves in ranged requests (a download) or through a resumable upload
session (an upload), one chunk per step in a worker thread. Between two steps the call reports the
bytes done out of the total (`ctx.report_progress`: the client's progress notifications, a task's
status) and is where a cancelled call stops. A cancelled upload abandons its session, and Drive
keeps nothing of a session that never finished: no half-uploaded file. A cancelled download has
written nothing, since its bytes reach the files store only whole (through `files.write`, which
writes atomically).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from mcp_tools.core.tooling import CallContext

if TYPE_CHECKING:
    from mcp_tools.servers.drive.service import DriveService

CHUNK_BYTES = 1024 * 1024  # a multiple of 256 KiB, as Drive's resumable uploads require
ABANDON_SECONDS = 10.0  # how long a cancelled upload tries to tell Drive to drop its session


class _Download:
    """One ranged download as `GoogleClient.execute` runs a request: each `execute` fetches one chunk."""

    def __init__(self, file_id: str) -> None:
        self.file_id = file_id
        self.buffer = io.BytesIO()
        self.downloader: Any = None
        self.uri: str | None = None

    def bind(self, service: Any) -> _Download:
        if self.downloader is None:
            from googleapiclient.http import MediaIoBaseDownload

            request = service.files().get_media(fileId=self.file_id, supportsAllDrives=True)
            self.uri = request.uri
            self.downloader = MediaIoBaseDownload(self.buffer, request, chunksize=CHUNK_BYTES)
        return self

    def execute(self, num_retries: int = 0) -> tuple[int, int | None, bool]:
        status, done = self.downloader.next_chunk()
        return int(status.resumable_progress), status.total_size, bool(done)


class _Upload:
    """One resumable upload as `GoogleClient.execute` runs a request: each `execute` sends one chunk."""

    def __init__(self, build: Callable[[Any], Any], fix: Callable[[Any], Any]) -> None:
        self.build = build
        self.fix = fix
        self.request: Any = None
        self.finished = False

    @property
    def uri(self) -> str | None:
        return None if self.request is None else str(self.request.uri)

    def bind(self, service: Any) -> _Upload:
        if self.request is None:
            self.request = self.fix(self.build(service))
        return self

    def execute(self, num_retries: int = 0) -> tuple[int, dict[str, Any] | None]:
        status, body = self.request.next_chunk()
        if body is not None:
            self.finished = True
            return self.request.resumable.size(), dict(body)
        return int(status.resumable_progress), None

    def abandon(self) -> None:
        """Tell Drive to drop the session (it would expire on its own within a week)."""
        session = None if self.request is None else self.request.resumable_uri
        if session and not self.finished:
            with contextlib.suppress(Exception):
                self.request.http.request(session, "DELETE")


async def download(service: DriveService, tool: str, file_id: str, size: int | None, ctx: CallContext) -> bytes:
    """A Drive file's bytes; in ranged chunks with progress when it is larger than one."""
    if size is None or size <= CHUNK_BYTES:
        data: bytes = await anyio.to_thread.run_sync(service.download, file_id)
        return data
    step = _Download(file_id)
    await ctx.report_progress(0, size, "Bytes downloaded from Drive")
    while True:
        done, total, finished = await anyio.to_thread.run_sync(lambda: service.call(tool, step.bind))
        await ctx.report_progress(done, total or size, "Bytes downloaded from Drive")
        if finished:
            return step.buffer.getvalue()


async def upload(
    service: DriveService, tool: str, build: Callable[[Any, Any], Any], data: bytes, mime: str, ctx: CallContext
) -> dict[str, Any]:
    """Send `data` (larger than one chunk) with the request `build(drive, media)` makes, through a
    resumable session, chunk by chunk with progress; Drive's answer (the file)."""
    from googleapiclient.http import MediaIoBaseUpload

    media = MediaIoBaseUpload(io.BytesIO(data), mimetype=mime, chunksize=CHUNK_BYTES, resumable=True)
    step = _Upload(lambda drive: build(drive, media), service.client.fix_upload)
    total = len(data)
    await ctx.report_progress(0, total, "Bytes uploaded to Drive")
    try:
        while True:
            sent: tuple[int, dict[str, Any] | None] = await anyio.to_thread.run_sync(
                lambda: service.call(tool, step.bind)
            )
            done, body = sent
            await ctx.report_progress(done, total, "Bytes uploaded to Drive")
            if body is not None:
                return body
    except BaseException:
        with anyio.CancelScope(shield=True), anyio.move_on_after(ABANDON_SECONDS):
            await anyio.to_thread.run_sync(step.abandon, abandon_on_cancel=True)
        raise
