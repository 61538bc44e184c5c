"""Turn raw MIME bytes into what the inbox stores, never failing on bad mail.

Mail arrives from anywhere: unknown charsets, broken headers, truncated bodies. Every
step falls back to what can still be read and records a warning instead of raising, so a
message is stored with a parse warning rather than dropped.
"""

from __future__ import annotations

import email.header
import email.utils
import hashlib
import itertools
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.message import Message
from email.parser import BytesParser

from mcp_tools.servers.inbox.forwarding import FORWARD_HEADER, FORWARD_MARKER
from mcp_tools.util.charsets import encoding_for
from mcp_tools.util.text import decode_bytes, html_to_text, normalise_whitespace, utf8_encoded_words, utf8_parameters

MAX_FORWARD_DEPTH = 8
MAX_PARTS = 500
_FORWARD_FROM = re.compile(r"^(from|von|de)\s*:\s*(.+)$", re.IGNORECASE)
MAX_FORWARDED_SENDERS = 20


@dataclass
class ParsedAttachment:
    filename: str
    content_type: str
    data: bytes
    charset: str | None = None

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass
class ParsedMessage:
    message_id: str | None
    sender: str
    sender_address: str
    recipients: list[str]
    subject: str
    date: datetime | None
    body: str
    body_format: str
    attachments: list[ParsedAttachment] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    forwarded_from: list[str] = field(default_factory=list)

    def dedupe_key(self, raw: bytes) -> str:
        """The same Message-ID is one message; without one, identical bytes are."""
        if self.message_id:
            return "mid:" + self.message_id
        return "sha256:" + hashlib.sha256(raw).hexdigest()


_RAW_BYTES = re.compile("[\udc80-\udcff]")  # header bytes beyond ASCII, as the parser keeps them


def _header_text(name: str, value: str, charset: str | None) -> str:
    """A raw header value as text: 8-bit bytes as UTF-8, else in the part's charset or Windows-1252."""
    if _RAW_BYTES.search(value):
        data = value.encode("ascii", "surrogateescape")
        try:
            value = data.decode("utf-8")
        except UnicodeDecodeError:
            value = decode_bytes(data, charset if encoding_for(charset) else "windows-1252", [], "header")
    if name.lower() in ("content-type", "content-disposition"):
        value = utf8_parameters(value)
    return utf8_encoded_words(value)


def _needs_reading(value: str) -> bool:
    return "=?" in value or "*=" in value or _RAW_BYTES.search(value) is not None


def _parse(raw: bytes) -> Message:
    """Parse MIME with header text (subjects, names, file names) read as a browser would."""
    msg = BytesParser(policy=policy.default).parsebytes(raw)
    for part in itertools.islice(msg.walk(), MAX_PARTS * 2):
        items = list(part.raw_items())
        names = {name.lower() for name, value in items if isinstance(value, str) and _needs_reading(value)}
        if not names:
            continue
        try:
            charset = part.get_content_charset()
        except Exception:
            charset = None
        for name in names:  # same-named headers keep their order; their place among others does not matter
            del part[name]
        for name, value in items:
            if name.lower() in names:
                part.set_raw(name, _header_text(name, value, charset) if isinstance(value, str) else value)
    return msg


def _payload_bytes(part: Message) -> bytes:
    try:
        payload = part.get_payload(decode=True)
    except Exception:
        payload = None
    if isinstance(payload, bytes):
        return payload
    raw = part.get_payload()
    if isinstance(raw, str):
        return raw.encode("utf-8", errors="surrogateescape")
    return b""


def _header(msg: Message, name: str, warnings: list[str]) -> str:
    """A header as readable text; a header the strict parser rejects is decoded by hand."""
    try:
        value = msg.get(name)
        return "" if value is None else str(value).strip()
    except Exception:
        pass
    warnings.append(f"header {name} is malformed; kept as raw text")
    for key, raw_value in msg.raw_items():
        if key.lower() == name.lower():
            try:
                return str(email.header.make_header(email.header.decode_header(raw_value))).strip()
            except Exception:
                return str(raw_value).strip()
    return ""


