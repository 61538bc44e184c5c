"""The Gmail service: the shared Google client plus what the gmail tools do with it.

Every method here is blocking (googleapiclient is synchronous) and runs in a worker thread.
"""

from __future__ import annotations

import fnmatch
import hashlib
import time
from typing import Any

from mcp_tools.core.tooling import Environment, ToolFailure
from mcp_tools.servers.gmail.config import GmailConfig
from mcp_tools.servers.gmail.mime import Body, Outgoing, addresses, extract, headers_of
from mcp_tools.servers.google.config import GoogleConfig
from mcp_tools.servers.google.people import People
from mcp_tools.servers.google.service import GoogleService
from mcp_tools.servers.google.text import b64url_decode, b64url_encode

# The gmail tools this service calls Google for (each names its scopes; `tools.py` declares them)
SEARCH_TOOL = "gmail.search"
READ_TOOL = "gmail.read"
ATTACHMENT_TOOL = "gmail.attachment"
DRAFT_TOOL = "gmail.draft"
SEND_TOOL = "gmail.send"
LABELS_TOOL = "gmail.labels"
TRASH_TOOL = "gmail.trash"

API, VERSION = "gmail", "v1"
ME = "me"
# format=full trimmed to what a hit shows: headers, and part names to count attachments (3 levels deep)
SEARCH_FIELDS = "id,threadId,labelIds,snippet,payload(headers,parts(filename,parts(filename,parts(filename))))"
LABEL_CACHE_SECONDS = 300
UPLOAD_ABOVE = 4 * 1024 * 1024  # larger messages go as a media upload, not base64 inside JSON


