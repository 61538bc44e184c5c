"""A fake Telegram Bot API on 127.0.0.1 that checks requests as the real one does.

It serves `/bot<token>/<method>` for the methods the bot uses, answers in the Bot API's
envelope (`{"ok": true, "result": ...}` or `{"ok": false, "error_code", "description"}`),
and refuses what Telegram refuses: a wrong token (401), an unknown method (404), a chat it
does not know, empty or overlong text, callback data outside 1-64 bytes, editing a message
that does not exist or to the same text, answering a callback query twice or one it never
sent, getUpdates while a webhook is set, and two getUpdates at once (409). `press` plays a person tapping a button.
"""

from __future__ import annotations

import copy
import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.processes import free_port

TOKEN = "123456789:AAH-fake-token-for-tests-only-0123456"
CHAT = 4242
PERSON = {"id": 4242, "is_bot": False, "first_name": "Ada", "username": "ada"}
STRANGER = {"id": 666, "is_bot": False, "first_name": "Mallory", "username": "mallory"}


class BadRequest(Exception):
    def __init__(self, description: str, code: int = 400) -> None:
        super().__init__(description)
        self.code = code
        self.description = description


@dataclass
class FakeBotApi:
    token: str = TOKEN
    chats: set[int] = field(default_factory=lambda: {CHAT, 5555})
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    messages: dict[int, dict[str, Any]] = field(default_factory=dict)
    updates: list[dict[str, Any]] = field(default_factory=list)
    answers: dict[str, str | None] = field(default_factory=dict)
    webhook: dict[str, Any] | None = None
    base: str = ""
    polling: int = 0  # getUpdates requests in flight: Telegram allows one
    conflicts: int = 0
    closing: bool = False  # the test is over: a long poll in flight answers at once, not at its deadline

    def __post_init__(self) -> None:
        self._lock = threading.Condition()
        self._ids = itertools.count(100)
        self._update_ids = itertools.count(1000)
        self._queries = itertools.count(1)

    # -- what the test does -----------------------------------------------------------------

    def sent_with_buttons(self, timeout: float = 15) -> dict[str, Any]:
        """A copy of the newest message that still has its inline keyboard, once there is one."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                found = [m for m in self.messages.values() if m.get("reply_markup")]
                if found:
                    return copy.deepcopy(found[-1])
                if time.monotonic() > deadline:
                    raise TimeoutError("the bot sent no message with buttons")
                self._lock.wait(0.05)

    def press(
        self, message: dict[str, Any], button: str, user: dict[str, Any] | None = None, chat: int | None = None
    ) -> str:
        """A person taps Approve or Deny; returns the callback query id the bot must answer."""
        row = message["reply_markup"]["inline_keyboard"][0]
        data = next(b["callback_data"] for b in row if b["text"] == button)
        return self.press_data(message, data, user, chat)

    def press_data(
        self, message: dict[str, Any], data: str, user: dict[str, Any] | None = None, chat: int | None = None
    ) -> str:
        query_id = str(next(self._queries))
        chat_id = message["chat"]["id"] if chat is None else chat
        update = {
            "update_id": next(self._update_ids),
            "callback_query": {
                "id": query_id,
                "from": user or PERSON,
                "message": {
                    "message_id": message["message_id"],
                    "chat": {"id": chat_id, "type": "private"},
                    "date": int(time.time()),
                    "text": message["text"],
                },
                "chat_instance": "-1",
                "data": data,
            },
        }
        with self._lock:
            self.answers[query_id] = None
            self.updates.append(update)
            self._lock.notify_all()
        return query_id

    def answer_to(self, query_id: str, timeout: float = 15) -> str:
        unanswered = f"callback query {query_id} not answered"
        answer: str = self._until(lambda: self.answers.get(query_id), timeout, unanswered)
        return answer

    def edited_text(self, message_id: int, containing: str, timeout: float = 15) -> str:
        def edited() -> str | None:
            text = self.messages[message_id]["text"]
            return text if containing in text else None

        text: str = self._until(edited, timeout, f"message {message_id} never showed {containing!r}")
        return text

    def methods(self) -> list[str]:
        with self._lock:
            return [method for method, _ in self.calls]

    def until(self, probe: Any, what: str, timeout: float = 15) -> Any:
        """Wait until `probe()` holds (called under the fake's lock), or fail saying `what`."""
        return self._until(probe, timeout, what)

    def _until(self, probe: Any, timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                value = probe()
                if value:
                    return value
                if time.monotonic() > deadline:
                    raise TimeoutError(what)
                self._lock.wait(0.05)

    # -- the Bot API ------------------------------------------------------------------------

    def app(self) -> Starlette:
        async def endpoint(request: Request) -> JSONResponse:
            if request.path_params["token"] != self.token:
                return JSONResponse({"ok": False, "error_code": 401, "description": "Unauthorized"}, status_code=401)
            method = request.path_params["method"]
            handler = getattr(self, f"api_{method}", None)
            if handler is None:
                return JSONResponse({"ok": False, "error_code": 404, "description": "Not Found"}, status_code=404)
            try:
                params = await request.json()
            except ValueError:
                params = dict(await request.form())
            with self._lock:
                self.calls.append((method, params))
            try:
                import anyio

                result = await anyio.to_thread.run_sync(handler, params)
            except BadRequest as exc:
                body = {"ok": False, "error_code": exc.code, "description": exc.description}
                return JSONResponse(body, status_code=exc.code)
            return JSONResponse({"ok": True, "result": result})

        return Starlette(routes=[Route("/bot{token}/{method}", endpoint, methods=["GET", "POST"])])

    def _chat(self, params: dict[str, Any]) -> int:
        chat_id = params.get("chat_id")
        if chat_id is None:
            raise BadRequest("Bad Request: chat_id is empty")
        if int(chat_id) not in self.chats:
            raise BadRequest("Bad Request: chat not found")
        return int(chat_id)

    @staticmethod
    def _text(params: dict[str, Any]) -> str:
        text = params.get("text")
        if not isinstance(text, str) or not text.strip():
            raise BadRequest("Bad Request: message text is empty")
        if len(text.encode("utf-16-le")) // 2 > 4096:  # Telegram counts UTF-16 code units
            raise BadRequest("Bad Request: message is too long")
        return text

    @staticmethod
    def _markup(params: dict[str, Any]) -> dict[str, Any] | None:
        markup = params.get("reply_markup")
        if markup is None:
            return None
        rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
        if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
            raise BadRequest(
                'Bad Request: can\'t parse inline keyboard button: field "inline_keyboard" must be an Array'
            )
        for row in rows:
            for button in row:
                if not isinstance(button.get("text"), str) or not button["text"]:
                    raise BadRequest("Bad Request: can't parse inline keyboard button: Text buttons are unallowed")
                data = button.get("callback_data")
                if not isinstance(data, str) or not 1 <= len(data.encode()) <= 64:
                    raise BadRequest("Bad Request: BUTTON_DATA_INVALID")
        checked: dict[str, Any] = markup
        return checked

    def api_getMe(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"id": 123456789, "is_bot": True, "first_name": "Approvals", "username": "approvals_test_bot"}

    def api_sendMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = self._chat(params)
        text = self._text(params)
        markup = self._markup(params)
        message: dict[str, Any] = {
            "message_id": next(self._ids),
            "chat": {"id": chat_id, "type": "private"},
            "date": int(time.time()),
            "text": text,
        }
        if markup:
            message["reply_markup"] = markup
        with self._lock:
            self.messages[message["message_id"]] = message
            self._lock.notify_all()
        return message

    def api_editMessageText(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = self._chat(params)
        text = self._text(params)
        markup = self._markup(params)
        with self._lock:
            message = self.messages.get(int(params.get("message_id") or 0))
            if message is None or message["chat"]["id"] != chat_id:
                raise BadRequest("Bad Request: message to edit not found")
            if message["text"] == text and message.get("reply_markup") == markup:
                raise BadRequest("Bad Request: message is not modified")
            message["text"] = text
            message.pop("reply_markup", None)
            if markup:
                message["reply_markup"] = markup
            self._lock.notify_all()
            return message

    def api_answerCallbackQuery(self, params: dict[str, Any]) -> bool:
        query_id = params.get("callback_query_id")
        text = params.get("text", "")
        if len(text) > 200:
            raise BadRequest("Bad Request: MESSAGE_TOO_LONG")
        with self._lock:
            if query_id not in self.answers or self.answers[query_id] is not None:
                raise BadRequest("Bad Request: query is too old and response timeout expired or query ID is invalid")
            self.answers[query_id] = text or "(empty)"
            self._lock.notify_all()
        return True

    def api_getUpdates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        if self.webhook is not None:
            raise BadRequest("Conflict: can't use getUpdates method while webhook is active", code=409)
        offset = int(params.get("offset") or 0)
        timeout = float(params.get("timeout") or 0)
        allowed = params.get("allowed_updates")
        if allowed is not None and not isinstance(allowed, list):
            raise BadRequest("Bad Request: can't parse allowed updates")
        deadline = time.monotonic() + timeout
        with self._lock:
            if self.polling:
                self.conflicts += 1
                raise BadRequest(
                    "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
                    code=409,
                )
            self.polling += 1
            try:
                if offset:
                    self.updates = [u for u in self.updates if u["update_id"] >= offset]
                while True:
                    ready = [u for u in self.updates if allowed is None or any(k in u for k in allowed)]
                    if ready or self.closing or time.monotonic() >= deadline:
                        return ready
                    self._lock.wait(min(0.05, max(0.0, deadline - time.monotonic())))
            finally:
                self.polling -= 1

    def api_setWebhook(self, params: dict[str, Any]) -> bool:
        url = params.get("url", "")
        secret = params.get("secret_token", "")
        if not url.startswith(("https://", "http://127.0.0.1")):
            raise BadRequest("Bad Request: bad webhook: An HTTPS URL must be provided for webhook")
        if secret and not (1 <= len(secret) <= 256 and all(c.isalnum() or c in "_-" for c in secret)):
            raise BadRequest("Bad Request: secret token contains unallowed characters")
        self.webhook = dict(params)
        return True


@contextmanager
def running_fake(fake: FakeBotApi | None = None) -> Iterator[FakeBotApi]:
    """Serve the fake with uvicorn on a free loopback port, in a thread, for the test's duration."""
    fake = fake or FakeBotApi()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(fake.app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline:
            raise TimeoutError("fake Bot API did not start")
        time.sleep(0.02)
    fake.base = f"http://127.0.0.1:{port}"
    try:
        yield fake
    finally:
        server.should_exit = True
        with fake._lock:
            fake.closing = True
            fake._lock.notify_all()
        thread.join(timeout=10)
