"""Gmail's message payloads to readable text and attachment lists; new messages to RFC 2822.

Gmail returns a tree of parts with bodies base64url-encoded in their own charset. The body
shown is the plain part unless it is a 'view in browser' stub, else the HTML as text.
"""

from __future__ import annotations

import email.utils
import mimetypes
import re
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

from mcp_tools.servers.google.text import b64url_decode, decode_bytes, html_to_text, is_browser_stub

MAX_PARTS = 500
_CHARSET = re.compile(r'charset\s*=\s*"?([^";\s]+)', re.IGNORECASE)


@dataclass
class Attachment:
    index: int
    filename: str
    content_type: str
    size: int
    attachment_id: str | None
    data: str | None  # inline base64url body, when Gmail sent it inline
    charset: str | None


@dataclass
class Body:
    text: str
    attachments: list[Attachment] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    fetch: list[dict[str, Any]] = field(default_factory=list)  # text parts whose body must be fetched by id


def headers_of(part: dict[str, Any]) -> dict[str, str]:
    """Lower-cased header names; the first value of each wins, as mail readers show it."""
    found: dict[str, str] = {}
    for header in part.get("headers") or []:
        found.setdefault(str(header.get("name", "")).lower(), str(header.get("value", "")))
    return found


def charset_of(part: dict[str, Any]) -> str | None:
    match = _CHARSET.search(headers_of(part).get("content-type", ""))
    return match.group(1) if match else None


def _is_attachment(part: dict[str, Any]) -> bool:
    disposition = headers_of(part).get("content-disposition", "").lower()
    return bool(part.get("filename")) or disposition.startswith("attachment")


def extract(payload: dict[str, Any], fetched: dict[str, bytes] | None = None) -> Body:
    """The readable body and the attachments of one message payload.

    `fetched` holds bodies Gmail did not send inline (by partId); a first pass lists them in
    `Body.fetch` so the caller can get them and call again.
    """
    fetched = fetched or {}
    body = Body("")
    plains: list[str] = []
    htmls: list[str] = []
    count = 0

    def part_text(part: dict[str, Any]) -> str | None:
        data = (part.get("body") or {}).get("data")
        if data is not None:
            raw = b64url_decode(data)
        elif part.get("partId", "") in fetched:
            raw = fetched[part.get("partId", "")]
        elif (part.get("body") or {}).get("attachmentId"):
            body.fetch.append(part)
            return None
        else:
            raw = b""
        text = decode_bytes(raw, charset_of(part), body.warnings, f"part {part.get('partId') or 0}")
        return text.replace("\r\n", "\n").replace("\r", "\n")

    def walk(part: dict[str, Any]) -> None:
        nonlocal count
        count += 1
        if count > MAX_PARTS:
            return
        mime = str(part.get("mimeType", "")).lower()
        children = part.get("parts") or []
        if mime.startswith("multipart/"):
            for child in children:
                walk(child)
            return
        if mime == "message/rfc822" and children and not part.get("filename"):
            for child in children:
                walk(child)
            return
        if _is_attachment(part) or mime not in ("text/plain", "text/html"):
            if not part.get("filename") and not (part.get("body") or {}).get("size"):
                return
            info = part.get("body") or {}
            body.attachments.append(
                Attachment(
                    index=len(body.attachments),
                    filename=part.get("filename") or f"part-{part.get('partId') or 0}{_extension(mime)}",
                    content_type=mime or "application/octet-stream",
                    size=int(info.get("size") or 0),
                    attachment_id=info.get("attachmentId"),
                    data=info.get("data"),
                    charset=charset_of(part),
                )
            )
            return
        text = part_text(part)
        if text is None:
            return
        (htmls if mime == "text/html" else plains).append(text)

    walk(payload)
    plain = "\n\n".join(item.strip("\n") for item in plains if item.strip())
    html = "\n\n".join(html_to_text(item) for item in htmls if item.strip())
    if html and is_browser_stub(plain, html):
        body.text = html
    else:
        body.text = plain or html
    return body


def _extension(mime: str) -> str:
    return mimetypes.guess_extension(mime) or ""


def addresses(values: list[str]) -> list[str]:
    return [address.lower() for _, address in email.utils.getaddresses(values) if address]


@dataclass
class Outgoing:
    """A message to draft or send, as the person will see it confirmed."""

    sender: str
    to: list[str]
    cc: list[str]
    bcc: list[str]
    subject: str
    text: str
    html: str | None
    attachments: list[tuple[str, bytes]]
    in_reply_to: str | None = None
    references: str | None = None
    thread_id: str | None = None

    def recipients(self) -> list[str]:
        return addresses(self.to + self.cc + self.bcc)

    def build(self) -> bytes:
        message = EmailMessage()
        if self.sender:
            message["From"] = self.sender
        if self.to:
            message["To"] = ", ".join(self.to)
        if self.cc:
            message["Cc"] = ", ".join(self.cc)
        if self.bcc:
            message["Bcc"] = ", ".join(self.bcc)
        message["Subject"] = self.subject
        message["Date"] = email.utils.formatdate(localtime=False)
        message["Message-ID"] = email.utils.make_msgid(domain=(self.sender.rpartition("@")[2] or None))
        if self.in_reply_to:
            message["In-Reply-To"] = self.in_reply_to
            message["References"] = self.references or self.in_reply_to
        text = self.text or (html_to_text(self.html) if self.html else "")
        message.set_content(text)
        if self.html:
            message.add_alternative(self.html, subtype="html")
        for filename, data in self.attachments:
            kind = mimetypes.guess_type(filename)[0] or "application/octet-stream"
            maintype, _, subtype = kind.partition("/")
            message.add_attachment(data, maintype=maintype, subtype=subtype, filename=filename)
        return message.as_bytes()


def summarize_outgoing(raw: bytes) -> dict[str, Any]:
    """From, To, Cc, Bcc, Subject, first lines and attachments (name, size) of raw message bytes."""
    from email import policy
    from email.parser import BytesParser

    message = BytesParser(policy=policy.default).parsebytes(raw)
    text = ""
    files: list[tuple[str, int]] = []
    for part in message.walk():
        if part.is_multipart():
            continue
        filename = part.get_filename()
        if filename or part.get_content_disposition() == "attachment":
            files.append((filename or "unnamed", len(part.get_payload(decode=True) or b"")))
        elif not text and part.get_content_type() == "text/plain":
            text = part.get_content()
        elif not text and part.get_content_type() == "text/html":
            text = html_to_text(part.get_content())
    return {
        "from": str(message.get("From", "")),
        "to": [str(v) for v in message.get_all("To", [])],
        "cc": [str(v) for v in message.get_all("Cc", [])],
        "bcc": [str(v) for v in message.get_all("Bcc", [])],
        "subject": str(message.get("Subject", "")),
        "text": text,
        "attachments": files,
        "recipients": addresses([str(v) for key in ("To", "Cc", "Bcc") for v in message.get_all(key, [])]),
    }
