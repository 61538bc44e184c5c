"""The SMTP receiver: mail for the configured addresses only, no relaying, bounded size."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mcp_tools.servers.inbox.service import EmptyMessage, InboxService, MessageTooLarge

logger = logging.getLogger("mcp_tools.inbox")

MAX_RECIPIENTS = 50


class InboxSMTPHandler:
    """aiosmtpd handler: refuses foreign recipients at RCPT, stores each message at DATA."""

    def __init__(self, service: InboxService) -> None:
        self.service = service

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: list[str]) -> str:
        if not self.service.accepts_recipient(address):
            return "550 5.7.1 Relaying denied: this server accepts mail only for its own inbox address"
        if len(envelope.rcpt_tos) >= MAX_RECIPIENTS:
            return "452 4.5.3 Too many recipients"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        raw = envelope.original_content or envelope.content or b""
        if isinstance(raw, str):
            raw = raw.encode("utf-8", errors="surrogateescape")
        try:
            result = await self.service.ingest(raw, via="smtp")
        except MessageTooLarge:
            return "552 5.3.4 Message too big for this inbox"
        except EmptyMessage:
            return "554 5.6.0 Empty message"
        except Exception:
            logger.exception("could not store a message received over SMTP")
            return "451 4.3.0 Could not store the message; try again later"
        note = " (duplicate, already stored)" if result.duplicate else ""
        return f"250 2.0.0 Stored as {result.id}{note}"


def smtp_parameters(service: InboxService) -> dict[str, Any]:
    """Keyword arguments for aiosmtpd's `SMTP` (and its `Controller`)."""
    return {
        "data_size_limit": service.config.max_message_bytes,
        "enable_SMTPUTF8": True,
        "ident": "mcp-tools inbox",
    }


def greeting_hostname(service: InboxService) -> str:
    """The name in the SMTP greeting: the inbox's own domain, so no slow reverse DNS lookup is needed."""
    addresses = service.config.addresses
    return addresses[0].rpartition("@")[2] if addresses else "localhost"


async def start_smtp_server(service: InboxService, host: str, port: int) -> asyncio.Server:
    """Serve SMTP on the running loop (the CLI); tests may use aiosmtpd's threaded Controller."""
    from aiosmtpd.smtp import SMTP

    handler = InboxSMTPHandler(service)
    parameters = smtp_parameters(service)
    loop = asyncio.get_running_loop()
    hostname = greeting_hostname(service)
    return await loop.create_server(
        lambda: SMTP(handler, loop=loop, hostname=hostname, **parameters), host=host, port=port
    )
