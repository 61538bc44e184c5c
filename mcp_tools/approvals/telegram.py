"""The Telegram channel: a message with Approve and Deny buttons for each pending approval.

Callback data is `a:<nonce>` or `d:<nonce>` (a random nonce, far below Telegram's 64 bytes),
never the arguments. A press counts only from the configured chat (and allowed users), on the
message it was sent with, while the approval is pending and unexpired, and only once. The bot
answers every press and edits the message to show the decision and who made it, wherever the
decision was made (a press, the page, the CLI, the client cancelling).

Updates come by long polling (`getUpdates`) while a message waits for an answer, or through a
webhook (`handle_update`) that checks Telegram's secret token header. Several server processes
may share one bot: the `Ledger` (in the state store) lets any of them take a press and one poll at
a time.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import secrets
import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from mcp_tools.core.config import TelegramSettings
from mcp_tools.policy.channels import ApprovalNotice, MessageChannel
from mcp_tools.policy.decisions import Decisions, describe_decider
from mcp_tools.state.store import StateStore, iso_time

logger = logging.getLogger("mcp_tools.telegram")
MAX_TEXT = 4096
SETTLE_ROOM = 200  # what the edit that settles a message adds ("✅ Approved by telegram:@name")
TOO_LONG_MARK = "⚠️ Not shown in full."
SETTLED_WORDS = {
    "approved": "✅ Approved",
    "denied": "❌ Denied",
    "consumed": "✅ Approved",
    "withdrawn": "↩️ Withdrawn: the request was cancelled",
    "expired": "⌛ Expired without an answer",
}
SECRET_HEADER = "x-telegram-bot-api-secret-token"
IDLE_CHECK_SECONDS = 1.0
# After the last message is answered elsewhere (or withdrawn), a press on it still gets its
# answer ("Not accepted: ...") instead of a spinner: polling goes on this long.
LATE_PRESS_SECONDS = 120.0
RECORD_WAIT_SECONDS = 10.0  # how long a press waits for its message, sent a moment ago, to be recorded
UNKNOWN_BUTTON = "Not accepted: this button is not known to this server."
_monotonic = time.monotonic
LEASE_MARGIN_SECONDS = 20.0


class TelegramError(Exception):
    """The Bot API refused a request; the message is Telegram's description, never the token."""


@dataclass
class SentMessage:
    approval_id: str
    chat_id: int
    message_id: int
    text: str
    expires: float
    settled: bool = False


class Ledger:
    """The bot's messages, its update offset and who polls, shared by every server process.

    A press may reach any process that runs the bot (the one polling, or the HTTP server behind
    the webhook), so what was sent lives in the state store (the SQLite file, or the shared
    PostgreSQL database), not in the memory of the process that sent it. Settling a message is
    one UPDATE, so exactly one process edits it. One process at a time holds the polling lease,
    because Telegram answers parallel `getUpdates` with a conflict; a process that dies loses it
    when it expires. Nonces are stored as hashes.
    """

    def __init__(self, state: StateStore) -> None:
        self._state = state
        self._clock = state.clock  # when a polling lease runs out

    @classmethod
    def for_state(cls, store: StateStore, state_dir: Path) -> Ledger:
        """The ledger in the store's own tables; a `telegram.sqlite3` an older release kept in the
        state dir is moved into them first (its messages and update offset)."""
        old = state_dir / OLD_LEDGER_FILE
        if store.engine == "sqlite" and old.exists():
            _import_old_ledger(store, old)
        return cls(store)

    def _run(self, sql: str, params: tuple[Any, ...] = ()) -> _Result:
        with self._state.reading() as db:
            cursor = db.execute(sql, params)
            return _Result(cursor.rowcount, cursor.fetchall() if cursor.description else [])

    def record(self, nonce: str, message: SentMessage) -> None:
        self._run(
            "INSERT INTO telegram_messages VALUES (?,?,?,?,?,?,0)",
            (
                nonce_hash(nonce),
                message.approval_id,
                message.chat_id,
                message.message_id,
                message.text,
                message.expires,
            ),
        )

    def by_nonce(self, nonce: str) -> SentMessage | None:
        rows = self._run(
            f"SELECT {MESSAGE_COLUMNS} FROM telegram_messages WHERE nonce_sha256=?", (nonce_hash(nonce),)
        ).rows
        return _sent_message(rows[0], settled=bool(rows[0][5])) if rows else None

    def knows(self, approval_id: str) -> bool:
        return bool(self._run("SELECT 1 FROM telegram_messages WHERE approval_id=?", (approval_id,)).rows)

    def claim(self, approval_id: str) -> SentMessage | None:
        """Mark the approval's message settled; returns it only to the one caller that did."""
        with self._state.transaction() as db:
            row = db.execute(
                f"SELECT {MESSAGE_COLUMNS} FROM telegram_messages WHERE approval_id=? AND settled=0", (approval_id,)
            ).fetchone()
            if row is not None:
                db.execute("UPDATE telegram_messages SET settled=1 WHERE approval_id=?", (approval_id,))
        return None if row is None else _sent_message(row, settled=True)

    def open_approvals(self) -> list[tuple[str, float]]:
        """(approval id, expires) of every message still waiting for an answer."""
        rows = self._run("SELECT approval_id, expires FROM telegram_messages WHERE settled=0").rows
        return [(row[0], row[1]) for row in rows]

    def take_lease(self, owner: str, seconds: float) -> bool:
        now = float(self._clock())
        updated = self._run(
            "INSERT INTO telegram_poller VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET owner=excluded.owner, "
            "until=excluded.until WHERE telegram_poller.owner=excluded.owner OR telegram_poller.until<?",
            (owner, now + seconds, now),
        ).rowcount
        return updated == 1

    def release_lease(self, owner: str) -> None:
        self._run("DELETE FROM telegram_poller WHERE owner=?", (owner,))

    def offset(self) -> int | None:
        rows = self._run("SELECT value FROM telegram_state WHERE key='offset'").rows
        return int(rows[0][0]) if rows else None

    def set_offset(self, offset: int) -> None:
        self._run(
            "INSERT INTO telegram_state VALUES ('offset', ?) ON CONFLICT (key) DO UPDATE SET value=excluded.value",
            (str(offset),),
        )


