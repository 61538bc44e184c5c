"""SQLite metadata with FTS5 search, and a content-addressed blob folder.

Blobs are named by their SHA-256, never by anything from the mail, so an attachment
called `../../.bashrc` cannot choose where it lands. Each write is a temp file renamed
into place; the database row is written last, so a crash leaves at worst an unused blob.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

SCHEMA = """
PRAGMA journal_mode = WAL;
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    dedupe_key TEXT NOT NULL UNIQUE,
    message_id TEXT,
    sender TEXT NOT NULL,
    sender_address TEXT NOT NULL,
    forwarded_from TEXT NOT NULL,
    recipients TEXT NOT NULL,
    subject TEXT NOT NULL,
    sent_at TEXT,
    received_at TEXT NOT NULL,
    sort_date TEXT NOT NULL,
    summary TEXT NOT NULL,
    summary_source TEXT NOT NULL,
    body TEXT NOT NULL,
    body_format TEXT NOT NULL,
    attachment_count INTEGER NOT NULL,
    raw_size INTEGER NOT NULL,
    raw_blob TEXT NOT NULL,
    warnings TEXT NOT NULL,
    via TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_sort ON messages (sort_date DESC, seq DESC);
CREATE TABLE IF NOT EXISTS attachments (
    message_seq INTEGER NOT NULL REFERENCES messages (seq),
    idx INTEGER NOT NULL,
    filename TEXT NOT NULL,
    content_type TEXT NOT NULL,
    charset TEXT,
    size INTEGER NOT NULL,
    blob TEXT NOT NULL,
    PRIMARY KEY (message_seq, idx)
);
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5 (
    subject, sender, summary, body, tokenize = 'unicode61 remove_diacritics 2'
);
"""


@dataclass(frozen=True)
class NewMessage:
    id: str
    dedupe_key: str
    message_id: str | None
    sender: str
    sender_address: str
    forwarded_from: list[str]
    recipients: list[str]
    subject: str
    sent_at: str | None
    received_at: str
    summary: str
    summary_source: str
    body: str
    body_format: str
    raw_size: int
    raw_blob: str
    warnings: list[str]
    via: str
    attachments: list[tuple[str, str, str | None, int, str]]  # filename, type, charset, size, blob


@dataclass(frozen=True)
class SearchFilters:
    query: str | None = None
    sender: str | None = None
    since: date | None = None
    until: date | None = None
    has_attachment: bool | None = None

    def fingerprint(self) -> str:
        parts = [self.query, self.sender, self.since, self.until, self.has_attachment]
        return hashlib.sha256(repr(parts).encode()).hexdigest()[:12]


class InvalidQuery(ValueError):
    """The keywords or cursor cannot be used; the message says what to change."""


def fts_query(keywords: str) -> str:
    """Quote every word as an FTS5 string so no user text is read as query syntax.

    Words are ANDed; a trailing `*` on a word asks for a prefix match.
    """
    terms = []
    for word in keywords.split():
        prefix = word.endswith("*")
        core = word.rstrip("*")
        if not any(ch.isalnum() for ch in core):
            continue
        terms.append('"' + core.replace('"', '""') + '"' + ("*" if prefix else ""))
    if not terms:
        raise InvalidQuery("query has no searchable words; use letters or digits")
    return " ".join(terms[:32])


def encode_cursor(sort_date: str, seq: int, filters: SearchFilters) -> str:
    payload = json.dumps([sort_date, seq, filters.fingerprint()]).encode()
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


def decode_cursor(cursor: str, filters: SearchFilters) -> tuple[str, int]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        sort_date, seq, fingerprint = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if not isinstance(sort_date, str) or not isinstance(seq, int):
            raise ValueError
    except (ValueError, TypeError, json.JSONDecodeError, UnicodeDecodeError):
        raise InvalidQuery("cursor is not one this search returned; start again without it") from None
    if fingerprint != filters.fingerprint():
        raise InvalidQuery("cursor belongs to a search with other filters; repeat the same filters or drop it")
    return sort_date, seq


def _day_start(day: date) -> str:
    return datetime.combine(day, time.min).isoformat() + "+00:00"


class BlobStore:
    """Files named by the SHA-256 of their content, fanned out by the first two hex digits."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        path = self.path_for(digest)
        if path.exists() and path.stat().st_size == len(data):
            return digest
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp_name, path)
        except BaseException:
            Path(temp_name).unlink(missing_ok=True)
            raise
        return digest

    def get(self, digest: str) -> bytes:
        return self.path_for(digest).read_bytes()

    def path_for(self, digest: str) -> Path:
        if len(digest) != 64 or any(ch not in "0123456789abcdef" for ch in digest):
            raise ValueError("not a blob digest")
        return self.root / digest[:2] / digest


