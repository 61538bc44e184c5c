"""Reading the vault: a note, its links and metadata, search by text, tag or chance.

`NotesService` takes these methods from `NoteReading`, which is built on `NoteIndexing`.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import random
import stat as stat_module
import unicodedata
from collections.abc import Callable
from typing import Literal

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.notes import models as m
from mcp_tools.servers.notes.embeddings import EmbeddingError
from mcp_tools.servers.notes.index import sha256_hex
from mcp_tools.servers.notes.indexing import NoteIndexing, iso_from_ns, line_of
from mcp_tools.servers.notes.keys import NOTE_SUFFIX, FragmentChecker, note_key
from mcp_tools.servers.notes.links import has_foreign_extension
from mcp_tools.servers.notes.markdown import parse_note, section_span
from mcp_tools.servers.notes.paging import paginate, text_page
from mcp_tools.servers.notes.search import lexical_hits, name_matches, rank, vector_hits
from mcp_tools.util.sandbox import stat_version


class NoteReading(NoteIndexing):
    """Looking notes up: they change nothing in the vault, only bring the index up to date."""

    def existing_key(self, path: str) -> str:
        """The key of an existing note, accepting the other Unicode normalisation of its name."""
        key = note_key(path)
        candidates = [key, unicodedata.normalize("NFC", key), unicodedata.normalize("NFD", key)]
        for candidate in dict.fromkeys(candidates):
            info = self.sandbox.stat(candidate)
            if info is not None and stat_module.S_ISREG(info.st_mode):
                return candidate
            if info is not None and stat_module.S_ISLNK(info.st_mode):
                self.sandbox.resolve(candidate)  # refuses a link leading out of the vault
                return candidate
        self.sandbox.check(key)
        raise ToolFailure("not_found", f"note {key} does not exist", "use notes_search to find the right path")

    def read_text(self, key: str) -> tuple[str, str]:
        data = self.sandbox.read_bytes(key, max_bytes=self.config.max_note_bytes)
        try:
            return data.decode("utf-8"), sha256_hex(data)
        except UnicodeDecodeError:
            raise ToolFailure("invalid_arguments", f"{key} is not UTF-8 text") from None

    def version_of(self, key: str) -> str | None:
        """The `stat_version` of the note at `key`; None: no note there."""
        try:
            info = self.sandbox.stat(key)
        except ToolFailure:
            return None
        return None if info is None else stat_version(info)

    def exists(self, path: str) -> bool:
        try:
            return self.sandbox.stat(note_key(path)) is not None
        except ToolFailure:
            return False

    def read(self, args: m.ReadArgs) -> m.ReadOutput:
        key = self.existing_key(args.path)
        text, digest = self.read_text(key)
        parsed = parse_note(text, posixpath.basename(key)[: -len(NOTE_SUFFIX)])
        content = text
        if args.heading:
            span = section_span(text, parsed.headings, args.heading)
            if span is None:
                known = ", ".join(h.text for h in parsed.headings[:20]) or "none"
                raise ToolFailure("not_found", f"{key} has no heading {args.heading!r}", f"headings: {known}")
            content = text[span[0] : span[1]]
        self.index_path(key)
        targets = FragmentChecker(self, {key: parsed})
        broken = []
        for row in self.index.links_from(key):
            if row.resolved_path is None and not has_foreign_extension(row.target):
                broken.append(f"{row.target}{row.fragment}: no such note")
            elif (problem := targets.problem(row.resolved_path, row.fragment)) is not None:
                broken.append(f"{row.target}{row.fragment}: {problem}")
        chunk, next_offset = text_page(content, args.offset, args.max_chars)
        return m.ReadOutput(
            path=key,
            content=chunk,
            frontmatter=parsed.frontmatter,
            tags=parsed.tags,
            sha256=digest,
            heading=args.heading,
            broken_links=broken[:50],
            offset=args.offset,
            total_chars=len(content),
            next_offset=next_offset,
        )

    def search(self, args: m.SearchArgs) -> m.SearchOutput:
        for name in ("date_after", "date_before"):
            value = getattr(args, name)
            try:
                if value is not None:
                    dt.datetime.fromisoformat(value)
            except ValueError:
                raise ToolFailure(
                    "invalid_arguments", f"{name} {value!r} is not an ISO 8601 date", "e.g. 2024-03-01"
                ) from None
        index = self.index
        tags = [t.strip().lstrip("#").casefold() for t in args.tags if t.strip()]
        allowed = index.filtered_doc_ids(
            tags=tags, folder=args.folder, date_after=args.date_after, date_before=args.date_before
        )
        depth = 2000 if allowed is not None else max(args.top_k * 20, 200)
        lexical = lexical_hits(index, args.query, args.top_k * 3, allowed, depth)
        names = name_matches(index, args.query, allowed, args.top_k * 3)
        semantic: list[tuple[int, int, float]] = []
        mode: Literal["hybrid", "lexical"] = "lexical"
        note = None
        if self.embedder is None:
            note = "no embedding provider configured ([notes] embeddings); lexical search only"
        else:
            embedded, total_chunks = index.vector_counts()
            try:
                query_vector = self.embedder.embed_query(args.query)
            except EmbeddingError as exc:
                note = f"semantic search unavailable: {exc}; lexical search only"
            else:
                if index.generation != self.vectors.generation:
                    generation, changes, rows = index.vector_snapshot(self.vectors.generation)
                    if changes is None:
                        self.vectors.refresh(generation, rows)
                    else:
                        self.vectors.apply(generation, [op for change in changes for op in change.ops])
                if self.vectors.dimensions and len(query_vector) // 4 != self.vectors.dimensions:
                    note = (
                        f"semantic search unavailable: the model gives {len(query_vector) // 4}-dimensional "
                        f"vectors but the index holds {self.vectors.dimensions}-dimensional ones; run "
                        "`mcp-tools notes index --reembed` after changing the model; lexical search only"
                    )
                else:
                    semantic = vector_hits(self.vectors, query_vector, args.top_k * 3, allowed)
                    mode = "hybrid"
                if mode == "hybrid" and embedded < total_chunks:
                    note = f"embeddings cover {embedded} of {total_chunks} chunks; indexing continues"
        hits = rank(args.query, lexical, names, semantic, index, args.top_k)
        state = self.index_state()
        if not state.complete:
            progress = f"{state.indexed}/{state.total} notes" if state.indexed < state.total else "being built"
            note = (note + "; " if note else "") + f"the index is {progress}; results may be partial"
        if state.skipped:
            some = "1 note is" if state.skipped == 1 else f"{state.skipped} notes are"
            note = (note + "; " if note else "") + f"{some} not indexed, so never found (index.skipped_notes says why)"
        docs = index.documents_by_id(h.doc_id for h in hits)
        results = [
            m.SearchHit(
                path=docs[h.doc_id].path,
                title=docs[h.doc_id].title,
                heading=h.passages[0].heading if h.passages else "",
                snippet=h.passages[0].snippet if h.passages else "",
                more=[m.Passage(heading=p.heading, snippet=p.snippet) for p in h.passages[1:]],
                score=round(h.score, 6),
            )
            for h in hits
            if h.doc_id in docs
        ]
        return m.SearchOutput(mode=mode, results=results, index=state, note=note)

    def backlinks(self, args: m.LinksArgs) -> m.BacklinksOutput:
        key = self.existing_key(args.path)
        self.index_path(key)
        rows = self.index.links_to(key)
        _, page, next_cursor = paginate(rows, args.limit, args.cursor)
        lines = self._line_numbers({r.source_path for r in page})
        return m.BacklinksOutput(
            path=key,
            backlinks=[
                m.Backlink(
                    source=r.source_path,
                    kind=r.kind,
                    text=r.text,
                    fragment=r.fragment,
                    line=lines(r.source_path, r.start),
                )
                for r in page
            ],
            total=len(rows),
            next_cursor=next_cursor,
        )

    def forward_links(self, args: m.LinksArgs) -> m.ForwardLinksOutput:
        key = self.existing_key(args.path)
        self.index_path(key)
        rows = self.index.links_from(key)
        _, page, next_cursor = paginate(rows, args.limit, args.cursor)
        lines = self._line_numbers({key})
        targets = FragmentChecker(self)
        return m.ForwardLinksOutput(
            path=key,
            links=[
                m.ForwardLink(
                    target=r.target,
                    resolved_path=r.resolved_path,
                    kind=r.kind,
                    fragment=r.fragment,
                    text=r.text,
                    line=lines(key, r.start),
                    missing=targets.problem(r.resolved_path, r.fragment),
                )
                for r in page
            ],
            total=len(rows),
            unresolved=sum(1 for r in rows if r.resolved_path is None),
            next_cursor=next_cursor,
        )

    def _line_numbers(self, keys: set[str]) -> Callable[[str, int], int]:
        texts: dict[str, str] = {}
        for key in keys:
            try:
                texts[key] = self.read_text(key)[0]
            except ToolFailure:
                texts[key] = ""
        return lambda key, offset: line_of(texts.get(key, ""), offset)

    def search_by_tag(self, args: m.TagArgs) -> m.TagOutput:
        tag = args.tag.strip().lstrip("#").casefold().strip("/")
        if not tag:
            raise ToolFailure("invalid_arguments", "tag is empty", "e.g. 'project' or 'project/alpha'")
        grouped: dict[str, list[str]] = {}
        for path, matched in self.index.tag_counts(unicodedata.normalize("NFC", tag)):
            grouped.setdefault(path, []).append(matched)
        items = sorted(grouped.items())
        _, page, next_cursor = paginate(items, args.limit, args.cursor)
        return m.TagOutput(
            tag=tag,
            notes=[m.TaggedNote(path=p, tags=t) for p, t in page],
            total=len(items),
            next_cursor=next_cursor,
        )

    def metadata(self, args: m.PathArgs) -> m.MetadataOutput:
        key = self.existing_key(args.path)
        text, digest = self.read_text(key)
        self.index_path(key)
        parsed = parse_note(text, posixpath.basename(key)[: -len(NOTE_SUFFIX)])
        doc = self.index.document(key)
        links_out = self.index.links_from(key)
        info = self.sandbox.stat(key)
        created = parsed.frontmatter.get("created") or parsed.frontmatter.get("date")
        if not created and doc and doc.created:
            created = dt.datetime.fromtimestamp(doc.created, tz=dt.UTC).isoformat(timespec="seconds")
        return m.MetadataOutput(
            path=key,
            title=parsed.title,
            frontmatter=parsed.frontmatter,
            tags=parsed.tags,
            aliases=parsed.aliases,
            headings=[h.text for h in parsed.headings],
            words=parsed.words,
            links_out=len(links_out),
            links_unresolved=sum(1 for r in links_out if r.resolved_path is None),
            backlinks=len(self.index.links_to(key)),
            created=str(created) if created else None,
            modified=iso_from_ns(info.st_mtime_ns if info else 0),
            size=len(text.encode("utf-8")),
            sha256=digest,
        )

    def random_note(self, args: m.RandomArgs) -> m.RandomOutput:
        tags = [args.tag.strip().lstrip("#").casefold()] if args.tag else []
        allowed = self.index.filtered_doc_ids(tags=tags, folder=args.folder)
        path = self.index.random_path(allowed, random.random())
        if path is None:
            raise ToolFailure("not_found", "no note matches", "drop the tag or folder filter")
        doc = self.index.document(path)
        assert doc is not None
        return m.RandomOutput(path=path, title=doc.title, tags=doc.tags)
