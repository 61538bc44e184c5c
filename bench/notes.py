"""Benchmark of the notes index: indexing throughput, incremental re-index, search latency, size, quality.

    .venv/bin/python bench/notes.py               # 10,000 notes
    .venv/bin/python bench/notes.py --notes 1000  # a quick run

Embeddings come from an in-process deterministic embedder (hashed bag of words, 384 dimensions)
that knows the generator's synonym pairs, so the "with embeddings" figures measure this code
(chunking, storage, fusion, vector search) rather than a model; the paraphrase quality figures
show that fusion surfaces semantic matches, not how good any real model is.
"""

# ruff: noqa: E402  (the import path is fixed before the standard library is imported)
from __future__ import annotations

import os
import sys

# bench/ holds scripts named like standard modules (calendar.py): keep it off the import path
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import argparse
import hashlib
import itertools
import math
import random
import resource
import shutil
import statistics
import tempfile
import time
from array import array
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import percentile
from mcp_tools.core.tooling import Environment
from mcp_tools.servers.notes import models as m
from mcp_tools.servers.notes.config import NotesConfig
from mcp_tools.servers.notes.service import NotesService

DIMENSIONS = 384
TOPICS = 40


def pseudo_word(rng: random.Random, syllables: int) -> str:
    consonants, vowels = "bcdfghklmnprstvz", "aeiou"
    return "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(syllables))


class Corpus:
    """Pseudo-words: a Zipf-ish filler vocabulary, topic words, and per-note signature words with synonyms."""

    def __init__(self, notes: int, seed: int = 7) -> None:
        rng = random.Random(seed)
        self.rng = rng
        words: set[str] = set()

        def fresh(syllables: int) -> str:
            while True:
                word = pseudo_word(rng, syllables)
                if word not in words:
                    words.add(word)
                    return word

        self.filler = [fresh(rng.choice((2, 3))) for _ in range(3000)]
        self.filler_cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(self.filler))))
        self.topics = [[fresh(3) for _ in range(12)] for _ in range(TOPICS)]
        self.signatures = [[fresh(4), fresh(4)] for _ in range(notes)]
        self.synonyms: dict[str, str] = {}
        self.paraphrases: list[list[str]] = []
        for pair in self.signatures:
            alternatives = [fresh(4) for _ in pair]
            self.paraphrases.append(alternatives)
            for original, alternative in zip(pair, alternatives, strict=True):
                self.synonyms[alternative] = original

    def sentence(self, topic: int, length: int) -> str:
        filler = self.rng.choices(self.filler, cum_weights=self.filler_cumulative, k=length)
        for i in range(0, length, 5):
            filler[i] = self.rng.choice(self.topics[topic])
        return " ".join(filler).capitalize() + "."


def note_name(index: int) -> str:
    return f"Note {index:05d}"


def note_folder(index: int) -> str:
    return f"Area {index % 10}/Sub {index % 7}"