class GmailService(GoogleService):
    NAMESPACE, API, VERSION = "gmail", API, VERSION

    def __init__(self, config: GmailConfig, google: GoogleConfig, env: Environment, scopes: list[str]) -> None:
        super().__init__(google, env, scopes)
        self.config = config
        self._labels: tuple[float, list[dict[str, Any]]] | None = None
        self._profile: str | None = None
        self.people = People(self)  # recipients given by name

    def sender(self, tool: str) -> str:
        if self._profile is None:
            self._profile = self.call(tool, lambda s: s.users().getProfile(userId=ME)).get("emailAddress", "")
        return self._profile or ""

    # --- labels -------------------------------------------------------------------------------
    def labels(self, tool: str, fresh: bool = False) -> list[dict[str, Any]]:
        now = time.monotonic()
        if fresh or self._labels is None or now - self._labels[0] > LABEL_CACHE_SECONDS:
            found = self.call(tool, lambda s: s.users().labels().list(userId=ME)).get("labels", [])
            self._labels = (now, found)
        return self._labels[1]

    def label_names(self, tool: str) -> dict[str, str]:
        return {label["id"]: label.get("name", label["id"]) for label in self.labels(tool)}

    def resolve_labels(self, tool: str, names: list[str]) -> list[str]:
        """Names (any case) or ids to ids; an unknown one is an error listing what exists."""
        labels = self.labels(tool)
        by_name = {label.get("name", "").lower(): label["id"] for label in labels}
        ids = {label["id"] for label in labels}
        resolved = []
        for name in names:
            if name in ids:
                resolved.append(name)
            elif name.lower() in by_name:
                resolved.append(by_name[name.lower()])
            else:
                known = ", ".join(sorted(label.get("name", "") for label in labels)[:40])
                raise ToolFailure("invalid_arguments", f"no label named {name!r}", f"labels: {known}")
        return resolved

    # --- search -------------------------------------------------------------------------------
    def search(self, query: str, labels: list[str], limit: int, cursor: str | None) -> dict[str, Any]:
        tool = SEARCH_TOOL
        label_ids = self.resolve_labels(tool, labels) if labels else []
        if not query and not label_ids:
            label_ids = ["INBOX"]
        listing = self.call(
            tool,
            lambda s: (
                s.users()
                .messages()
                .list(userId=ME, q=query or None, labelIds=label_ids or None, maxResults=limit, pageToken=cursor)
            ),
        )
        refs = listing.get("messages", [])
        requests = [
            (
                ref["id"],
                lambda s, i=ref["id"]: s.users().messages().get(userId=ME, id=i, format="full", fields=SEARCH_FIELDS),
            )
            for ref in refs
        ]
        found, failed = self.batch(tool, requests) if requests else ({}, {})
        names = self.label_names(tool)
        hits = []
        for ref in refs:
            message = found.get(ref["id"])
            if message is None:
                continue
            payload = message.get("payload") or {}
            headers = headers_of(payload)
            hits.append(
                {
                    "id": message["id"],
                    "thread_id": message.get("threadId", ""),
                    "sender": headers.get("from", ""),
                    "to": headers.get("to", ""),
                    "subject": headers.get("subject", ""),
                    "date": headers.get("date", ""),
                    "snippet": message.get("snippet", ""),
                    "labels": [names.get(label, label) for label in message.get("labelIds", [])],
                    "attachments": count_attachments(payload),
                }
            )
        return {
            "messages": hits,
            "next_cursor": listing.get("nextPageToken"),
            "failed": [
                {"id": key, "kind": failure.kind, "message": failure.message, "hint": failure.hint or ""}
                for key, failure in failed.items()
            ],
        }

    # --- read ---------------------------------------------------------------------------------
    def _body(self, tool: str, message: dict[str, Any]) -> Body:
        payload = message.get("payload") or {}
        body = extract(payload)
        if body.fetch:
            fetched = {}
            for part in body.fetch[:20]:
                data = self.call(
                    tool,
                    lambda s, p=part: (
                        s.users()
                        .messages()
                        .attachments()
                        .get(userId=ME, messageId=message["id"], id=p["body"]["attachmentId"])
                    ),
                )
                fetched[part.get("partId", "")] = b64url_decode(data.get("data", ""))
            body = extract(payload, fetched)
        return body

    def read(self, message_id: str, thread: bool) -> dict[str, Any]:
        tool = READ_TOOL
        if thread:
            found = self.call(tool, lambda s: s.users().threads().get(userId=ME, id=message_id, format="full"))
            messages = found.get("messages", [])
            thread_id = found.get("id", message_id)
        else:
            messages = [self.call(tool, lambda s: s.users().messages().get(userId=ME, id=message_id, format="full"))]
            thread_id = messages[0].get("threadId", "")
        names = self.label_names(tool)
        infos, texts, warnings = [], [], []
        for number, message in enumerate(messages, start=1):
            headers = headers_of(message.get("payload") or {})
            body = self._body(tool, message)
            warnings.extend(body.warnings)
            infos.append(
                {
                    "id": message.get("id", ""),
                    "sender": headers.get("from", ""),
                    "to": headers.get("to", ""),
                    "cc": headers.get("cc", ""),
                    "subject": headers.get("subject", ""),
                    "date": headers.get("date", ""),
                    "labels": [names.get(label, label) for label in message.get("labelIds", [])],
                    "attachments": [
                        {
                            "index": item.index,
                            "filename": item.filename,
                            "content_type": item.content_type,
                            "size": item.size,
                        }
                        for item in body.attachments
                    ],
                }
            )
            if len(messages) > 1:
                texts.append(
                    f"--- message {number} of {len(messages)} (id {message.get('id')}), "
                    f"from {headers.get('from', '')}, {headers.get('date', '')} ---\n{body.text}"
                )
            else:
                texts.append(body.text)
        return {
            "id": message_id,
            "thread_id": thread_id,
            "messages": infos,
            "text": "\n\n".join(texts),
            "starts": [sum(len(text) + 2 for text in texts[:i]) for i in range(len(texts))],
            "warnings": warnings,
        }

    # --- attachments --------------------------------------------------------------------------
    def attachment(self, message_id: str, index: int) -> tuple[Any, bytes]:
        tool = ATTACHMENT_TOOL
        message = self.call(tool, lambda s: s.users().messages().get(userId=ME, id=message_id, format="full"))
        body = extract(message.get("payload") or {})
        if index >= len(body.attachments):
            raise ToolFailure(
                "not_found",
                f"message {message_id} has {len(body.attachments)} attachment(s); index {index} is out of range",
                "use an index from gmail_read",
            )
        item = body.attachments[index]
        if item.data is not None:
            return item, b64url_decode(item.data)
        data = self.call(
            tool,
            lambda s: s.users().messages().attachments().get(userId=ME, messageId=message_id, id=item.attachment_id),
        )
        return item, b64url_decode(data.get("data", ""))

    # --- composing ----------------------------------------------------------------------------
    def outgoing(self, tool: str, args: Any, files: list[tuple[str, bytes]] | None) -> Outgoing:
        """The message the arguments describe, reply headers and attachments (`files`, read through
        files.read by the handler) included."""
        to, subject, in_reply_to, references, thread_id = list(args.to), args.subject, None, None, None
        if args.reply_to:
            original = self.call(
                tool,
                lambda s: (
                    s.users()
                    .messages()
                    .get(
                        userId=ME,
                        id=args.reply_to,
                        format="metadata",
                        metadataHeaders=["Message-ID", "References", "Subject", "From", "Reply-To"],
                    )
                ),
            )
            headers = headers_of(original.get("payload") or {})
            in_reply_to = headers.get("message-id") or None
            references = " ".join(part for part in (headers.get("references"), in_reply_to) if part) or None
            thread_id = original.get("threadId")
            if not subject:
                old = headers.get("subject", "")
                subject = old if old.lower().startswith("re:") else f"Re: {old}"
            if not to:
                to = [headers.get("reply-to") or headers.get("from", "")]
        attached = list(files or [])
        if args.attachments and files is None:
            raise ToolFailure("internal_error", "the attachments were not read through files.read")
        total = sum(len(data) for _, data in attached)
        if total > self.config.max_send_bytes:
            raise ToolFailure(
                "too_large",
                f"the attachments add up to {total} bytes; the limit is {self.config.max_send_bytes}",
                "send fewer or smaller files",
            )
        return Outgoing(
            sender=self.sender(tool),
            to=to,
            cc=list(args.cc),
            bcc=list(args.bcc),
            subject=subject or "",
            text=args.body,
            html=args.html,
            attachments=attached,
            in_reply_to=in_reply_to,
            references=references,
            thread_id=thread_id,
        )

    def draft(self, args: Any, files: list[tuple[str, bytes]] | None) -> dict[str, Any]:
        tool = DRAFT_TOOL
        outgoing = self.outgoing(tool, args, files)
        raw = outgoing.build()
        message: dict[str, Any] = {"threadId": outgoing.thread_id} if outgoing.thread_id else {}
        media = None
        if len(raw) > UPLOAD_ABOVE:
            media = _media(raw)
        else:
            message["raw"] = b64url_encode(raw)
        client = self.client

        def build(s: Any) -> Any:
            drafts = s.users().drafts()
            if args.draft_id:
                body = {"id": args.draft_id, "message": message}
                request = drafts.update(userId=ME, id=args.draft_id, body=body, media_body=media)
            else:
                request = drafts.create(userId=ME, body={"message": message}, media_body=media)
            return client.fix_upload(request)

        draft = self.call(tool, build)
        return {
            "draft_id": draft["id"],
            "message_id": draft.get("message", {}).get("id", ""),
            "thread_id": draft.get("message", {}).get("threadId", ""),
            "outgoing": outgoing,
        }

    def draft_raw(self, draft_id: str) -> tuple[bytes, str | None]:
        draft = self.call(SEND_TOOL, lambda s: s.users().drafts().get(userId=ME, id=draft_id, format="raw"))
        message = draft.get("message", {})
        return b64url_decode(message.get("raw", "")), message.get("threadId")

    def send_raw(self, raw: bytes, thread_id: str | None) -> dict[str, Any]:
        body: dict[str, Any] = {"threadId": thread_id} if thread_id else {}
        media = None
        if len(raw) > UPLOAD_ABOVE:
            media = _media(raw)
        else:
            body["raw"] = b64url_encode(raw)
        client = self.client
        return self.call_object(
            SEND_TOOL,
            lambda s: client.fix_upload(s.users().messages().send(userId=ME, body=body, media_body=media)),
        )

    def send_draft(self, draft_id: str) -> dict[str, Any]:
        return self.call_object(SEND_TOOL, lambda s: s.users().drafts().send(userId=ME, body={"id": draft_id}))

    def refused_recipients(self, recipients: list[str]) -> list[str]:
        patterns = self.config.allowed_recipients
        if not patterns:
            return []
        return [r for r in recipients if not any(fnmatch.fnmatchcase(r.lower(), p) for p in patterns)]

    # --- labels and trash ---------------------------------------------------------------------
    def modify(
        self, ids: list[str], thread: bool, add: list[str], remove: list[str]
    ) -> tuple[list[str], dict[str, ToolFailure]]:
        tool = LABELS_TOOL
        body: dict[str, Any] = {}
        if add:
            body["addLabelIds"] = add
        if remove:
            body["removeLabelIds"] = remove
        if thread:
            requests = [(i, lambda s, i=i: s.users().threads().modify(userId=ME, id=i, body=body)) for i in ids]
        else:
            requests = [(i, lambda s, i=i: s.users().messages().modify(userId=ME, id=i, body=body)) for i in ids]
        done, failed = self.batch(tool, requests)
        return [i for i in ids if i in done], failed

    def describe_items(self, tool: str, ids: list[str], thread: bool) -> tuple[dict[str, str], dict[str, ToolFailure]]:
        """One line (subject, sender) per id; ids that do not exist come back as failures."""
        if thread:
            requests = [
                (
                    i,
                    lambda s, i=i: (
                        s.users().threads().get(userId=ME, id=i, format="metadata", metadataHeaders=["Subject", "From"])
                    ),
                )
                for i in ids
            ]
        else:
            requests = [
                (
                    i,
                    lambda s, i=i: (
                        s.users()
                        .messages()
                        .get(userId=ME, id=i, format="metadata", metadataHeaders=["Subject", "From"])
                    ),
                )
                for i in ids
            ]
        found, failed = self.batch(tool, requests)
        lines: dict[str, str] = {}
        for key, item in found.items():
            first = (item.get("messages") or [item])[0] if thread else item
            headers = headers_of(first.get("payload") or {})
            count = f" ({len(item.get('messages', []))} messages)" if thread else ""
            lines[key] = f"{headers.get('subject', '(no subject)')!r} from {headers.get('from', '?')}{count}"
        return lines, failed

    def trash(self, ids: list[str], thread: bool) -> tuple[list[str], dict[str, ToolFailure]]:
        tool = TRASH_TOOL
        if thread:
            requests = [(i, lambda s, i=i: s.users().threads().trash(userId=ME, id=i)) for i in ids]
        else:
            requests = [(i, lambda s, i=i: s.users().messages().trash(userId=ME, id=i)) for i in ids]
        done, failed = self.batch(tool, requests)
        return [i for i in ids if i in done], failed


def _media(raw: bytes) -> Any:
    import io

    from googleapiclient.http import MediaIoBaseUpload

    return MediaIoBaseUpload(io.BytesIO(raw), mimetype="message/rfc822", resumable=False)


def count_attachments(part: dict[str, Any]) -> int:
    own = 1 if part.get("filename") else 0
    return own + sum(count_attachments(child) for child in part.get("parts") or [])


def digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


__all__ = ["GmailService", "addresses", "digest"]
