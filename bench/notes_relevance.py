"""Relevance of notes search on a real vault: top-1, top-5 and MRR over known-answer queries.

    git clone --depth 1 https://github.com/obsidian-community/obsidian-hub /tmp/obsidian-hub
    .venv/bin/python bench/notes_relevance.py --vault /tmp/obsidian-hub

The queries below were written for obsidian-hub (6,500 notes: plugin pages, people, concepts,
guides). Each names the one note a person would expect first: a title, an alias, a file name,
a person, a concept described in the note's words, or a paraphrase that shares no word with the
note. Lexical search always runs; `--model-path` adds hybrid search with all-MiniLM-L6-v2 through
fastembed, from the folder `bench/make_minilm_onnx.py` writes. The cold
index rate is printed too. The vault is read, never changed; the index lives in a temp dir.

`--against REV` compares the cold lexical index of this checkout with a git revision's, in one
run: each side indexes the vault in its own process (`--rounds` times, interleaved; the rate is
notes per CPU second of that process, so other load on the machine counts less), and the run
fails unless both return the same top 10 (paths and scores) for every query and the same rows in
every index table. Each side also reports the p50 of a search (each query three times, CPU
seconds of its process).

    .venv/bin/python bench/notes_relevance.py --vault /tmp/obsidian-hub --against 6728c33
"""

# ruff: noqa: E402  (the import path is fixed before the standard library is imported)
from __future__ import annotations

import os
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != BENCH]

import argparse
import hashlib
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

if "--source" in sys.argv:  # a child measuring another checkout (see --against)
    sys.path.insert(0, sys.argv[sys.argv.index("--source") + 1])
else:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.append(BENCH)  # last, so no bench script shadows a standard module

try:
    from mcp_tools.core.tooling import Environment
except ImportError:  # a revision from before the folders by layer (--against ffd6307)
    from mcp_tools.tooling import Environment  # type: ignore[no-redef]
from mcp_tools.servers.notes import models as m
from mcp_tools.servers.notes.config import NotesConfig
from mcp_tools.servers.notes.service import NotesService

PLUGINS = "02 - Community Expansions/02.05 All Community Expansions/Plugins/"
PEOPLE = "01 - Community/People/"
CONCEPTS = "05 - Concepts/"
GUIDES = "04 - Guides, Workflows, & Courses/"

# (kind, query, the note a person expects first)
QUERIES: list[tuple[str, str, str]] = [
    ("title", "Dataview", PLUGINS + "dataview.md"),
    ("title", "Templater", PLUGINS + "templater-obsidian.md"),
    ("title", "PARA method", CONCEPTS + "PARA.md"),
    ("title", "Zettelkasten", CONCEPTS + "Zettelkasten.md"),
    ("title", "Maps of Content", CONCEPTS + "Maps of Content (MOC).md"),
    ("title", "Excalidraw", PLUGINS + "obsidian-excalidraw-plugin.md"),
    ("title", "Kanban", PLUGINS + "obsidian-kanban.md"),
    ("title", "Obsidian Git", PLUGINS + "obsidian-git.md"),
    ("title", "Periodic Notes", PLUGINS + "periodic-notes.md"),
    ("title", "Digital garden", CONCEPTS + "Digital garden.md"),
    ("title", "Spaced repetition", CONCEPTS + "Spaced repetition.md"),
    ("title", "YAML frontmatter", CONCEPTS + "YAML frontmatter.md"),
    ("alias", "MOC", CONCEPTS + "Maps of Content (MOC).md"),
    ("alias", "Tasks", PLUGINS + "obsidian-tasks-plugin.md"),
    ("file name", "templater-obsidian", PLUGINS + "templater-obsidian.md"),
    ("file name", "obsidian-kanban", PLUGINS + "obsidian-kanban.md"),
    ("person", "kepano", PEOPLE + "kepano.md"),
    ("person", "blacksmithgu", PEOPLE + "blacksmithgu.md"),
    ("person", "zsviczian", PEOPLE + "zsviczian.md"),
    ("person", "SilentVoid13", PEOPLE + "SilentVoid13.md"),
    ("concept", "complex data views for the data-obsessed", PLUGINS + "dataview.md"),
    ("concept", "markdown-backed kanban boards", PLUGINS + "obsidian-kanban.md"),
    ("concept", "backup your vault with git", PLUGINS + "obsidian-git.md"),
    ("concept", "calendar view of your daily notes", PLUGINS + "calendar.md"),
    ("concept", "Obsidian for tabletop roleplaying games", GUIDES + "for TTRPG.md"),
    ("concept", "vim key bindings in Obsidian", GUIDES + "for Vim users.md"),
    ("concept", "flashcards for long-term memorization", CONCEPTS + "Spaced repetition.md"),
    ("concept", "edit and view Excalidraw drawings", PLUGINS + "obsidian-excalidraw-plugin.md"),
    ("paraphrase", "version control history for my notes", PLUGINS + "obsidian-git.md"),
    ("paraphrase", "board with columns to track work", PLUGINS + "obsidian-kanban.md"),
    ("paraphrase", "hand-drawn sketches and diagrams", PLUGINS + "obsidian-excalidraw-plugin.md"),
    ("paraphrase", "reusable note skeletons filled in automatically", PLUGINS + "templater-obsidian.md"),
]