def _addresses(value: str) -> list[tuple[str, str]]:
    try:
        return [(name, addr) for name, addr in email.utils.getaddresses([value]) if addr or name]
    except Exception:
        return []


def _format_address(name: str, addr: str) -> str:
    if name and addr:
        return f"{name} <{addr}>"
    return name or addr


def _parse_date(msg: Message, warnings: list[str]) -> datetime | None:
    raw = _header(msg, "Date", warnings)
    if not raw:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(raw)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
    except (TypeError, ValueError, IndexError, OverflowError, AttributeError):
        warnings.append(f"unreadable Date header {raw[:60]!r}")
        return None


def _message_id(msg: Message, warnings: list[str]) -> str | None:
    raw = _header(msg, "Message-ID", warnings)
    match = re.search(r"<([^<>\s]+)>", raw)
    value = match.group(1) if match else raw.strip().strip("<>").strip()
    return value[:998] or None


def _filename(part: Message) -> str | None:
    try:
        name = part.get_filename()
    except Exception:
        name = None
    if not name:
        return None
    name = str(name).replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch.isprintable()).strip()
    return name[:255] or None


def _is_attachment(part: Message) -> bool:
    try:
        disposition = part.get_content_disposition()
    except Exception:
        disposition = None
    return disposition == "attachment" or (_filename(part) is not None and disposition != "inline")


@dataclass
class _Walk:
    texts: list[str] = field(default_factory=list)
    formats: set[str] = field(default_factory=set)
    attachments: list[ParsedAttachment] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    parts_seen: int = 0


def _text_of(part: Message, walk: _Walk) -> tuple[str, str]:
    """The readable text of one text/plain or text/html part and its format."""
    data = _payload_bytes(part)
    text = decode_bytes(data, part.get_content_charset(), walk.warnings, f"part {part.get_content_type()}")
    if part.get_content_subtype() == "html":
        return html_to_text(text), "html"
    return normalise_whitespace(text), "plain"


def _alternative_choice(parts: list[Message]) -> Message | None:
    for wanted in ("text/plain", "text/html"):
        for part in parts:
            if part.get_content_type() == wanted and not _is_attachment(part):
                return part
    return next((part for part in reversed(parts) if part.is_multipart()), None)


def _walk(part: Message, walk: _Walk, depth: int) -> None:
    walk.parts_seen += 1
    if walk.parts_seen > MAX_PARTS:
        if walk.parts_seen == MAX_PARTS + 1:
            walk.warnings.append(f"more than {MAX_PARTS} MIME parts; the rest were skipped")
        return
    walk.warnings.extend(_defects(part))
    content_type = part.get_content_type()
    forwarded = content_type in ("message/rfc822", "message/global")
    if forwarded or (part.is_multipart() and content_type.startswith("message/")):
        _walk_forwarded(part, walk, depth)
        return
    if part.is_multipart():
        children = [child for child in part.get_payload() if isinstance(child, Message)]
        if part.get_content_subtype() == "alternative":
            chosen = _alternative_choice(children)
            others = [child for child in children if child is not chosen and _is_attachment(child)]
            for child in ([chosen] if chosen is not None else []) + others:
                _walk(child, walk, depth)
            return
        for child in children:
            _walk(child, walk, depth)
        return
    if part.get_content_maintype() == "multipart":  # no boundary: the payload is one plain string
        text = decode_bytes(_payload_bytes(part), part.get_content_charset(), walk.warnings, "multipart body")
        if text.strip():
            walk.texts.append(normalise_whitespace(text))
            walk.formats.add("plain")
        return
    is_text_body = part.get_content_maintype() == "text" and part.get_content_subtype() in ("plain", "html")
    if is_text_body and not _is_attachment(part):
        text, fmt = _text_of(part, walk)
        if text:
            walk.texts.append(text)
            walk.formats.add(fmt)
        return
    data = _payload_bytes(part)
    name = _filename(part) or f"part-{len(walk.attachments) + 1}"
    walk.attachments.append(ParsedAttachment(name, content_type, data, part.get_content_charset()))