@dataclass(frozen=True)
class _Result:
    rowcount: int
    rows: list[Any]


def _sent_message(row: Sequence[Any], settled: bool) -> SentMessage:
    """A `SentMessage` from a row that starts with the `MESSAGE_COLUMNS`."""
    approval_id, chat_id, message_id, text, expires = row[:5]
    return SentMessage(approval_id, chat_id, message_id, text, expires, settled=settled)


def _import_old_ledger(store: StateStore, path: Path) -> None:
    """Copy the messages and update offset of a ledger file from an older release into the store,
    then set the file aside (`telegram.sqlite3.imported`). Copying twice (two processes starting
    together) changes nothing: a row already there is kept."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None, timeout=10)) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}

        def rows(table: str, columns: str) -> list[Any]:
            for name in (f"telegram_{table}", table):  # its tables were once named without "telegram_"
                if name in tables:
                    return db.execute(f"SELECT {columns} FROM {name}").fetchall()
            return []

        messages = rows("messages", f"nonce_sha256, {MESSAGE_COLUMNS}")
        state = rows("state", "key, value")
    with store.transaction() as into:
        for message in messages:
            into.execute(
                "INSERT INTO telegram_messages VALUES (?,?,?,?,?,?,?) ON CONFLICT (nonce_sha256) DO NOTHING", message
            )
        for key, value in state:
            into.execute("INSERT INTO telegram_state VALUES (?, ?) ON CONFLICT (key) DO NOTHING", (key, value))
    with contextlib.suppress(FileNotFoundError):  # another process set it aside first
        path.rename(path.with_name(OLD_LEDGER_FILE + ".imported"))


OLD_LEDGER_FILE = "telegram.sqlite3"
MESSAGE_COLUMNS = "approval_id, chat_id, message_id, text, expires, settled"


def nonce_hash(nonce: str) -> str:
    return hashlib.sha256(nonce.encode()).hexdigest()


class TelegramChannel:
    name = "telegram"

    def __init__(
        self, settings: TelegramSettings, token: str, state_dir: Path, store: StateStore | None = None
    ) -> None:
        self.settings = settings
        self._token = token
        if store is None:
            from mcp_tools.state.sqlite import PolicyStore

            store = PolicyStore(state_dir / "policy.sqlite3")
        self.ledger = Ledger.for_state(store, state_dir)
        self.receives_webhook = False  # set by the HTTP server that serves the webhook route
        self._owner = secrets.token_hex(8)
        self._waiting = anyio.Event()
        self._late_presses_until = 0.0  # monotonic time until which answered messages may still be pressed
        # messages being sent and not yet recorded: a press may arrive between the two
        self._announcing = 0
        self._recorded = anyio.Event()
        # the approvals whose messages the poller last saw waiting, and the event of its next look
        self.seen_waiting: frozenset[str] = frozenset()
        self._looked = anyio.Event()
        self._decisions: Decisions | None = None
        self._http: Any = None
        for name in ("httpx", "httpcore"):  # they log request URLs at info and debug, and ours hold the token
            logging.getLogger(name).setLevel(logging.WARNING)

    # -- Bot API ------------------------------------------------------------------------------

    async def call(self, method: str, params: dict[str, Any], timeout: float = 15.0) -> Any:
        """One Bot API method; raises TelegramError with Telegram's description when it says no."""
        import httpx

        url = f"{self.settings.api_base}/bot{self._token}/{method}"
        try:
            if self._http is not None:  # the server's client, kept open while it runs
                response = await self._http.post(url, json=params, timeout=timeout)
            else:  # a one-off message from a command (new mail through `inbox ingest`)
                async with httpx.AsyncClient() as client:
                    response = await client.post(url, json=params, timeout=timeout)
            body = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise TelegramError(f"{method}: {type(exc).__name__}") from None
        if not isinstance(body, dict) or not body.get("ok"):
            description = body.get("description") if isinstance(body, dict) else None
            raise TelegramError(f"{method}: {str(description or response.status_code).replace(self._token, '***')}")
        return body.get("result")

    async def say(self, text: str) -> None:
        """A plain message to the configured chat (new mail)."""
        await self.call("sendMessage", {"chat_id": self.settings.chat_id, "text": text[:MAX_TEXT]})

    # -- the channel --------------------------------------------------------------------------

    def where(self, link: str | None) -> str | None:
        return "in Telegram"

    async def announce(self, notice: ApprovalNotice) -> None:
        if self.ledger.knows(notice.id):
            return
        nonce = secrets.token_urlsafe(12)
        text = message_text(notice)
        buttons = [{"text": "Deny", "callback_data": f"d:{nonce}"}]
        if not too_long(text):  # nobody approves what they could not read
            buttons.insert(0, {"text": "Approve", "callback_data": f"a:{nonce}"})
        keyboard = {"inline_keyboard": [buttons]}
        self._announcing += 1
        try:
            sent = await self.call(
                "sendMessage", {"chat_id": self.settings.chat_id, "text": text, "reply_markup": keyboard}
            )
            message = SentMessage(
                approval_id=notice.id,
                chat_id=int(sent["chat"]["id"]),
                message_id=int(sent["message_id"]),
                text=text,
                expires=notice.expires,
            )
            self.ledger.record(nonce, message)
        finally:
            self._announcing -= 1
            self._recorded.set()  # wakes a press that came before its message was recorded
            self._recorded = anyio.Event()
        self._waiting.set()

    @asynccontextmanager
    async def running(self, decisions: Decisions) -> AsyncIterator[None]:
        import httpx

        self._decisions = decisions
        self._http = httpx.AsyncClient()
        async with anyio.create_task_group() as group:
            group.start_soon(self._follow, decisions)
            if self.settings.updates == "polling":
                group.start_soon(self._poll)
            elif self.receives_webhook:
                group.start_soon(self._set_webhook)
            try:
                yield
            finally:
                group.cancel_scope.cancel()
                self.ledger.release_lease(self._owner)
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def _set_webhook(self) -> None:
        if not self.settings.webhook_url:
            logger.warning('[approvals.telegram] updates = "webhook" needs webhook_url; no presses will arrive')
            return
        try:
            await self.call(
                "setWebhook",
                {
                    "url": f"{self.settings.webhook_url}{WEBHOOK_PATH}",
                    "secret_token": self.webhook_secret(),
                    "allowed_updates": ["callback_query"],
                },
            )
        except TelegramError as exc:
            logger.warning("could not set the Telegram webhook: %s", exc)

    def webhook_secret(self) -> str:
        """The secret Telegram sends back in a header; derived from the bot token unless configured."""
        if self.settings.webhook_secret is not None:
            return self.settings.webhook_secret.get_secret_value()
        return hmac.new(self._token.encode(), b"mcp-tools webhook", "sha256").hexdigest()

    def webhook_authentic(self, header: str | None) -> bool:
        return header is not None and hmac.compare_digest(header.encode(), self.webhook_secret().encode())

    async def _poll(self) -> None:
        """Long polling while any message waits for a press, by one process at a time (the lease).

        Before it rests it confirms what it has seen (`offset`), so no press is delivered twice.
        """
        confirmed = True
        while True:
            waiting_now = self.ledger.open_approvals()
            self._saw({approval_id for approval_id, _ in waiting_now})
            if waiting_now:
                self._late_presses_until = _monotonic() + LATE_PRESS_SECONDS
            waiting = _monotonic() < self._late_presses_until
            if not waiting and confirmed:
                self.ledger.release_lease(self._owner)
                self._waiting = anyio.Event()
                with anyio.move_on_after(IDLE_CHECK_SECONDS):  # another process may have sent one
                    await self._waiting.wait()
                continue
            timeout = self.settings.poll_timeout_seconds if waiting else 0
            if not self.ledger.take_lease(self._owner, timeout + LEASE_MARGIN_SECONDS):
                await anyio.sleep(IDLE_CHECK_SECONDS)
                continue
            params: dict[str, Any] = {"timeout": timeout, "allowed_updates": ["callback_query"]}
            offset = self.ledger.offset()
            if offset is not None:
                params["offset"] = offset
            try:
                updates = await self.call("getUpdates", params, timeout=timeout + 10)
            except TelegramError as exc:
                logger.warning("Telegram getUpdates failed: %s", exc)
                await anyio.sleep(5)
                continue
            confirmed = not updates and not waiting
            for update in updates or []:
                self.ledger.set_offset(int(update.get("update_id", 0)) + 1)
                await self.handle_update(update)
            await self._settle_expired()

    def _saw(self, waiting: set[str]) -> None:
        self.seen_waiting = frozenset(waiting)
        self._looked.set()
        self._looked = anyio.Event()

    async def sees_waiting(self, approval_id: str) -> None:
        """Return once this process's poller has seen the approval's message waiting for a press."""
        while approval_id not in self.seen_waiting:
            await self._looked.wait()

    async def _follow(self, decisions: Decisions) -> None:
        """Edit the message when its approval is decided anywhere (page, CLI, a cancelled call)."""
        async for event in decisions.follow():
            if event.status == "pending":
                continue
            await self._settle(event.approval_id, event.status)

    async def _settle_expired(self) -> None:
        now = time.time()
        for approval_id, expires in self.ledger.open_approvals():
            if expires <= now:
                await self._settle(approval_id, "expired")

    async def _settle(self, approval_id: str, status: str) -> None:
        message = self.ledger.claim(approval_id)
        if message is None:  # not ours to edit, or another process already did
            return
        by = None
        if self._decisions is not None:
            by = self._decisions.store.approval_meta([approval_id]).get(approval_id, {}).get("decided_by")
        words = SETTLED_WORDS.get(status, status)
        if by and status in ("approved", "denied", "consumed"):
            words += f" by {by}"
        try:
            await self.call(
                "editMessageText",
                {
                    "chat_id": message.chat_id,
                    "message_id": message.message_id,
                    "text": f"{message.text}\n\n{words}"[:MAX_TEXT],
                },
            )
        except TelegramError as exc:
            logger.warning("could not edit the Telegram message for %s: %s", approval_id, exc)

    async def handle_update(self, update: dict[str, Any]) -> None:
        """One update from getUpdates or the webhook: a button press, checked before it counts."""
        query = update.get("callback_query")
        if not isinstance(query, dict) or "id" not in query:
            return
        verdict = self._judge(query)
        with anyio.move_on_after(RECORD_WAIT_SECONDS):
            while verdict == UNKNOWN_BUTTON and self._announcing:  # pressed before we recorded its message
                await self._recorded.wait()
                verdict = self._judge(query)
        if isinstance(verdict, str):
            await self._answer(query, verdict)
            return
        message, approve, by = verdict
        assert self._decisions is not None
        try:
            decided = self._decisions.decide(message.approval_id, approve, by)
        except (LookupError, ValueError) as exc:
            await self._answer(query, f"Not accepted: {exc}")
            current = self._decisions.store.get_approval(message.approval_id)
            if current is not None:
                await self._settle(message.approval_id, current.effective_status(time.time()))
            return
        await self._answer(query, "Approved" if decided.status == "approved" else "Denied")
        await self._settle(message.approval_id, decided.status)

    def _judge(self, query: dict[str, Any]) -> tuple[SentMessage, bool, str] | str:
        """The press and who made it, or why it does not count."""
        data = query.get("data")
        if not isinstance(data, str) or data[:2] not in ("a:", "d:"):
            return "Not accepted: unknown button."
        message = self.ledger.by_nonce(data[2:])
        sender = query.get("from") or {}
        chat = ((query.get("message") or {}).get("chat") or {}).get("id")
        message_id = (query.get("message") or {}).get("message_id")
        if message is None:
            return UNKNOWN_BUTTON
        if chat != self.settings.chat_id or chat != message.chat_id or message_id != message.message_id:
            logger.warning("refused a Telegram press for %s from another chat or message", message.approval_id)
            return "Not accepted: wrong chat or message."
        allowed = self.settings.allowed_user_ids
        if allowed and sender.get("id") not in allowed:
            logger.warning("refused a Telegram press for %s from user %s", message.approval_id, sender.get("id"))
            return "Not accepted: you may not answer this approval."
        if message.settled:
            return "Not accepted: this approval was already answered."
        if message.expires <= time.time():
            return "Not accepted: this approval has expired."
        if data[0] == "a" and too_long(message.text):
            return "Not accepted: this confirmation was too long to show here; approve it on the page or the CLI."
        who = f"@{sender['username']}" if sender.get("username") else sender.get("id")
        return message, data[0] == "a", describe_decider("telegram", who)

    async def _answer(self, query: dict[str, Any], text: str) -> None:
        try:
            await self.call("answerCallbackQuery", {"callback_query_id": query["id"], "text": text[:200]})
        except TelegramError as exc:
            logger.warning("could not answer a Telegram press: %s", exc)


