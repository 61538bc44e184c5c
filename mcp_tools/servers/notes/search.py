"""Search: a note's own name first, then body BM25, name and vector ranks fused by reciprocal rank fusion.

One result per note, with its best passages.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from mcp_tools.servers.notes.embeddings import VectorMatrix
from mcp_tools.servers.notes.index import NoteIndex
from mcp_tools.servers.notes.markdown import name_key

RRF_K = 60
PASSAGES = 3  # best passages shown per note
# a name that is most of the query is stronger evidence than one more ranking of the same words
NAME_WEIGHT = 2.0
COMMON_TERM_SHARE = 0.05  # a term in more than 5% of chunks is left out of the OR query
PRUNE_FROM_CHUNKS = 5_000  # ...of a vault this large; small vaults are fast anyway
TOKEN_RE = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Passage:
    chunk_id: int
    heading: str
    snippet: str


@dataclass(frozen=True)
class Hit:
    """One note in the results, with its best passages (the first is the one that matched best)."""

    doc_id: int
    passages: tuple[Passage, ...]
    score: float


@dataclass(frozen=True)
class NameMatches:
    """Notes found by what they are called: exact title/alias/file-name matches, then by name words."""

    exact: list[tuple[int, int]]  # (doc id, kind): file name 0, title 1, alias 2
    ranked: list[int]


def query_terms(query: str) -> list[str]:
    return list(dict.fromkeys(fold(t) for t in TOKEN_RE.findall(query)))


def fold(token: str) -> str:
    """Lower case without diacritics, as the FTS5 tokenizer stores terms."""
    if token.isascii():  # nothing to decompose or compose
        return token.lower()
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


def group_by_doc(
    rows: list[tuple[int, int, float, str]], allowed: set[int] | None
) -> dict[int, list[tuple[int, int, float, str]]]:
    """Chunk rows (best first) grouped by note, notes in the order of their best chunk."""
    grouped: dict[int, list[tuple[int, int, float, str]]] = {}
    for row in rows:
        doc_id = row[1]
        if allowed is not None and doc_id not in allowed:
            continue
        grouped.setdefault(doc_id, []).append(row)
    return grouped


def lexical_hits(
    index: NoteIndex, query: str, top_k: int, allowed: set[int] | None, depth: int, passages: int = PASSAGES
) -> list[Hit]:
    """Notes with all the words first; notes with some (informative) words fill up the list."""
    terms = query_terms(query)
    if not terms:
        return []
    grouped = group_by_doc(index.lexical(fts_query(terms, "AND"), depth), allowed)
    docs = dict(list(grouped.items())[:top_k])
    if len(docs) < top_k and len(terms) > 1:
        some = index.lexical(fts_query(informative(index, terms), "OR"), depth)
        for doc_id, rows in group_by_doc(some, allowed).items():
            if len(docs) >= top_k:
                break
            docs.setdefault(doc_id, rows)
    # snippets are left empty here: `rank` computes them for the notes it keeps
    return [
        Hit(doc_id, tuple(Passage(r[0], r[3], "") for r in rows[:passages]), -float(rows[0][2]))
        for doc_id, rows in docs.items()
    ]


def name_matches(index: NoteIndex, query: str, allowed: set[int] | None, limit: int) -> NameMatches:
    """A query that is a note's title, alias or file name finds that note; name words rank the rest."""
    key = name_key(" ".join(query.split()))
    exact = [(d, kind) for d, kind in index.exact_names(key) if allowed is None or d in allowed] if key else []
    terms = query_terms(query)
    if not terms:
        return NameMatches(exact, [])
    wanted = set(terms)
    ranked = []
    for doc_id, names in index.name_matches(fts_query(terms, "OR"), limit * 4):
        if allowed is not None and doc_id not in allowed:
            continue
        # a name counts when it is most of the query, or the query part of it: "PARA" for "PARA method",
        # not "Data" for "complex data views for the data-obsessed"
        for name in names.split("\n"):
            words = {fold(word) for word in TOKEN_RE.findall(name)}
            if words and ((words <= wanted and 2 * len(words) >= len(wanted)) or wanted <= words):
                ranked.append(doc_id)
                break
    return NameMatches(exact, ranked[:limit])


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


def rank(
    query: str,
    lexical: list[Hit],
    names: NameMatches,
    semantic: list[tuple[int, int, float]],
    index: NoteIndex,
    top_k: int,
) -> list[Hit]:
    """Exact name matches first; the rest by reciprocal rank fusion of body, name and vector ranks.

    Fusing ranks rather than adding scores keeps any one field from winning by repetition: a long
    note counts once however many of its chunks repeat its title. Snippets are made only for the
    notes kept.
    """
    scores: dict[int, float] = {}
    rankings = (
        (1.0, [h.doc_id for h in lexical]),
        (NAME_WEIGHT, names.ranked),
        (1.0, [doc_id for _, doc_id, _ in semantic]),
    )
    for weight, ranking in rankings:
        for position, doc_id in enumerate(ranking):
            scores[doc_id] = scores.get(doc_id, 0.0) + weight / (RRF_K + position + 1)
    kinds: dict[int, int] = {}
    for doc_id, kind in names.exact:
        kinds[doc_id] = min(kind, kinds.get(doc_id, kind))
    exact = sorted(kinds, key=lambda d: (kinds[d], -scores.get(d, 0.0)))
    ceiling = max(scores.values(), default=0.0)
    for position, doc_id in enumerate(exact):  # above everything else, in their own order
        scores[doc_id] = ceiling + 1.0 + (len(exact) - position)
    ordered = sorted(scores, key=lambda d: -scores[d])[:top_k]
    found = {h.doc_id: h for h in lexical}
    missing: dict[int, int | None] = {d: None for d in ordered if d not in found}
    for chunk_id, doc_id, _ in semantic:
        if doc_id in missing and missing[doc_id] is None:
            missing[doc_id] = chunk_id
    first = index.first_chunks([d for d, c in missing.items() if c is None])
    chunk_of = {d: (c if c is not None else first.get(d)) for d, c in missing.items()}
    texts = index.chunk_texts(c for c in chunk_of.values() if c is not None)
    shown = [p.chunk_id for d in ordered if d in found for p in found[d].passages]
    snippets = index.snippets(fts_query(query_terms(query), "OR"), shown)
    hits = []
    for doc_id in ordered:
        if doc_id in found:
            kept = found[doc_id].passages
            passages = tuple(Passage(p.chunk_id, p.heading, snippets.get(p.chunk_id, "")) for p in kept)
        else:
            first_chunk = chunk_of.get(doc_id)
            heading, body = texts.get(first_chunk, ("", "")) if first_chunk is not None else ("", "")
            passages = (Passage(first_chunk or 0, heading, make_snippet(body)),)
        hits.append(Hit(doc_id, passages, round(scores[doc_id], 6)))
    return hits


def make_snippet(body: str, limit: int = 200) -> str:
    flat = " ".join(body.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + "…"
