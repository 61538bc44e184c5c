"""A stateful fake of the Gmail API v1: messages, threads, labels, drafts and attachments.

Messages are stored as raw RFC 2822 bytes, as Gmail keeps them; `format=full` answers are
built from them the way Gmail builds them (a payload tree, small bodies inline, attachments
by id). Replies join a thread only as Gmail's rule says: the threadId is given, the
References or In-Reply-To header names a message in it, and the subjects match.
"""

from __future__ import annotations

import base64
import email.header
import email.parser
import email.policy
import email.utils
import itertools
import re
import secrets
import time
from dataclasses import dataclass, field
from email.message import Message
from typing import Any

from tests.servers.fake_google.discovery import Discovery
from tests.servers.fake_google.server import ApiError, FakeGoogle, Token

SYSTEM_LABELS = [
    "INBOX",
    "SENT",
    "DRAFT",
    "TRASH",
    "SPAM",
    "UNREAD",
    "STARRED",
    "IMPORTANT",
    "CATEGORY_PERSONAL",
    "CATEGORY_UPDATES",
]
INLINE_LIMIT = 2048  # named parts and large non-text parts are fetched by attachment id


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def header_text(value: object) -> str:
    """Header values as Gmail returns them: RFC 2047 encoded words decoded."""
    try:
        return str(email.header.make_header(email.header.decode_header(str(value))))
    except (ValueError, LookupError):
        return str(value)


def _subject_key(subject: str) -> str:
    return re.sub(r"^((re|fwd?|aw|wg)\s*:\s*)+", "", subject.strip(), flags=re.IGNORECASE).lower()


def _part_text(part: Any) -> str:
    """A text part for snippets and search; a label Python does not know reads as UTF-8."""
    data = part.get_payload(decode=True) or b""
    try:
        return data.decode(part.get_content_charset() or "utf-8", errors="replace")
    except LookupError:
        return data.decode("utf-8", errors="replace")


@dataclass
class StoredMessage:
    id: str
    thread_id: str
    raw: bytes
    labels: list[str]
    internal_date: int
    attachments: dict[str, bytes] = field(default_factory=dict)

    def parsed(self) -> Message:
        return email.parser.BytesParser(policy=email.policy.compat32).parsebytes(self.raw)


