"""The notify hook: each new pending approval as JSON, to a command's stdin or a webhook URL.

For channels this project does not speak itself: ntfy, Slack, a desktop notification. The JSON
is `ApprovalNotice.as_dict()`: the confirmation text, the redacted arguments, who asked, when
it expires and the page link; never a secret. The hook only tells; answers come through the
page, Telegram or `mcp-tools approvals approve`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from mcp_tools.core.config import NotifySettings
from mcp_tools.policy.channels import ApprovalNotice
from mcp_tools.policy.decisions import Decisions

logger = logging.getLogger("mcp_tools.notify")
MAX_STDERR_CHARS = 2000  # the end of a failing command's stderr, in the log


class NotifyHook:
    name = "notify"

    def __init__(self, settings: NotifySettings) -> None:
        self.settings = settings

    def where(self, link: str | None) -> str | None:
        return None  # it only tells; answers come elsewhere

    async def announce(self, notice: ApprovalNotice) -> None:
        payload = json.dumps(notice.as_dict(), ensure_ascii=False).encode()
        with anyio.fail_after(self.settings.timeout_seconds):
            if self.settings.command:
                await self._run_command(payload)
            if self.settings.url:
                await self._post(payload)

    async def _run_command(self, payload: bytes) -> None:
        import shlex

        from mcp_tools.util.secrets import scrub_text

        shown = scrub_text(shlex.join(self.settings.command))
        try:
            process = await anyio.open_process(self.settings.command, stdout=subprocess.DEVNULL)
        except OSError as exc:  # not found, not executable: say which command, and why
            logger.warning("notify command %s could not start: %s", shown, scrub_text(exc.strerror or str(exc)))
            return
        tail = b""
        async with process:
            assert process.stdin is not None and process.stderr is not None
            # a command that does not read its input (or exited early) still gets its say below
            with contextlib.suppress(anyio.BrokenResourceError, OSError):
                await process.stdin.send(payload)
                await process.stdin.aclose()
            async for chunk in process.stderr:
                tail = (tail + chunk)[-4 * MAX_STDERR_CHARS :]
            code = await process.wait()
        if code != 0:
            said = scrub_text(tail.decode("utf-8", errors="replace").strip())
            if len(said) > MAX_STDERR_CHARS:
                said = "…" + said[-MAX_STDERR_CHARS:]
            logger.warning("notify command %s exited with %s%s", shown, code, f": {said}" if said else " (no stderr)")

    async def _post(self, payload: bytes) -> None:
        import httpx

        async with httpx.AsyncClient(timeout=self.settings.timeout_seconds) as client:
            response = await client.post(
                str(self.settings.url), content=payload, headers={"Content-Type": "application/json"}
            )
        if response.status_code >= 300:
            logger.warning("notify URL answered HTTP %s", response.status_code)

    @asynccontextmanager
    async def running(self, decisions: Decisions) -> AsyncIterator[None]:
        yield
