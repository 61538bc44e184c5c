"""The SQLite index of a vault: documents, tags, chunks (with FTS5 and vectors) and links.

One connection guarded by a lock; every public method is synchronous and short, so callers
run them in a worker thread and tools keep answering while a background indexer works. This
module builds and refreshes the index; the read-only queries `NoteIndex` answers are in
index_queries.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_tools.servers.notes.index_links import LinkWriting
from mcp_tools.servers.notes.index_queries import IndexQueries, target_key
from mcp_tools.servers.notes.links import Resolver, stem_of
from mcp_tools.servers.notes.markdown import Chunk, ParsedNote, name_key
from mcp_tools.util.locks import WaitAwareLock

SCHEMA_VERSION = "6"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    frontmatter TEXT NOT NULL,
    tags TEXT NOT NULL,
    aliases TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    hash TEXT NOT NULL,
    words INTEGER NOT NULL,
    note_date TEXT,
    created REAL
);
CREATE TABLE IF NOT EXISTS tags (doc_id INTEGER NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (tag, doc_id));
CREATE INDEX IF NOT EXISTS tags_doc ON tags (doc_id);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL,
    ord INTEGER NOT NULL,
    heading TEXT NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc_id);
CREATE TABLE IF NOT EXISTS vectors (chunk_id INTEGER PRIMARY KEY, vector BLOB NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    title, heading, body, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks_fts, 'row');
-- one row per note (rowid = documents.id): what a person calls the note, searched once per note
CREATE VIRTUAL TABLE IF NOT EXISTS names_fts USING fts5(names, tokenize = 'unicode61 remove_diacritics 2');
-- kind: 0 the file name, 1 the title, 2 an alias (a file name is the note's identity in links)
CREATE TABLE IF NOT EXISTS names (key TEXT NOT NULL, doc_id INTEGER NOT NULL, kind INTEGER NOT NULL,
    PRIMARY KEY (key, doc_id));
CREATE INDEX IF NOT EXISTS names_doc ON names (doc_id);
CREATE TABLE IF NOT EXISTS links (
    id INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL,
    source_path TEXT NOT NULL,
    kind TEXT NOT NULL,
    style TEXT NOT NULL,
    target TEXT NOT NULL,
    target_key TEXT NOT NULL,
    fragment TEXT NOT NULL,
    text TEXT NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    resolved_path TEXT
);
CREATE INDEX IF NOT EXISTS links_source ON links (source_id);
CREATE INDEX IF NOT EXISTS links_resolved ON links (resolved_path);
CREATE INDEX IF NOT EXISTS links_key ON links (target_key);
"""


# json.dumps(value, ensure_ascii=False), without making an encoder for every value
to_json = json.JSONEncoder(ensure_ascii=False).encode


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class FileState:
    mtime_ns: int
    size: int
    hash: str | None = None


@dataclass(frozen=True)
class PendingChunk:
    id: int
    text: str


def note_date_of(frontmatter: dict[str, Any]) -> str | None:
    for key in ("date", "created", "day"):
        value = frontmatter.get(key)
        if isinstance(value, str) and len(value) >= 10 and value[4] == "-":
            return value[:10]
    return None