def make_service(vault: Path, state: Path, model_path: str | None) -> NotesService:
    config = NotesConfig(vault=str(vault), watch=False)
    if model_path:
        from make_minilm_onnx import MODEL_NAME, register  # the folder bench/make_minilm_onnx.py writes

        register()
        config = NotesConfig(
            vault=str(vault),
            watch=False,
            embeddings="fastembed",
            embedding_model=MODEL_NAME,
            embedding_model_path=model_path,
        )
    return NotesService(config, Environment(state, state))


def evaluate(service: NotesService) -> dict[str, object]:
    ranks: list[int | None] = []
    misses: list[str] = []
    latencies: list[float] = []
    for kind, query, expected in QUERIES:
        started = time.perf_counter()
        paths = [r.path for r in service.search(m.SearchArgs(query=query, top_k=10)).results]
        latencies.append((time.perf_counter() - started) * 1000)
        rank = paths.index(expected) + 1 if expected in paths else None
        ranks.append(rank)
        if rank != 1:
            misses.append(f"  {kind:9} {query!r}: rank {rank or '>10'} (first: {paths[0] if paths else '-'})")
    count = len(QUERIES)
    return {
        "top1": sum(r == 1 for r in ranks) / count,
        "top5": sum(r is not None and r <= 5 for r in ranks) / count,
        "mrr": sum(1 / r for r in ranks if r) / count,
        "p50_ms": statistics.median(latencies),
        "misses": misses,
    }


INDEX_TABLES = ("documents", "chunks", "tags", "names", "links", "chunks_fts", "names_fts")


def index_digest(service: NotesService) -> dict[str, str]:
    """Every row of every index table, order-independent, as one digest per table."""
    digests = {}
    with service.index.lock:
        for table in INDEX_TABLES:
            rows = sorted(repr(row) for row in service.index.db.execute(f"SELECT * FROM {table}"))
            digests[table] = hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]
    return digests


def child(vault: Path) -> None:
    """Index `vault` cold with the mcp_tools on sys.path; print the rate, the top 10s and the tables."""
    state = Path(tempfile.mkdtemp(prefix="notes-relevance-child-"))
    try:
        service = make_service(vault, state, None)
        started = time.process_time()
        indexed = service.reconcile().indexed
        seconds = time.process_time() - started
        top: dict[str, list[tuple[str, float]]] = {}
        searches: list[float] = []
        for repeat in range(3):  # each query three times: the p50 of all, in CPU seconds of this process
            for _, query, _ in QUERIES:
                began = time.process_time()
                results = service.search(m.SearchArgs(query=query, top_k=10)).results
                searches.append(time.process_time() - began)
                if not repeat:
                    top[query] = [(r.path, round(r.score, 9)) for r in results]
        figures = {"rate": indexed / seconds, "indexed": indexed, "search_p50": statistics.median(searches)}
        print(json.dumps(figures | {"top": top, "tables": index_digest(service)}))
        service.close()
    finally:
        shutil.rmtree(state, ignore_errors=True)


