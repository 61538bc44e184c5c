"""Looking things up in the notes index: documents, links, filters, full-text and name matches, tags.

`NoteIndex` takes these read-only queries from `IndexQueries`; they run on its connection under
its lock. Building and refreshing the index (schema, upserts, link resolution, vectors) stay in
index.py.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_tools.servers.notes.links import strip_md
from mcp_tools.servers.notes.markdown import name_key
from mcp_tools.util.locks import WaitAwareLock


def target_key(target: str) -> str:
    """The key a link is re-resolved under when a note with that name or alias appears."""
    return name_key(strip_md(target.rstrip("/").rpartition("/")[2])) if target else ""  # basename, inline


@dataclass(frozen=True)
class DocumentRow:
    id: int
    path: str
    title: str
    frontmatter: dict[str, Any]
    tags: list[str]
    aliases: list[str]
    mtime_ns: int
    size: int
    hash: str
    words: int
    note_date: str | None
    created: float | None


@dataclass(frozen=True)
class LinkRow:
    source_path: str
    kind: str
    style: str
    target: str
    fragment: str
    text: str
    start: int
    end: int
    resolved_path: str | None


DOC_COLUMNS = "id, path, title, frontmatter, tags, aliases, mtime_ns, size, hash, words, note_date, created"
LINK_COLUMNS = "source_path, kind, style, target, fragment, text, start, end, resolved_path"


def _document(row: Sequence[Any]) -> DocumentRow:
    return DocumentRow(
        id=row[0],
        path=row[1],
        title=row[2],
        frontmatter=json.loads(row[3]),
        tags=json.loads(row[4]),
        aliases=json.loads(row[5]),
        mtime_ns=row[6],
        size=row[7],
        hash=row[8],
        words=row[9],
        note_date=row[10],
        created=row[11],
    )


def like_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class IndexQueries:
    """The read-only queries of `NoteIndex` (typed by the connection and lock it provides)."""

    path: str
    lock: WaitAwareLock
    db: sqlite3.Connection
    generation: int  # bumped on every change
    _doc_count: tuple[int, int] | None  # (generation, notes) as last counted

    def document(self, path: str) -> DocumentRow | None:
        with self.lock:
            row = self.db.execute(f"SELECT {DOC_COLUMNS} FROM documents WHERE path = ?", (path,)).fetchone()
        return _document(row) if row else None

    def documents_by_id(self, ids: Iterable[int]) -> dict[int, DocumentRow]:
        ids = list(ids)
        if not ids:
            return {}
        with self.lock:
            rows = self.db.execute(
                f"SELECT {DOC_COLUMNS} FROM documents WHERE id IN ({','.join('?' * len(ids))})", ids
            ).fetchall()
        return {row[0]: _document(row) for row in rows}

    def count(self) -> int:
        """How many notes are indexed, counted again only after a change (each search reports it)."""
        with self.lock:
            if self._doc_count is None or self._doc_count[0] != self.generation:
                total = int(self.db.execute("SELECT COUNT(*) FROM documents").fetchone()[0])
                self._doc_count = (self.generation, total)
            return self._doc_count[1]

    def paths(self) -> list[str]:
        with self.lock:
            return [r[0] for r in self.db.execute("SELECT path FROM documents ORDER BY path")]

    def links_from(self, path: str) -> list[LinkRow]:
        with self.lock:
            rows = self.db.execute(
                f"SELECT {LINK_COLUMNS} FROM links WHERE source_path = ? ORDER BY start", (path,)
            ).fetchall()
        return [LinkRow(*row) for row in rows]

    def sources_linking_by_name(self, name: str) -> set[str]:
        """Notes with a link whose target's last part is `name` (resolved or not)."""
        with self.lock:
            rows = self.db.execute("SELECT DISTINCT source_path FROM links WHERE target_key = ?", (target_key(name),))
            return {r[0] for r in rows}

    def links_to(self, path: str) -> list[LinkRow]:
        with self.lock:
            rows = self.db.execute(
                f"SELECT {LINK_COLUMNS} FROM links WHERE resolved_path = ? ORDER BY source_path, start",
                (path,),
            ).fetchall()
        return [LinkRow(*row) for row in rows]

    def filtered_doc_ids(
        self,
        *,
        tags: Sequence[str] = (),
        folder: str | None = None,
        date_after: str | None = None,
        date_before: str | None = None,
    ) -> set[int] | None:
        """Documents passing the filters, or None when there are no filters."""
        clauses: list[str] = []
        params: list[Any] = []
        for tag in tags:
            clauses.append("id IN (SELECT doc_id FROM tags WHERE tag = ? OR tag LIKE ? ESCAPE '\\')")
            params += [tag, like_escape(tag) + "/%"]
        if folder:
            clauses.append("path LIKE ? ESCAPE '\\'")
            params.append(like_escape(folder.rstrip("/")) + "/%")
        note_date = "COALESCE(note_date, strftime('%Y-%m-%dT%H:%M:%S', mtime_ns / 1e9, 'unixepoch'))"
        if date_after:
            clauses.append(f"{note_date} >= ?")
            params.append(date_after)
        if date_before:
            clauses.append(f"{note_date} <= ?")
            params.append(date_before)
        if not clauses:
            return None
        with self.lock:
            rows = self.db.execute(f"SELECT id FROM documents WHERE {' AND '.join(clauses)}", params).fetchall()
        return {r[0] for r in rows}

    def lexical(self, match: str, limit: int) -> list[tuple[int, int, float, str]]:
        """(chunk id, doc id, bm25 score, heading) best first."""
        with self.lock:
            try:
                return self.db.execute(
                    "SELECT c.id, c.doc_id, bm25(chunks_fts, 1.0, 2.0, 1.0) AS score, c.heading "
                    "FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
                    "WHERE chunks_fts MATCH ? ORDER BY score LIMIT ?",
                    (match, limit),
                ).fetchall()
            except sqlite3.OperationalError:
                return []

    def exact_names(self, key: str) -> list[tuple[int, int]]:
        """(doc id, kind) of notes whose file name (0), title (1) or an alias (2) is `key` (a `name_key`)."""
        with self.lock:
            return self.db.execute("SELECT doc_id, kind FROM names WHERE key = ?", (key,)).fetchall()

    def name_matches(self, match: str, limit: int) -> list[tuple[int, str]]:
        """(doc id, names) of notes whose names hold the query's words, best first: short names win."""
        with self.lock:
            try:
                return self.db.execute(
                    "SELECT rowid, names FROM names_fts WHERE names_fts MATCH ? ORDER BY bm25(names_fts) LIMIT ?",
                    (match, limit),
                ).fetchall()
            except sqlite3.OperationalError:
                return []

    def term_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """How many chunks contain each term (terms as the tokenizer stores them)."""
        counts: dict[str, int] = {}
        with self.lock:
            for term in terms:
                row = self.db.execute("SELECT doc FROM chunks_vocab WHERE term = ?", (term,)).fetchone()
                counts[term] = int(row[0]) if row else 0
        return counts

    def snippets(self, match: str, chunk_ids: Sequence[int]) -> dict[int, str]:
        """Highlighted excerpts, computed only for the chunks that are shown."""
        if not chunk_ids:
            return {}
        with self.lock:
            try:
                rows = self.db.execute(
                    "SELECT rowid, snippet(chunks_fts, 2, '**', '**', '…', 24) FROM chunks_fts "
                    f"WHERE chunks_fts MATCH ? AND rowid IN ({','.join('?' * len(chunk_ids))})",
                    (match, *chunk_ids),
                ).fetchall()
            except sqlite3.OperationalError:
                return {}
        return {r[0]: " ".join(r[1].split()) for r in rows}

    def first_chunks(self, doc_ids: Sequence[int]) -> dict[int, int]:
        """The opening chunk of each note: the passage shown when a note matched by name alone."""
        if not doc_ids:
            return {}
        with self.lock:
            rows = self.db.execute(
                f"SELECT doc_id, id FROM chunks WHERE ord = 0 AND doc_id IN ({','.join('?' * len(doc_ids))})",
                list(doc_ids),
            ).fetchall()
        return {r[0]: r[1] for r in rows}

    def chunk_texts(self, ids: Iterable[int]) -> dict[int, tuple[str, str]]:
        ids = list(ids)
        if not ids:
            return {}
        with self.lock:
            rows = self.db.execute(
                f"SELECT c.id, c.heading, f.body FROM chunks c JOIN chunks_fts f ON f.rowid = c.id "
                f"WHERE c.id IN ({','.join('?' * len(ids))})",
                ids,
            ).fetchall()
        return {r[0]: (r[1], r[2]) for r in rows}

    def tag_counts(self, tag: str) -> list[tuple[str, str]]:
        """(path, matching tag) for notes with `tag` or a tag nested under it."""
        with self.lock:
            return self.db.execute(
                "SELECT d.path, t.tag FROM tags t JOIN documents d ON d.id = t.doc_id "
                "WHERE t.tag = ? OR t.tag LIKE ? ESCAPE '\\' ORDER BY d.path, t.tag",
                (tag, like_escape(tag) + "/%"),
            ).fetchall()

    def random_path(self, doc_ids: set[int] | None, seed: float) -> str | None:
        with self.lock:
            if doc_ids is None:
                total = self.db.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
                if not total:
                    return None
                row = self.db.execute(
                    "SELECT path FROM documents ORDER BY id LIMIT 1 OFFSET ?", (int(seed * total),)
                ).fetchone()
                return row[0] if row else None
        if not doc_ids:
            return None
        chosen = sorted(doc_ids)[int(seed * len(doc_ids))]
        found = self.documents_by_id([chosen])
        return found[chosen].path if chosen in found else None