class FakeGmail:
    def __init__(self, google: FakeGoogle) -> None:
        self.google = google
        self.messages: dict[str, StoredMessage] = {}
        self.drafts: dict[str, str] = {}  # draft id -> message id
        self.uploads = 0
        self.labels: dict[str, dict[str, Any]] = {
            name: {"id": name, "name": name, "type": "system"} for name in SYSTEM_LABELS
        }
        self._ids = itertools.count(0x18C0000000000000 + secrets.randbelow(1 << 40))
        self._clock = int(time.time() * 1000) - 10**8
        google.apis["/gmail/v1/"] = (Discovery("gmail", "v1"), self)

    # --- set-up helpers ------------------------------------------------------------------------
    def _new_id(self) -> str:
        return format(next(self._ids), "x")

    def add(self, raw: bytes | str, labels: list[str] | None = None, thread_id: str | None = None) -> StoredMessage:
        """Deliver a message into the mailbox (newest last)."""
        raw = raw.encode() if isinstance(raw, str) else raw
        self._clock += 60_000
        message_id = self._new_id()
        stored = StoredMessage(
            message_id,
            thread_id or message_id,
            raw,
            list(labels if labels is not None else ["INBOX", "UNREAD"]),
            self._clock,
        )
        with self.google.lock:
            self.messages[message_id] = stored
        return stored

    def add_label(self, name: str) -> str:
        label_id = "Label_" + str(len(self.labels))
        self.labels[label_id] = {"id": label_id, "name": name, "type": "user"}
        return label_id

    def thread(self, thread_id: str) -> list[StoredMessage]:
        return sorted((m for m in self.messages.values() if m.thread_id == thread_id), key=lambda m: m.internal_date)

    # --- dispatch ------------------------------------------------------------------------------
    def handle(
        self,
        method_id: str,
        path: dict[str, str],
        params: dict[str, Any],
        body: Any,
        token: Token,
        media: bytes | None,
        headers: dict[str, str],
    ) -> Any:
        if path.get("userId") not in ("me", token.account):
            raise ApiError(403, "Delegation denied for " + token.account, "forbidden")
        if media is not None:  # an upload: the message bytes came as media, not as `raw`
            body = dict(body or {})
            if method_id == "gmail.users.messages.send":
                body["raw"] = b64url(media)
            else:
                body["message"] = {**body.get("message", {}), "raw": b64url(media)}
            self.uploads += 1
        name = method_id.removeprefix("gmail.users.").replace(".", "_")
        handler = getattr(self, "do_" + name, None)
        if handler is None:
            raise ApiError(501, f"{method_id} is not implemented by the fake")
        return handler(path, params, body)

    def _message(self, message_id: str) -> StoredMessage:
        stored = self.messages.get(message_id)
        if stored is None:
            raise ApiError(404, "Requested entity was not found.", "notFound")
        return stored

    # --- representation ------------------------------------------------------------------------
    def _part(self, stored: StoredMessage, part: Message, part_id: str) -> dict[str, Any]:
        headers = [{"name": key, "value": header_text(value)} for key, value in part.items()]
        out: dict[str, Any] = {
            "partId": part_id,
            "mimeType": part.get_content_type(),
            "filename": part.get_filename() or "",
            "headers": headers,
        }
        if part.is_multipart():
            out["body"] = {"size": 0}
            out["parts"] = [
                self._part(stored, child, f"{part_id}.{index}" if part_id else str(index))
                for index, child in enumerate(part.get_payload())
            ]
            return out
        data = part.get_payload(decode=True) or b""
        if out["filename"] or (part.get_content_maintype() != "text" and len(data) > INLINE_LIMIT):
            attachment_id = "ANGjdJ" + b64url(f"{stored.id}:{part_id}".encode()).rstrip("=")
            stored.attachments[attachment_id] = data
            out["body"] = {"attachmentId": attachment_id, "size": len(data)}
        else:
            out["body"] = {"size": len(data), "data": b64url(data)} if data else {"size": 0}
        return out

    def _representation(self, stored: StoredMessage, fmt: str, metadata_headers: list[str] | None) -> dict[str, Any]:
        parsed = stored.parsed()
        text = ""
        for part in parsed.walk():
            if part.get_content_type() == "text/plain" and not part.get_filename():
                text = _part_text(part)
                break
        out: dict[str, Any] = {
            "id": stored.id,
            "threadId": stored.thread_id,
            "labelIds": list(stored.labels),
            "snippet": " ".join(text.split())[:200],
            "historyId": "1000",
            "internalDate": str(stored.internal_date),
            "sizeEstimate": len(stored.raw),
        }
        if fmt == "raw":
            out["raw"] = b64url(stored.raw)
        elif fmt == "metadata":
            wanted = {name.lower() for name in metadata_headers or []}
            headers = [
                {"name": k, "value": header_text(v)} for k, v in parsed.items() if not wanted or k.lower() in wanted
            ]
            out["payload"] = {  # Gmail sends headers but no parts in metadata format
                "partId": "",
                "mimeType": parsed.get_content_type(),
                "filename": "",
                "headers": headers,
                "body": {"size": 0},
            }
        elif fmt == "full":
            out["payload"] = self._part(stored, parsed, "")
        return out

    def _visible(self, stored: StoredMessage, include_spam_trash: bool) -> bool:
        return include_spam_trash or not ({"SPAM", "TRASH"} & set(stored.labels))

    def _matches(self, stored: StoredMessage, query: str) -> bool:
        parsed = stored.parsed()
        haystack_parts = [str(parsed.get("Subject", "")), str(parsed.get("From", "")), str(parsed.get("To", ""))]
        for part in parsed.walk():
            if part.get_content_maintype() == "text":
                haystack_parts.append(_part_text(part))
        haystack = "\n".join(haystack_parts).lower()
        for term in re.findall(r'(?:[\w:.@-]+|"[^"]+")', query):
            term = term.strip('"').lower()
            key, _, value = term.partition(":")
            if _ and key == "in":
                if value.upper() not in stored.labels and value != "anywhere":
                    return False
            elif _ and key == "is":
                wanted = {"unread": "UNREAD", "starred": "STARRED", "important": "IMPORTANT"}.get(value)
                if wanted is None or wanted not in stored.labels:
                    return False
            elif _ and key == "label":
                ids = {lid for lid, label in self.labels.items() if label["name"].lower() == value}
                if not ids & set(stored.labels):
                    return False
            elif _ and key == "has" and value == "attachment":
                if not any(part.get_filename() for part in parsed.walk()):
                    return False
            elif _ and key in ("from", "to", "subject"):
                if value not in str(parsed.get(key, "")).lower():
                    return False
            elif term not in haystack:
                return False
        return True

    # --- users ---------------------------------------------------------------------------------
    def do_getProfile(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        return {
            "emailAddress": self.google.account,
            "messagesTotal": len(self.messages),
            "threadsTotal": len({m.thread_id for m in self.messages.values()}),
            "historyId": "1000",
        }

    # --- messages ------------------------------------------------------------------------------
    def do_messages_list(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        include = params.get("includeSpamTrash") == "true"
        label_ids = params.get("labelIds") or []
        query = params.get("q", "")
        found = [
            m
            for m in sorted(self.messages.values(), key=lambda m: -m.internal_date)
            if self._visible(m, include)
            and set(label_ids) <= set(m.labels)
            and self._matches(m, query)
            and "DRAFT" not in m.labels
        ]
        size = int(params.get("maxResults", 100))
        token = params.get("pageToken") or "0"
        if not token.isdigit():
            raise ApiError(400, "Invalid page token.", "invalid")
        start = int(token)
        page = found[start : start + size]
        out: dict[str, Any] = {"resultSizeEstimate": len(found)}
        if page:
            out["messages"] = [{"id": m.id, "threadId": m.thread_id} for m in page]
        if start + size < len(found):
            out["nextPageToken"] = str(start + size)
        return out

    def do_messages_get(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        stored = self._message(path["id"])
        return self._representation(stored, params.get("format", "full"), params.get("metadataHeaders"))

    def do_messages_attachments_get(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        stored = self._message(path["messageId"])
        if not stored.attachments:
            self._representation(stored, "full", None)
        data = stored.attachments.get(path["id"])
        if data is None:
            raise ApiError(400, "Invalid attachment token", "invalidArgument")
        return {"attachmentId": path["id"], "size": len(data), "data": b64url(data)}

    def _modify(self, stored: StoredMessage, body: dict[str, Any]) -> None:
        for label in body.get("addLabelIds", []) + body.get("removeLabelIds", []):
            if label not in self.labels:
                raise ApiError(400, f"Invalid label: {label}", "invalidArgument")
        for label in body.get("removeLabelIds", []):
            if label in stored.labels:
                stored.labels.remove(label)
        for label in body.get("addLabelIds", []):
            if label not in stored.labels:
                stored.labels.append(label)

    def do_messages_modify(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        stored = self._message(path["id"])
        self._modify(stored, body or {})
        return self._representation(stored, "minimal", None)

    def do_messages_trash(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        stored = self._message(path["id"])
        self._modify(stored, {"addLabelIds": ["TRASH"], "removeLabelIds": ["INBOX"]})
        return self._representation(stored, "minimal", None)

    def do_messages_delete(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        raise AssertionError("permanent delete must never be called")

    do_messages_batchDelete = do_threads_delete = do_messages_delete

    def _deliver(self, raw: bytes, thread_id: str | None, labels: list[str]) -> StoredMessage:
        parsed = email.parser.BytesParser(policy=email.policy.compat32).parsebytes(raw)
        if "DRAFT" not in labels:
            recipients = email.utils.getaddresses(
                parsed.get_all("To", []) + parsed.get_all("Cc", []) + parsed.get_all("Bcc", [])
            )
            if not any(address for _, address in recipients):
                raise ApiError(400, "Invalid To header", "invalidArgument")
        if not parsed.get("From"):
            del parsed["From"]
            parsed["From"] = self.google.account
        if "Bcc" in parsed and "DRAFT" not in labels:
            del parsed["Bcc"]
        if not parsed.get("Message-ID"):
            parsed["Message-ID"] = f"<{secrets.token_hex(8)}@mail.gmail.com>"
        raw = parsed.as_bytes()
        joined = None
        if thread_id is not None:
            members = self.thread(thread_id)
            if not members:
                raise ApiError(404, "Requested entity was not found.", "notFound")
            referenced = set(
                re.findall(r"<[^>]+>", str(parsed.get("References", "")) + " " + str(parsed.get("In-Reply-To", "")))
            )
            ids = {str(m.parsed().get("Message-ID", "")).strip() for m in members}
            subject_ok = _subject_key(str(parsed.get("Subject", ""))) == _subject_key(
                str(members[0].parsed().get("Subject", ""))
            )
            if referenced & ids and subject_ok:
                joined = thread_id
        stored = self.add(raw, labels, thread_id=joined)
        return stored

    def do_messages_send(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        body = body or {}
        if not body.get("raw"):
            raise ApiError(400, "'raw' RFC822 payload message string or uploading message via /upload/* URL required")
        stored = self._deliver(unb64url(body["raw"]), body.get("threadId"), ["SENT"])
        return {"id": stored.id, "threadId": stored.thread_id, "labelIds": stored.labels}

    # --- threads -------------------------------------------------------------------------------
    def _thread_or_404(self, thread_id: str) -> list[StoredMessage]:
        members = self.thread(thread_id)
        if not members:
            raise ApiError(404, "Requested entity was not found.", "notFound")
        return members

    def do_threads_get(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        members = self._thread_or_404(path["id"])
        fmt = params.get("format", "full")
        return {
            "id": path["id"],
            "historyId": "1000",
            "messages": [self._representation(m, fmt, params.get("metadataHeaders")) for m in members],
        }

    def do_threads_modify(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        members = self._thread_or_404(path["id"])
        for stored in members:
            self._modify(stored, body or {})
        return {"id": path["id"]}

    def do_threads_trash(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        for stored in self._thread_or_404(path["id"]):
            self._modify(stored, {"addLabelIds": ["TRASH"], "removeLabelIds": ["INBOX"]})
        return {"id": path["id"]}

    # --- labels --------------------------------------------------------------------------------
    def do_labels_list(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        return {"labels": list(self.labels.values())}

    # --- drafts --------------------------------------------------------------------------------
    def _draft_view(self, draft_id: str, fmt: str = "minimal") -> dict[str, Any]:
        stored = self._message(self.drafts[draft_id])
        return {"id": draft_id, "message": self._representation(stored, fmt, None)}

    def _draft_message(self, body: Any) -> tuple[bytes, str | None]:
        message = (body or {}).get("message") or {}
        if not message.get("raw"):
            raise ApiError(400, "Missing draft message", "invalidArgument")
        return unb64url(message["raw"]), message.get("threadId")

    def do_drafts_create(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        raw, thread_id = self._draft_message(body)
        stored = self._deliver(raw, thread_id, ["DRAFT"])
        draft_id = "r" + str(secrets.randbelow(10**18))
        self.drafts[draft_id] = stored.id
        return self._draft_view(draft_id)

    def do_drafts_update(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        if path["id"] not in self.drafts:
            raise ApiError(404, "Requested entity was not found.", "notFound")
        raw, thread_id = self._draft_message(body)
        old = self.messages.pop(self.drafts[path["id"]])
        stored = self._deliver(raw, thread_id or None, ["DRAFT"])
        if thread_id is None and old.thread_id != old.id:
            stored.thread_id = old.thread_id
        self.drafts[path["id"]] = stored.id
        return self._draft_view(path["id"])

    def do_drafts_get(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        if path["id"] not in self.drafts:
            raise ApiError(404, "Requested entity was not found.", "notFound")
        return self._draft_view(path["id"], params.get("format", "full"))

    def do_drafts_send(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        draft_id = (body or {}).get("id")
        if draft_id not in self.drafts:
            raise ApiError(404, "Requested entity was not found.", "notFound")
        stored = self.messages.pop(self.drafts.pop(draft_id))
        sent = self._deliver(stored.raw, stored.thread_id if stored.thread_id != stored.id else None, ["SENT"])
        return {"id": sent.id, "threadId": sent.thread_id, "labelIds": sent.labels}

    def do_drafts_list(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        return {"drafts": [{"id": d, "message": {"id": m}} for d, m in self.drafts.items()]}