def against(vault: Path, revision: str, rounds: int) -> int:
    from revision import exported

    runs: dict[str, list[dict[str, object]]] = {revision: [], "this": []}
    with exported(revision) as before:
        sources = {revision: before, "this": Path(__file__).resolve().parents[1]}
        for _ in range(rounds):
            for name, source in sources.items():
                out = subprocess.run(
                    [sys.executable, __file__, "--vault", str(vault), "--source", str(source)],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                runs[name].append(json.loads(out))
    rates = {name: statistics.median(float(r["rate"]) for r in results) for name, results in runs.items()}  # type: ignore[arg-type]
    print(f"cold lexical index of {vault} ({runs['this'][0]['indexed']} notes), median of {rounds} interleaved runs")
    for name, rate in rates.items():
        print(f"  {name:10} {rate:7.0f} notes per CPU second")
    print(f"  ratio      {rates['this'] / rates[revision]:7.2f}x")
    for name, results in runs.items():
        p50 = statistics.median(float(r.get("search_p50", "nan")) for r in results)  # type: ignore[arg-type]
        print(f"  {name:10} search p50 {p50 * 1000:6.2f} ms of CPU (32 queries, top 10)")
    same_top = all(r["top"] == runs[revision][0]["top"] for results in runs.values() for r in results)
    same_tables = all(r["tables"] == runs[revision][0]["tables"] for results in runs.values() for r in results)
    print(f"  top 10 of all {len(QUERIES)} queries identical: {same_top}; every index table identical: {same_tables}")
    if not same_tables:
        old, new = runs[revision][0]["tables"], runs["this"][0]["tables"]
        print("  tables that differ:", [t for t in INDEX_TABLES if old[t] != new[t]])  # type: ignore[index]
    return 0 if same_top and same_tables else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", required=True, type=Path, help="a checkout of obsidian-hub")
    parser.add_argument("--model-path", help="a local fastembed model folder, for the hybrid figures")
    parser.add_argument("--verbose", action="store_true", help="list the queries whose note was not first")
    parser.add_argument("--state", type=Path, help="keep the indexes here and reuse them (no re-embedding)")
    parser.add_argument("--against", metavar="REV", help="compare the cold lexical index with a git revision's")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each side with --against")
    parser.add_argument("--source", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.vault.is_dir():
        parser.error(f"{args.vault} is not a folder")
    if args.source:
        child(args.vault)
        return
    if args.against:
        sys.exit(against(args.vault, args.against, args.rounds))
    work = args.state or Path(tempfile.mkdtemp(prefix="notes-relevance-"))
    try:
        modes = [("lexical", None)] + ([("hybrid", args.model_path)] if args.model_path else [])
        print(f"{len(QUERIES)} known-answer queries over {args.vault}")
        print(f"{'mode':8} {'top-1':>6} {'top-5':>6} {'MRR':>6} {'p50 ms':>7} {'index notes/s':>14}")
        for mode, model_path in modes:
            service = make_service(args.vault, work / mode, model_path)
            started = time.perf_counter()
            indexed = service.reconcile().indexed
            elapsed = time.perf_counter() - started
            rate = f"{indexed / elapsed:14.0f}" if indexed else f"{'(reused)':>14}"
            if model_path:
                embed_started = time.perf_counter()
                chunks = service.embed_pending()
                print(f"(embedded {chunks} chunks in {time.perf_counter() - embed_started:.0f} s)")
            result = evaluate(service)
            service.close()
            print(
                f"{mode:8} {result['top1']:6.2f} {result['top5']:6.2f} {result['mrr']:6.3f} "
                f"{result['p50_ms']:7.1f} {rate}"
            )
            if args.verbose:
                print("\n".join(result["misses"]))  # type: ignore[arg-type]
    finally:
        if args.state is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