def build_vault(root: Path, corpus: Corpus, notes: int, words: int) -> None:
    rng = random.Random(11)
    for index in range(notes):
        topic = index % TOPICS
        links = [f"[[{note_name(rng.randrange(notes))}]]" for _ in range(6)]
        links.append(f"[[{note_folder(j := rng.randrange(notes))}/{note_name(j)}#Details|see also]]")
        signature = " ".join(corpus.signatures[index] * 3)
        paragraphs = []
        remaining = words
        heading_index = 0
        while remaining > 0:
            size = min(remaining, rng.randint(60, 110))
            body = " ".join(corpus.sentence(topic, 12) for _ in range(max(1, size // 12)))
            if heading_index == 1:
                body += f" {signature}."
            if heading_index < 3:
                body += " " + " ".join(links[heading_index * 2 : heading_index * 2 + 3])
            paragraphs.append(
                f"## {['Summary', 'Details', 'Notes', 'More', 'Later', 'End'][heading_index % 6]}\n\n{body}"
            )
            remaining -= size
            heading_index += 1
        tags = f"[area/a{index % 10}, topic/t{topic}]"
        text = (
            f"---\ntags: {tags}\ndate: 2024-{index % 12 + 1:02d}-{index % 28 + 1:02d}\n---\n"
            f"# {note_name(index)}\n\n#status/{'open' if index % 3 else 'done'}\n\n" + "\n\n".join(paragraphs) + "\n"
        )
        path = root / note_folder(index) / f"{note_name(index)}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


class HashedEmbedder:
    """Deterministic, in-process: hashed bag of words after mapping synonyms; unit float32 vectors.

    Like a real model it gives little weight to common words (IDF-like: filler 0.05, topic words
    0.2, rare words 1), so a note's distinctive words decide where its vector points.
    """

    model_id = "bench:hashed-384"

    def __init__(self, synonyms: dict[str, str], weights: dict[str, float]) -> None:
        self.synonyms = synonyms
        self.weights = weights
        self.cache: dict[str, tuple[int, float]] = {}
        self.seconds = 0.0

    def _vector(self, text: str) -> bytes:
        values = [0.0] * DIMENSIONS
        for token in text.lower().split():
            token = token.strip(".,#[]|()")
            if not token:
                continue
            token = self.synonyms.get(token, token)
            slot = self.cache.get(token)
            if slot is None:
                digest = hashlib.blake2b(token.encode(), digest_size=4).digest()
                weight = self.weights.get(token, 1.0)
                slot = (int.from_bytes(digest[:2], "little") % DIMENSIONS, weight if digest[2] & 1 else -weight)
                self.cache[token] = slot
            values[slot[0]] += slot[1]
        norm = math.sqrt(sum(v * v for v in values)) or 1.0
        return array("f", (v / norm for v in values)).tobytes()

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        started = time.perf_counter()
        vectors = [self._vector(t) for t in texts]
        self.seconds += time.perf_counter() - started
        return vectors

    def embed_query(self, text: str) -> bytes:
        return self._vector(text)


def make_service(vault: Path, state: Path, embedder: HashedEmbedder | None) -> NotesService:
    service = NotesService(NotesConfig(vault=str(vault), watch=False), Environment(state, state))
    service.embedder = embedder
    return service


def timed_searches(service: NotesService, queries: list[str]) -> list[float]:
    service.search(m.SearchArgs(query=queries[0]))  # warm-up: loads the vector matrix
    latencies = []
    for query in queries:
        started = time.perf_counter()
        service.search(m.SearchArgs(query=query, top_k=10))
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def quality(service: NotesService, queries: list[tuple[str, str]]) -> tuple[float, float]:
    hits = 0
    reciprocal = 0.0
    for query, relevant in queries:
        paths = [r.path for r in service.search(m.SearchArgs(query=query, top_k=10)).results]
        if relevant in paths[:5]:
            hits += 1
        if relevant in paths:
            reciprocal += 1 / (paths.index(relevant) + 1)
    return hits / len(queries), reciprocal / len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--words", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3, help="repeats of each timing; medians are printed")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="notes-bench-"))
    try:
        run(work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work: Path, args: argparse.Namespace) -> None:
    corpus = Corpus(args.notes)
    vault = work / "vault"
    started = time.perf_counter()
    build_vault(vault, corpus, args.notes, args.words)
    size_mb = sum(p.stat().st_size for p in vault.rglob("*.md")) / 1e6
    print(
        f"vault: {args.notes} notes, ~{args.words} words each, {size_mb:.1f} MB, "
        f"built in {time.perf_counter() - started:.1f}s"
    )
    weights = {word: 0.05 for word in corpus.filler} | {word: 0.2 for topic in corpus.topics for word in topic}
    embedder = HashedEmbedder(corpus.synonyms, weights)

    lexical_rates, hybrid_rates, embedder_rates, incremental_times = [], [], [], []
    lexical_service = hybrid_service = None
    for attempt in range(args.repeat):
        for service in (lexical_service, hybrid_service):
            if service:
                service.close()
        lexical_state, hybrid_state = work / f"lexical-{attempt}", work / f"hybrid-{attempt}"
        lexical_service = make_service(vault, lexical_state, None)
        started = time.perf_counter()
        lexical_service.reconcile()
        lexical_rates.append(args.notes / (time.perf_counter() - started))

        hybrid_service = make_service(vault, hybrid_state, embedder)
        embedder.seconds = 0.0
        started = time.perf_counter()
        hybrid_service.reconcile()
        hybrid_service.embed_pending()
        elapsed = time.perf_counter() - started
        hybrid_rates.append(args.notes / elapsed)
        embedder_rates.append(args.notes / (elapsed - embedder.seconds))
        if attempt < args.repeat - 1:
            shutil.rmtree(lexical_state)
            shutil.rmtree(hybrid_state)
    assert lexical_service is not None and hybrid_service is not None
    print(
        f"cold index, lexical:          {statistics.median(lexical_rates):7.0f} notes/s  (runs: "
        + ", ".join(f"{r:.0f}" for r in lexical_rates)
        + ")"
    )
    print(
        f"cold index, with embeddings:  {statistics.median(hybrid_rates):7.0f} notes/s  (runs: "
        + ", ".join(f"{r:.0f}" for r in hybrid_rates)
        + ")"
    )
    print(
        f"  of which outside the embedder: {statistics.median(embedder_rates):7.0f} notes/s "
        "(the in-process test embedder is pure Python; a real model's cost replaces it)"
    )

    rng = random.Random(5)
    changed_count = max(1, args.notes // 100)
    for attempt in range(args.repeat):
        for index in rng.sample(range(args.notes), changed_count):
            path = vault / note_folder(index) / f"{note_name(index)}.md"
            with path.open("a", encoding="utf-8") as handle:
                handle.write(f"\nEdited {attempt} {corpus.sentence(index % TOPICS, 10)}\n")
        started = time.perf_counter()
        outcome = hybrid_service.reconcile()
        embedded = hybrid_service.embed_pending()
        incremental_times.append(time.perf_counter() - started)
        assert outcome.indexed == changed_count, outcome
    print(
        f"incremental re-index of 1% ({changed_count} notes, {embedded} chunks re-embedded): "
        f"{statistics.median(incremental_times) * 1000:.0f} ms median"
    )
    lexical_service.reconcile()

    topic_queries = [
        " ".join(rng.sample(corpus.topics[rng.randrange(TOPICS)], 2) + rng.sample(corpus.filler[:200], 1))
        for _ in range(args.queries)
    ]
    for label, service in (("lexical", lexical_service), ("hybrid", hybrid_service)):
        p50s, p95s = [], []
        for _ in range(args.repeat):
            latencies = timed_searches(service, topic_queries)
            p50s.append(percentile(latencies, 0.5))
            p95s.append(percentile(latencies, 0.95))
        mode = service.search(m.SearchArgs(query=topic_queries[0])).mode
        print(
            f"search {label:8s} ({mode}): p50 {statistics.median(p50s):6.1f} ms, p95 {statistics.median(p95s):6.1f} ms"
        )

    print(
        f"index size on disk: lexical {lexical_service.index.size_on_disk() / 1e6:.1f} MB, "
        f"with embeddings {hybrid_service.index.size_on_disk() / 1e6:.1f} MB"
    )

    sample = rng.sample(range(args.notes), 50)
    literal = [(" ".join(corpus.signatures[i]), f"{note_folder(i)}/{note_name(i)}.md") for i in sample[:25]]
    paraphrased = [(" ".join(corpus.paraphrases[i]), f"{note_folder(i)}/{note_name(i)}.md") for i in sample[25:]]
    print("quality (50 queries: 25 literal, 25 paraphrased with no query word in the note):")
    for label, service in (("lexical", lexical_service), ("hybrid", hybrid_service)):
        recall_all, mrr_all = quality(service, literal + paraphrased)
        recall_para, mrr_para = quality(service, paraphrased)
        print(
            f"  {label:8s} recall@5 {recall_all:.2f}  MRR {mrr_all:.2f}   (paraphrased only: recall@5 "
            f"{recall_para:.2f}, MRR {mrr_para:.2f})"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (RSS): {peak:.0f} MB")
    lexical_service.close()
    hybrid_service.close()


if __name__ == "__main__":
    main()