class NoteIndex(LinkWriting, IndexQueries):
    """The index database; safe to share between threads (one connection behind a lock)."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self.lock = WaitAwareLock()  # a bulk reconcile commits as soon as a tool waits for it
        self.db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA page_size=8192")  # a new database only: five vectors per page instead of two
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=OFF")
        self._ensure_schema()
        self.resolver = self._load_resolver()
        self.generation = 0  # bumped on every change; lets caches know when to refresh
        self._depth = 0
        self._counts: tuple[int, tuple[int, int]] | None = None
        self._doc_count: tuple[int, int] | None = None
        # vector changes per committed generation, so the in-memory matrix can follow without a reload
        self._journal: list[VectorChange] = []
        self._journal_base = 0
        self._ops: list[VectorOp] = []
        self._init_links()
        # the next chunk id inside a transaction, known once asked (None: ask the table)
        self._next_chunk_id: int | None = None

    # -- setup ------------------------------------------------------------------------------

    def _ensure_schema(self) -> None:
        with self.lock:
            version = None
            try:
                row = self.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                version = row[0] if row else None
            except sqlite3.OperationalError:
                pass
            if version not in (None, SCHEMA_VERSION):
                for table in (
                    "meta",
                    "documents",
                    "tags",
                    "chunks",
                    "chunks_vocab",
                    "chunks_fts",
                    "links",
                    "vectors",
                    "names",
                    "names_fts",
                ):
                    self.db.execute(f"DROP TABLE IF EXISTS {table}")
            self.db.executescript(SCHEMA)
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))

    def _load_resolver(self) -> Resolver:
        rows = self.db.execute("SELECT path, aliases FROM documents").fetchall()
        return Resolver((r[0] for r in rows), {r[0]: json.loads(r[1]) for r in rows})

    def close(self) -> None:
        with self.lock:
            self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One transaction; nested uses join the outer one (bulk indexing commits in batches)."""
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self.db
                finally:
                    self._depth -= 1
                return
            self.db.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield self.db
            except BaseException:
                self._links_at_rollback()
                self.db.execute("ROLLBACK")
                self.generation += 1
                self._journal, self._journal_base = [], self.generation  # caches reload
                raise
            else:
                self._links_at_commit(self.db)
                self.db.execute("COMMIT")
                self.generation += 1
                self._record_vector_change()
            finally:
                self._depth = 0
                self._ops = []
                self._next_chunk_id = None

    def _record_vector_change(self) -> None:
        if self._ops:
            self._journal.append(VectorChange(self.generation, self._ops))
        if len(self._journal) > JOURNAL_LIMIT:
            self._journal, self._journal_base = [], self.generation

    def vector_snapshot(self, since: int) -> tuple[int, list[VectorChange] | None, list[tuple[int, int, bytes]]]:
        """(generation, changes since `since`) when the journal covers it, else all rows to reload."""
        with self.lock:
            if since >= self._journal_base and since >= 0:
                return self.generation, [c for c in self._journal if c.generation > since], []
            return self.generation, None, self.vector_rows()

    def checkpoint(self) -> None:
        """Fold the write-ahead log back into the database after bulk work."""
        with self.lock:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def get_meta(self, key: str) -> str | None:
        with self.lock:
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self.lock:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- writing ----------------------------------------------------------------------------

    def file_states(self) -> dict[str, FileState]:
        with self.lock:
            rows = self.db.execute("SELECT path, mtime_ns, size, hash FROM documents").fetchall()
        return {path: FileState(mtime, size, digest) for path, mtime, size, digest in rows}

    def touch(self, path: str, state: FileState) -> None:
        """Same content, new mtime (a `touch` or a sync client): remember it so it is not re-read."""
        with self.transaction() as db:
            db.execute(
                "UPDATE documents SET mtime_ns = ?, size = ? WHERE path = ?",
                (state.mtime_ns, state.size, path),
            )

    def upsert(
        self,
        path: str,
        text: str,
        parsed: ParsedNote,
        state: FileState,
        created: float | None,
        *,
        new: bool = False,
    ) -> None:
        """Store one parsed note, keeping the vectors of chunks whose text did not change.

        `new` says the caller found no entry for the note (a reconcile's first pass): the note is
        inserted without looking for it first, and looked for only if the insert meets one."""
        assert state.hash is not None
        with self.transaction() as db:
            values = (
                parsed.title,
                to_json(parsed.frontmatter),
                to_json(parsed.tags),
                to_json(parsed.aliases),
                state.mtime_ns,
                state.size,
                state.hash,
                parsed.words,
                note_date_of(parsed.frontmatter),
                created,
            )
            doc_id: int | None = None
            if new:
                with contextlib.suppress(sqlite3.IntegrityError):  # the watcher indexed it since the caller looked
                    doc_id = self._insert_document(db, path, values)
            row = None
            if doc_id is None:
                row = db.execute("SELECT id, aliases FROM documents WHERE path = ?", (path,)).fetchone()
            old_vectors: dict[str, bytes] = {}
            is_new = row is None
            old_aliases: list[str] = json.loads(row[1]) if row else []
            if row is None:
                if doc_id is None:
                    doc_id = self._insert_document(db, path, values)
            else:
                doc_id = row[0]
                db.execute(
                    "UPDATE documents SET title = ?, frontmatter = ?, tags = ?, aliases = ?, mtime_ns = ?, "
                    "size = ?, hash = ?, words = ?, note_date = ?, created = COALESCE(created, ?) "
                    "WHERE id = ?",
                    (*values, doc_id),
                )
                old_vectors = {
                    digest: vector
                    for digest, vector in db.execute(
                        "SELECT c.hash, v.vector FROM chunks c JOIN vectors v ON v.chunk_id = c.id WHERE c.doc_id = ?",
                        (doc_id,),
                    )
                }
                self._delete_children(db, doc_id)
            if parsed.tags:
                db.executemany("INSERT OR IGNORE INTO tags VALUES (?, ?)", [(doc_id, tag) for tag in parsed.tags])
            names = note_names(path, parsed.title, parsed.aliases)
            db.executemany("INSERT OR IGNORE INTO names VALUES (?, ?, ?)", [(key, doc_id, k) for _, k, key in names])
            db.execute(
                "INSERT INTO names_fts (rowid, names) VALUES (?, ?)", (doc_id, "\n".join([n for n, _, _ in names]))
            )
            # a note without body text still gets one row, so that its title is searchable
            chunks_rows = parsed.chunks or [Chunk("", "", 0, 0)]
            first_id = self._next_chunk_id
            if first_id is None:
                first_id = db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM chunks").fetchone()[0]
            self._next_chunk_id = first_id + len(chunks_rows)
            chunk_rows, fts_rows, reused = [], [], []
            title_part = f"{parsed.title}\x00"
            for order, (heading, body, start, end) in enumerate(chunks_rows):
                chunk_id = first_id + order
                digest = sha256_hex(f"{title_part}{heading}\x00{body}".encode())
                chunk_rows.append((chunk_id, doc_id, order, heading, start, end, digest))
                fts_rows.append((chunk_id, parsed.title, heading, body))
                if digest in old_vectors:
                    reused.append((chunk_id, old_vectors[digest]))
                    self._ops.append((chunk_id, doc_id, old_vectors[digest]))
            db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?)", chunk_rows)
            db.executemany("INSERT INTO chunks_fts (rowid, title, heading, body) VALUES (?, ?, ?, ?)", fts_rows)
            if reused:
                db.executemany("INSERT INTO vectors VALUES (?, ?)", reused)
            if is_new or sorted(old_aliases) != sorted(parsed.aliases):
                self.resolver.remove(path)
                self.resolver.add(path, parsed.aliases)
            links = [
                (doc_id, path, kind, style, target, target_key(target), fragment, link_text, start, end)
                for kind, style, target, fragment, link_text, start, end, _ in parsed.links
            ]
            self._keep_links(db, doc_id, links)
            if is_new or sorted(old_aliases) != sorted(parsed.aliases):
                keys = {name_key(stem_of(path)), *(name_key(a) for a in [*parsed.aliases, *old_aliases])}
                self._reresolve_links(db, keys, path)

    def _insert_document(self, db: sqlite3.Connection, path: str, values: tuple[Any, ...]) -> int:
        cursor = db.execute(
            "INSERT INTO documents (title, frontmatter, tags, aliases, mtime_ns, size, hash, words, "
            "note_date, created, path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*values, path),
        )
        return int(cursor.lastrowid or 0)

    def remove(self, path: str) -> bool:
        with self.transaction() as db:
            row = db.execute("SELECT id, aliases FROM documents WHERE path = ?", (path,)).fetchone()
            if row is None:
                return False
            self._delete_children(db, row[0])
            db.execute("DELETE FROM documents WHERE id = ?", (row[0],))
            self.resolver.remove(path)
            keys = {name_key(stem_of(path)), *(name_key(a) for a in json.loads(row[1]))}
            self._reresolve_links(db, keys, path)
            return True

    def _delete_children(self, db: sqlite3.Connection, doc_id: int) -> None:
        self._forget_links(doc_id)
        self._next_chunk_id = None  # the deleted chunks may have held the highest ids
        self._ops += [(r[0], doc_id, None) for r in db.execute("SELECT id FROM chunks WHERE doc_id = ?", (doc_id,))]
        db.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE doc_id = ?)", (doc_id,))
        db.execute("DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE doc_id = ?)", (doc_id,))
        db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
        db.execute("DELETE FROM tags WHERE doc_id = ?", (doc_id,))
        db.execute("DELETE FROM links WHERE source_id = ?", (doc_id,))
        db.execute("DELETE FROM names WHERE doc_id = ?", (doc_id,))
        db.execute("DELETE FROM names_fts WHERE rowid = ?", (doc_id,))

    # -- vectors ----------------------------------------------------------------------------

    def pending_chunks(self, limit: int, doc_path: str | None = None, after: int = 0) -> list[PendingChunk]:
        """Chunks without a vector, in id order from `after` (so a long run never rescans what it did)."""
        where = "c.id > ? AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.chunk_id = c.id)"
        params: tuple[Any, ...] = (after,)
        if doc_path is not None:
            where += " AND c.doc_id = (SELECT id FROM documents WHERE path = ?)"
            params = (after, doc_path)
        with self.lock:
            ids = [
                r[0]
                for r in self.db.execute(
                    f"SELECT c.id FROM chunks c WHERE {where} ORDER BY c.id LIMIT ?", (*params, limit)
                )
            ]
            if not ids:
                return []
            rows = self.db.execute(
                f"SELECT rowid, title, heading, body FROM chunks_fts WHERE rowid IN ({','.join('?' * len(ids))})", ids
            ).fetchall()
        texts = {r[0]: embedding_text(r[1], r[2], r[3]) for r in rows}
        return [PendingChunk(chunk_id, texts.get(chunk_id, "")) for chunk_id in ids]

    def store_vectors(self, vectors: Sequence[tuple[int, bytes]]) -> None:
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", vectors)
            blobs = dict(vectors)
            marks = ",".join("?" * len(blobs))
            for chunk_id, doc_id in db.execute(f"SELECT id, doc_id FROM chunks WHERE id IN ({marks})", list(blobs)):
                self._ops.append((chunk_id, doc_id, blobs[chunk_id]))

    def clear_vectors(self) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM vectors")
            self._journal_base = self.generation + 1

    def vector_rows(self) -> list[tuple[int, int, bytes]]:
        with self.lock:
            return self.db.execute(
                "SELECT c.id, c.doc_id, v.vector FROM vectors v JOIN chunks c ON c.id = v.chunk_id"
            ).fetchall()

    def vector_counts(self) -> tuple[int, int]:
        """(chunks with a vector, all chunks), cached until the next change."""
        with self.lock:
            if self._counts is None or self._counts[0] != self.generation:
                total = self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
                done = self.db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
                self._counts = (self.generation, (int(done), int(total)))
            return self._counts[1]

    def vector_dimensions(self) -> int | None:
        with self.lock:
            row = self.db.execute("SELECT length(vector) FROM vectors LIMIT 1").fetchone()
        return int(row[0]) // 4 if row else None

    def size_on_disk(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            candidate = Path(self.path + suffix)
            if candidate.exists():
                total += candidate.stat().st_size
        return total


JOURNAL_LIMIT = 500

VectorOp = tuple[int, int, bytes | None]  # (chunk id, doc id, vector); None drops the chunk


@dataclass(frozen=True)
class VectorChange:
    generation: int
    ops: list[VectorOp]


def note_names(path: str, title: str, aliases: Sequence[str]) -> list[tuple[str, int, str]]:
    """What a person may call a note, each once: (name, kind, key); kind is the file name (0), the
    title (1) or an alias (2), and key the name as notes compare names (`name_key`)."""
    names: list[tuple[str, int, str]] = []
    seen: set[str] = set()
    for name, kind in ((stem_of(path), 0), (title, 1), *((alias, 2) for alias in aliases)):
        name = " ".join(str(name).split())
        key = name_key(name)
        if name and key not in seen:
            seen.add(key)
            names.append((name, kind, key))
    return names


def embedding_text(title: str, heading: str, body: str) -> str:
    parts = [title]
    if heading:
        parts.append(heading)
    parts.append(body)
    return "\n".join(p for p in parts if p)[:4000]
