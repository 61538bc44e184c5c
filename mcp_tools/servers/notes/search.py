"""Hybrid search: FTS5 BM25 ranks fused with cosine ranks by reciprocal rank fusion."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from mcp_tools.servers.notes.embeddings import VectorMatrix
from mcp_tools.servers.notes.index import NoteIndex

RRF_K = 60
COMMON_TERM_SHARE = 0.05  # a term in more than 5% of chunks is left out of the OR query
PRUNE_FROM_CHUNKS = 5_000  # ...of a vault this large; small vaults are fast anyway
TOKEN_RE = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Hit:
    doc_id: int
    chunk_id: int
    heading: str
    snippet: str
    score: float


def query_terms(query: str) -> list[str]:
    return list(dict.fromkeys(fold(t) for t in TOKEN_RE.findall(query)))


def fold(token: str) -> str:
    """Lower case without diacritics, as the FTS5 tokenizer stores terms."""
    decomposed = unicodedata.normalize("NFD", token.lower())
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


def fts_query(terms: list[str], operator: str = "OR") -> str:
    """Terms joined by AND or OR, each quoted so that FTS5 syntax in a query is inert."""
    return f" {operator} ".join(f'"{term}"' for term in terms)


def informative(index: NoteIndex, terms: list[str]) -> list[str]:
    """Drop terms found in most chunks from the OR query: they barely move BM25 and make it scan everything."""
    total = index.vector_counts()[1]
    if len(terms) < 2 or total < PRUNE_FROM_CHUNKS:
        return terms
    counts = index.term_counts(terms)
    kept = [t for t in terms if counts.get(t, 0) <= total * COMMON_TERM_SHARE]
    return kept or terms


def best_per_doc(
    rows: list[tuple[int, int, float, str]], allowed: set[int] | None
) -> list[tuple[int, int, float, str]]:
    seen: set[int] = set()
    out = []
    for row in rows:
        doc_id = row[1]
        if doc_id in seen or (allowed is not None and doc_id not in allowed):
            continue
        seen.add(doc_id)
        out.append(row)
    return out


def lexical_hits(index: NoteIndex, query: str, top_k: int, allowed: set[int] | None, depth: int) -> list[Hit]:
    """Notes with all the words first; notes with some (informative) words fill up the list."""
    terms = query_terms(query)
    if not terms:
        return []
    every = fts_query(terms, "AND")
    rows = best_per_doc(index.lexical(every, depth), allowed)[:top_k]
    some = fts_query(informative(index, terms), "OR")
    if len(rows) < top_k and len(terms) > 1:
        seen = {r[1] for r in rows}
        rows += [r for r in best_per_doc(index.lexical(some, depth), allowed) if r[1] not in seen][: top_k - len(rows)]
    snippets = index.snippets(fts_query(terms, "OR"), [r[0] for r in rows])
    return [Hit(r[1], r[0], r[3], snippets.get(r[0], ""), -float(r[2])) for r in rows]


def vector_hits(
    matrix: VectorMatrix, query_vector: bytes, top_k: int, allowed: set[int] | None
) -> list[tuple[int, int, float]]:
    seen: set[int] = set()
    out = []
    for chunk_id, doc_id, score in matrix.nearest(query_vector, max(top_k * 8, 100), allowed):
        if doc_id in seen:
            continue
        seen.add(doc_id)
        out.append((chunk_id, doc_id, score))
        if len(out) >= top_k:
            break
    return out


def fuse(lexical: list[Hit], semantic: list[tuple[int, int, float]], index: NoteIndex, top_k: int) -> list[Hit]:
    """Reciprocal rank fusion at note level; the snippet comes from the lexical hit when there is one."""
    scores: dict[int, float] = {}
    best: dict[int, Hit] = {}
    for rank, hit in enumerate(lexical):
        scores[hit.doc_id] = scores.get(hit.doc_id, 0.0) + 1.0 / (RRF_K + rank + 1)
        best[hit.doc_id] = hit
    vector_only: dict[int, int] = {}
    for rank, (chunk_id, doc_id, _) in enumerate(semantic):
        scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (RRF_K + rank + 1)
        if doc_id not in best:
            vector_only[doc_id] = chunk_id
    texts = index.chunk_texts(vector_only.values())
    for doc_id, chunk_id in vector_only.items():
        heading, body = texts.get(chunk_id, ("", ""))
        best[doc_id] = Hit(doc_id, chunk_id, heading, make_snippet(body), 0.0)
    ranked = sorted(scores, key=lambda d: -scores[d])[:top_k]
    return [Hit(d, best[d].chunk_id, best[d].heading, best[d].snippet, round(scores[d], 6)) for d in ranked]


def make_snippet(body: str, limit: int = 200) -> str:
    flat = " ".join(body.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + "…"
