"""The inbox service: the one ingestion path that SMTP, the CLI and the webhook all use."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import anyio

from mcp_tools.core.tooling import Environment, NotConfigured
from mcp_tools.servers.inbox.config import InboxConfig
from mcp_tools.servers.inbox.store import BlobStore, MessageStore, NewMessage
from mcp_tools.servers.inbox.summary import SummaryEndpoint, summarise

logger = logging.getLogger("mcp_tools.inbox")

SUMMARY_KEY_ENV = "MCP_TOOLS_SUMMARY_API_KEY"


class MessageTooLarge(Exception):
    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"message is {size} bytes; the limit is {limit} bytes (max_message_bytes)")
        self.size = size
        self.limit = limit


class EmptyMessage(Exception):
    def __init__(self) -> None:
        super().__init__("message is empty")


@dataclass(frozen=True)
class IngestResult:
    id: str
    duplicate: bool
    warnings: list[str] = field(default_factory=list)


NewMailHook = Callable[[IngestResult], Awaitable[None]]


@dataclass
class InboxService:
    config: InboxConfig
    store: MessageStore
    blobs: BlobStore
    summary_endpoint: SummaryEndpoint | None
    new_mail_hooks: list[NewMailHook] = field(default_factory=list)
    announce: Callable[[str], Awaitable[None]] | None = None  # the channel `notify` names

    def accepts_recipient(self, address: str) -> bool:
        return address.strip().strip("<>").lower() in self.config.addresses

    async def ingest(self, raw: bytes, via: str) -> IngestResult:
        """Store one raw message (SMTP, CLI and HTTP all come here); duplicates are kept once."""
        if len(raw) > self.config.max_message_bytes:
            raise MessageTooLarge(len(raw), self.config.max_message_bytes)
        if not raw.strip():
            raise EmptyMessage()
        from mcp_tools.servers.inbox.parsing import parse_message  # the email package costs start-up time

        parsed = await anyio.to_thread.run_sync(parse_message, raw)
        dedupe_key = parsed.dedupe_key(raw)
        existing = await anyio.to_thread.run_sync(self.store.find_by_key, dedupe_key)
        if existing is not None:
            return IngestResult(existing, True)
        summary, source = await summarise(self.summary_endpoint, parsed.subject, parsed.sender, parsed.body)
        received_at = _iso(datetime.now(UTC))
        message_id = hashlib.sha256(dedupe_key.encode("utf-8", "surrogateescape")).hexdigest()[:16]

        def write() -> tuple[str, bool]:
            raw_blob = self.blobs.put(raw)
            attachments = [
                (item.filename, item.content_type, item.charset, item.size, self.blobs.put(item.data))
                for item in parsed.attachments
            ]
            return self.store.insert(
                NewMessage(
                    id=message_id,
                    dedupe_key=dedupe_key,
                    message_id=parsed.message_id,
                    sender=parsed.sender,
                    sender_address=parsed.sender_address,
                    forwarded_from=parsed.forwarded_from,
                    recipients=parsed.recipients,
                    subject=parsed.subject,
                    sent_at=_iso(parsed.date) if parsed.date else None,
                    received_at=received_at,
                    summary=summary,
                    summary_source=source,
                    body=parsed.body,
                    body_format=parsed.body_format,
                    raw_size=len(raw),
                    raw_blob=raw_blob,
                    warnings=parsed.warnings,
                    via=via,
                    attachments=attachments,
                )
            )

        stored_id, duplicate = await anyio.to_thread.run_sync(write)
        result = IngestResult(stored_id, duplicate, parsed.warnings)
        if not duplicate:
            await self._notify(result, len(raw), len(parsed.attachments), via)
            if self.announce is not None:
                await self._announce(parsed.sender, parsed.subject, summary, len(parsed.attachments))
        return result

    async def _notify(self, result: IngestResult, size: int, attachment_count: int, via: str) -> None:
        if self.config.notify == "log":
            logger.info(
                "new message %s via %s (%d bytes, %d attachments, %d parse warnings)",
                result.id,
                via,
                size,
                attachment_count,
                len(result.warnings),
            )
        for hook in self.new_mail_hooks:
            try:
                await hook(result)
            except Exception:  # a failing listener must not lose the stored message
                logger.exception("new-mail hook failed for %s", result.id)

    async def _announce(self, sender: str, subject: str, summary: str, attachment_count: int) -> None:
        """New mail, told where the person is: sender, subject and summary (never the body)."""
        assert self.announce is not None
        text = f"New mail from {sender or 'an unknown sender'}\nSubject: {subject or '(no subject)'}"
        if attachment_count:
            text += f"\nAttachments: {attachment_count}"
        text += f"\n\n{summary}" if summary else ""
        try:
            await self.announce(text)
        except Exception as exc:  # a channel outage must not lose the stored message
            logger.warning("could not announce new mail: %s", type(exc).__name__)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).replace(microsecond=0).isoformat()


def create_service(config: InboxConfig, env: Environment) -> InboxService:
    """Cheap: makes folders, opens nothing; the database is created on first use."""
    state_dir = env.namespace_state_dir("inbox")
    blob_dir = env.data_dir / (config.blob_dir.expanduser() if config.blob_dir else "inbox")
    blob_dir.mkdir(parents=True, exist_ok=True)
    announce = None
    if config.notify not in ("log", "none"):
        announce = env.announcers.get(config.notify)
        if announce is None:
            raise NotConfigured(f'[inbox] notify = "{config.notify}" needs [approvals.{config.notify}] configured')
    endpoint = None
    if config.summary_url:
        key = config.summary_api_key.get_secret_value() if config.summary_api_key else None
        endpoint = SummaryEndpoint(
            url=config.summary_url,
            model=config.summary_model,
            api_key=key or env.env.get(SUMMARY_KEY_ENV) or None,
            timeout_seconds=config.summary_timeout_seconds,
        )
    return InboxService(
        config=config,
        store=MessageStore(state_dir / "inbox.sqlite3"),
        blobs=BlobStore(blob_dir),
        summary_endpoint=endpoint,
        announce=announce,
    )