_SPEAKS: type[MessageChannel] = TelegramChannel  # checked by mypy: `OutOfBand.announcers` finds it by its `say`

WEBHOOK_PATH = "/telegram/webhook"


def webhook_endpoint(channel: TelegramChannel) -> Any:
    """The webhook route: only requests carrying Telegram's secret token header count."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    async def endpoint(request: Request) -> JSONResponse:
        if not channel.webhook_authentic(request.headers.get(SECRET_HEADER)):
            return JSONResponse({"error": "forbidden"}, status_code=403)
        try:
            update = await request.json()
        except ValueError:
            return JSONResponse({"error": "not JSON"}, status_code=400)
        if isinstance(update, dict):
            await channel.handle_update(update)
        return JSONResponse({"ok": True})

    return endpoint


def message_text(notice: ApprovalNotice) -> str:
    """The confirmation text, who asked and until when; the page link when there is one.

    A confirmation that does not fit one message is never cut silently: the message says so,
    keeps the tool, who asked and the approval id, and sends the person where they can read
    all of it (`too_long` tells the channel to offer Deny only).
    """
    footer = f"{asker_line(notice)}\nApproval {notice.id}."
    if notice.link:
        footer += f"\n{notice.link}"
    text = f"{notice.message}\n\n{footer}"
    if telegram_length(text) <= MAX_TEXT - SETTLE_ROOM:
        return text
    where = (
        f"Read all of it on the approvals page: {notice.link}"
        if notice.link
        else f"Read all of it with `mcp-tools approvals show {notice.id}` where the server runs, "
        f"then answer with `mcp-tools approvals approve {notice.id}`."
    )
    head = (
        f"{TOO_LONG_MARK} This confirmation is too long for a Telegram message "
        f"({telegram_length(notice.message):,} characters; a message holds {MAX_TEXT:,}), so it is not shown here "
        f"and cannot be approved here. {where}\n\n"
        f"Tool: {notice.tool} ({notice.risk} risk)\n{asker_line(notice)}\nApproval {notice.id}."
    )
    room = max(0, (MAX_TEXT - SETTLE_ROOM - telegram_length(head) - 60) // 2)  # astral characters count twice
    summary = notice.summary
    if len(summary) > room:
        summary = f"{summary[:room]}… ({len(summary) - room:,} more characters)"
    return f"{head}\n\nStarts with: {summary}"


def telegram_length(text: str) -> int:
    """Telegram counts a message's length in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def asker_line(notice: ApprovalNotice) -> str:
    words = notice.asked_by
    return f"{words[:1].upper()}{words[1:]}; expires {iso_time(notice.expires)}."


def too_long(text: str) -> bool:
    """Whether a message we sent stands in for a confirmation too long to show (Deny only)."""
    return text.startswith(TOO_LONG_MARK)