def _walk_forwarded(part: Message, walk: _Walk, depth: int) -> None:
    payload = part.get_payload()
    inner = payload[0] if isinstance(payload, list) and payload else None
    if inner is None and part.get_content_type() == "message/global":  # RFC 6532: parsed as plain bytes
        inner = _parse(_payload_bytes(part))
    if not isinstance(inner, Message):
        walk.warnings.append("a forwarded message part is empty or unreadable")
        return
    if depth >= MAX_FORWARD_DEPTH:
        walk.warnings.append(f"forwarded messages nested deeper than {MAX_FORWARD_DEPTH}; inner ones skipped")
        return
    inner_walk = _Walk(warnings=walk.warnings, attachments=walk.attachments, parts_seen=walk.parts_seen)
    header_lines = ["---------- Forwarded message ----------"]
    for name in ("From", "Date", "Subject", "To"):
        value = _header(inner, name, walk.warnings)
        if value:
            header_lines.append(f"{name}: {value}")
    _walk(inner, inner_walk, depth + 1)
    walk.parts_seen = inner_walk.parts_seen
    walk.formats.update(inner_walk.formats)
    walk.texts.append("\n".join(header_lines) + "\n\n" + "\n\n".join(inner_walk.texts))


def forwarded_senders(body: str, own_sender: str = "") -> list[str]:
    """Senders named in the header blocks of forwarded messages, inline or attached, in order."""
    found: list[str] = []
    in_header = seen_header = False
    for line in body.splitlines():
        stripped = line.strip()
        if FORWARD_MARKER.match(stripped):
            in_header, seen_header = True, False
            continue
        if not in_header:
            continue
        if not stripped:
            in_header = not seen_header  # a blank line ends the header block once it has begun
            continue
        if not FORWARD_HEADER.match(stripped):
            in_header = False
            continue
        seen_header = True
        match = _FORWARD_FROM.match(stripped)
        if match:
            found.append(match.group(2).strip()[:320])
    unique = [sender for sender in dict.fromkeys(found) if sender and sender != own_sender]
    return unique[:MAX_FORWARDED_SENDERS]


def _defects(part: Message) -> list[str]:
    defects = getattr(part, "defects", None) or []
    return [f"MIME defect: {type(defect).__name__}" for defect in defects]


def parse_message(raw: bytes) -> ParsedMessage:
    """Parse raw MIME; whatever goes wrong is recorded in `warnings`, never raised."""
    warnings: list[str] = []
    try:
        msg: Message = _parse(raw)
    except Exception as error:  # the parser is lenient; this is the last line of defence
        text = decode_bytes(raw, None, warnings, "message")
        warnings.append(f"could not parse as MIME ({type(error).__name__}); stored as plain text")
        return ParsedMessage(None, "", "", [], "", None, normalise_whitespace(text), "plain", [], warnings)
    if not list(msg.keys()):
        warnings.append("no mail headers found")
    sender_header = _header(msg, "From", warnings)
    senders = _addresses(sender_header)
    sender_name, sender_address = senders[0] if senders else ("", "")
    sender = _format_address(sender_name, sender_address) or sender_header
    recipients = [
        _format_address(name, addr)
        for header in ("To", "Cc")
        for name, addr in _addresses(_header(msg, header, warnings))
    ]
    walk = _Walk(warnings=warnings)
    try:
        _walk(msg, walk, 0)
    except Exception as error:  # a body we cannot walk still leaves headers worth keeping
        warnings.append(f"body could not be fully read ({type(error).__name__})")
    body_format = "plain" if "plain" in walk.formats else ("html" if walk.formats else "none")
    body = "\n\n".join(walk.texts)
    return ParsedMessage(
        message_id=_message_id(msg, warnings),
        sender=sender,
        sender_address=sender_address.lower(),
        recipients=recipients,
        subject=_header(msg, "Subject", warnings).replace("\n", " "),
        date=_parse_date(msg, warnings),
        body=body,
        body_format=body_format,
        attachments=walk.attachments,
        warnings=list(dict.fromkeys(warnings)),
        forwarded_from=forwarded_senders(body, sender),
    )