class MessageStore:
    """All SQL lives here; each call opens its own connection, so threads never share one."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self._ready = False

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        connection = sqlite3.connect(self.db_path, timeout=30)
        connection.row_factory = sqlite3.Row
        try:
            if not self._ready:
                connection.executescript(SCHEMA)
                self._ready = True
            connection.execute("PRAGMA foreign_keys = ON")
            with connection:
                yield connection
        finally:
            connection.close()

    def find_by_key(self, dedupe_key: str) -> str | None:
        with self._connect() as db:
            row = db.execute("SELECT id FROM messages WHERE dedupe_key = ?", (dedupe_key,)).fetchone()
        return row["id"] if row else None

    def insert(self, message: NewMessage) -> tuple[str, bool]:
        """Store a message; returns (id, duplicate). A racing twin makes this a duplicate."""
        try:
            return self._insert(message)
        except sqlite3.IntegrityError:
            existing = self.find_by_key(message.dedupe_key)
            if existing is None:
                raise
            return existing, True

    def _insert(self, message: NewMessage) -> tuple[str, bool]:
        with self._connect() as db:
            existing = db.execute("SELECT id FROM messages WHERE dedupe_key = ?", (message.dedupe_key,)).fetchone()
            if existing:
                return existing["id"], True
            sort_date = message.sent_at or message.received_at
            cursor = db.execute(
                """INSERT INTO messages (id, dedupe_key, message_id, sender, sender_address, forwarded_from, recipients,
                   subject, sent_at, received_at, sort_date, summary, summary_source, body, body_format,
                   attachment_count, raw_size, raw_blob, warnings, via)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    message.id,
                    message.dedupe_key,
                    message.message_id,
                    message.sender,
                    message.sender_address,
                    json.dumps(message.forwarded_from, ensure_ascii=False),
                    json.dumps(message.recipients, ensure_ascii=False),
                    message.subject,
                    message.sent_at,
                    message.received_at,
                    sort_date,
                    message.summary,
                    message.summary_source,
                    message.body,
                    message.body_format,
                    len(message.attachments),
                    message.raw_size,
                    message.raw_blob,
                    json.dumps(message.warnings, ensure_ascii=False),
                    message.via,
                ),
            )
            seq = cursor.lastrowid
            db.executemany(
                """INSERT INTO attachments (message_seq, idx, filename, content_type, charset, size, blob)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""",
                [(seq, index, *attachment) for index, attachment in enumerate(message.attachments)],
            )
            db.execute(
                "INSERT INTO messages_fts (rowid, subject, sender, summary, body) VALUES (?, ?, ?, ?, ?)",
                (
                    seq,
                    message.subject,
                    " ".join([message.sender, *message.forwarded_from]),
                    message.summary,
                    message.body,
                ),
            )
        return message.id, False

    def search(self, filters: SearchFilters, limit: int, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
        clauses: list[str] = []
        params: list[Any] = []
        if filters.query is not None:
            clauses.append("m.seq IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?)")
            params.append(fts_query(filters.query))
        if filters.sender:
            needle = filters.sender.strip().lower()
            clauses.append(
                "(instr(lower(m.sender), ?) > 0 OR instr(m.sender_address, ?) > 0"
                " OR instr(lower(m.forwarded_from), ?) > 0)"
            )
            params.extend([needle, needle, needle])
        if filters.since:
            clauses.append("m.sort_date >= ?")
            params.append(_day_start(filters.since))
        if filters.until:
            clauses.append("m.sort_date < ?")
            params.append(_day_start(filters.until + timedelta(days=1)))
        if filters.has_attachment is not None:
            clauses.append("m.attachment_count > 0" if filters.has_attachment else "m.attachment_count = 0")
        if cursor:
            after_date, after_seq = decode_cursor(cursor, filters)
            clauses.append("(m.sort_date < ? OR (m.sort_date = ? AND m.seq < ?))")
            params.extend([after_date, after_date, after_seq])
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        sql = f"""SELECT m.seq, m.id, m.sender, m.forwarded_from, m.subject, m.sent_at, m.received_at,
                  m.sort_date, m.summary, m.attachment_count FROM messages m {where}
                  ORDER BY m.sort_date DESC, m.seq DESC LIMIT ?"""
        params.append(limit + 1)
        with self._connect() as db:
            try:
                rows = [dict(row) for row in db.execute(sql, params).fetchall()]
                for row in rows:
                    row["forwarded_from"] = json.loads(row["forwarded_from"])
            except sqlite3.OperationalError as error:
                if "fts5" in str(error).lower() or "match" in str(error).lower():
                    raise InvalidQuery("query could not be searched; use plain words") from None
                raise
        next_cursor = None
        if len(rows) > limit:
            rows = rows[:limit]
            last = rows[-1]
            next_cursor = encode_cursor(last["sort_date"], last["seq"], filters)
        return rows, next_cursor

    def rank(self, keywords: str, limit: int) -> list[dict[str, Any]]:
        """Messages matching any of the words, best BM25 first, with a snippet of the matching text."""
        words = fts_query(keywords).split(" ")
        sql = """SELECT m.id, m.subject, m.sender, bm25(messages_fts) AS rank,
                 snippet(messages_fts, -1, '', '', '…', 20) AS snippet
                 FROM messages_fts JOIN messages m ON m.seq = messages_fts.rowid
                 WHERE messages_fts MATCH ? ORDER BY rank LIMIT ?"""
        with self._connect() as db:
            try:
                return [dict(row) for row in db.execute(sql, (" OR ".join(words), limit)).fetchall()]
            except sqlite3.OperationalError as error:
                raise InvalidQuery("query could not be searched; use plain words") from error

    def get(self, message_id: str) -> dict[str, Any] | None:
        with self._connect() as db:
            row = db.execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchone()
            if row is None:
                return None
            message = dict(row)
            message["attachments"] = [
                dict(attachment)
                for attachment in db.execute(
                    "SELECT idx, filename, content_type, charset, size, blob FROM attachments "
                    "WHERE message_seq = ? ORDER BY idx",
                    (message["seq"],),
                )
            ]
        message["recipients"] = json.loads(message["recipients"])
        message["forwarded_from"] = json.loads(message["forwarded_from"])
        message["warnings"] = json.loads(message["warnings"])
        return message

    def count(self) -> int:
        with self._connect() as db:
            return int(db.execute("SELECT count(*) FROM messages").fetchone()[0])
