"""A first index of a whole vault: large commits that still let tools in.

However a reconcile batches its work, the index it leaves is the one indexing the notes one at
a time would leave, row for row.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.core.tooling import Environment
from mcp_tools.servers.notes import indexing as indexing_module
from mcp_tools.servers.notes.config import NotesConfig
from mcp_tools.servers.notes.index import FileState, sha256_hex
from mcp_tools.servers.notes.links import Resolver
from mcp_tools.servers.notes.markdown import parse_note
from mcp_tools.servers.notes.service import NotesService
from tests.servers.notes.fixtures import VAULT, write_vault


def linked_vault(path: Path) -> Path:
    """The shared vault plus notes that link forwards, backwards, by alias, by path and to nothing,
    and two notes of one name in different folders (which the closest one wins)."""
    notes = dict(VAULT)
    for number in range(24):
        folder = ("Daily", "Work/Deep", "Work")[number % 3]
        notes[f"{folder}/Log {number:02d}.md"] = (
            f"---\naliases: [L{number}]\n---\n# Log {number}\n\n"
            f"Next: [[Log {number + 1:02d}]]; before: [[L{number - 1}]]; "
            f"[[Work/Log {number + 3:02d}]] and [md](../Home.md) and [[Nowhere {number}]].\n"
            f"See [[Shared]] and ![[Shared#Part]].\n"
        )
    notes["Daily/Shared.md"] = "# Shared (daily)\n\n## Part\n\nx\n"
    notes["Work/Deep/Shared.md"] = "# Shared (work)\n\n[[Log 01]]\n"
    return write_vault(path, notes)


def service_at(state: Path, vault: Path) -> NotesService:
    return NotesService(NotesConfig(vault=str(vault), watch=False), Environment(state, state))


def tables(service: NotesService) -> dict[str, list[tuple[Any, ...]]]:
    index = service.index
    with index.lock:
        return {
            table: index.db.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
            for table in ("documents", "chunks", "chunks_fts", "names", "names_fts", "tags", "links")
        }


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return linked_vault(tmp_path / "vault")


@pytest.fixture
def one_at_a_time(tmp_path: Path, vault: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The index left by indexing each note alone, in the order a reconcile finds them."""
    service = service_at(tmp_path / "alone", vault)
    try:
        for key, info in service.scan():
            assert service.index_path(key, info=info) == "indexed"
        return tables(service)
    finally:
        service.close()


@pytest.mark.parametrize("batch", [5000, 3, 1], ids=["one-batch", "small-batches", "note-by-note"])
def test_a_reconcile_leaves_the_index_indexing_one_note_at_a_time_leaves(
    tmp_path: Path,
    vault: Path,
    one_at_a_time: dict[str, list[tuple[Any, ...]]],
    monkeypatch: pytest.MonkeyPatch,
    batch: int,
) -> None:
    monkeypatch.setattr(indexing_module, "RECONCILE_BATCH", batch)
    service = service_at(tmp_path / "bulk", vault)
    try:
        done = service.reconcile()
        assert (done.indexed, done.skipped) == (len(one_at_a_time["documents"]), [])
        assert tables(service) == one_at_a_time
        resolved = {row[5]: row[11] for row in one_at_a_time["links"] if row[2] == "Daily/Log 03.md"}
        assert resolved["Log 04"] == "Work/Deep/Log 04.md" and resolved["L2"] == "Work/Log 02.md"  # forward, alias
        assert resolved["Shared"] == "Daily/Shared.md" and resolved["Nowhere 3"] is None
    finally:
        service.close()


def test_a_reconcile_commits_as_soon_as_a_tool_waits_for_the_index(
    tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(indexing_module, "COMMIT_SECONDS", 3600.0)  # only a waiting tool ends a batch
    service = service_at(tmp_path / "state", vault)
    total = len(list(service.scan()))
    seen: list[int] = []
    original = NotesService.index_path

    def index_path(self: NotesService, key: str, *args: Any, **kwargs: Any) -> str:
        outcome = original(self, key, *args, **kwargs)
        if self.progress.done == 9:  # the 10th note: a tool asks for the index now
            tool = threading.Thread(target=lambda: seen.append(self.index.count()))
            tool.start()
            assert self.index.lock.waiting.wait(5)
        return outcome

    monkeypatch.setattr(NotesService, "index_path", index_path)
    progress: list[tuple[int, int]] = []
    try:
        service.reconcile(lambda done, of: progress.append((done, of)))
        assert seen == [10]  # it got in right after the note it waited on
        assert progress == [(10, total), (total, total)]
        assert service.index.count() == total
    finally:
        service.close()


def test_a_batch_ends_after_commit_seconds(tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = iter(range(1, 10**6))
    monkeypatch.setattr(indexing_module, "clock", lambda: next(ticks) * 0.4)  # 0.4 s a look at the clock
    service = service_at(tmp_path / "state", vault)
    total = len(list(service.scan()))
    progress: list[tuple[int, int]] = []
    try:
        service.reconcile(lambda done, of: progress.append((done, of)))
        # a batch starts at t, ends at t + 1.0: after the notes seen at t + 0.4, 0.8 and 1.2
        assert progress == [(min(done, total), total) for done in range(3, total + 3, 3)]
        assert service.index.count() == total
    finally:
        service.close()


def test_a_reconcile_told_to_stop_leaves_the_notes_it_indexed_with_their_links(
    tmp_path: Path, vault: Path, one_at_a_time: dict[str, list[tuple[Any, ...]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    service = service_at(tmp_path / "state", vault)
    original = NotesService.index_path

    def index_path(self: NotesService, key: str, *args: Any, **kwargs: Any) -> str:
        if self.progress.done == 12:
            self.stopping.set()
        return original(self, key, *args, **kwargs)

    monkeypatch.setattr(NotesService, "index_path", index_path)
    try:
        service.reconcile()
        rows = tables(service)
        assert len(rows["documents"]) == 13
        indexed = {row[1] for row in rows["documents"]}
        linking = {row[2] for row in one_at_a_time["links"] if row[2] in indexed}
        assert {row[2] for row in rows["links"]} == linking and len(linking) > 5
    finally:
        service.close()


def test_a_new_note_the_watcher_indexed_meanwhile_is_updated_not_doubled(tmp_path: Path, vault: Path) -> None:
    service = service_at(tmp_path / "state", vault)
    try:
        service.index_path("Home.md")
        text = "# Home again\n\n[[Projects/Beta]]\n"
        data = text.encode()
        state = FileState(1, len(data), sha256_hex(data))
        service.index.upsert("Home.md", text, parse_note(text, "Home"), state, None, new=True)  # told it is new
        rows = tables(service)
        assert [row[1:3] for row in rows["documents"]] == [("Home.md", "Home again")]
        assert [(row[2], row[11]) for row in rows["links"]] == [("Home.md", None)]  # Beta is not indexed
    finally:
        service.close()


def test_resolving_many_links_at_once_answers_what_resolving_each_alone_does(vault: Path) -> None:
    notes = {str(p.relative_to(vault)): p.read_text(encoding="utf-8") for p in sorted(vault.rglob("*.md"))}
    resolver = Resolver(notes, {path: parse_note(text, Path(path).stem).aliases for path, text in notes.items()})
    asked = [
        (source, link.style, link.target)
        for source, text in notes.items()
        for link in parse_note(text, Path(source).stem).links
    ]
    # the same targets from other folders and names, and links to the note itself
    asked += [
        (f"{folder}/Other.md", style, target) for folder in ("Daily", "Work", "Work/Deep") for _, style, target in asked
    ]
    asked += [("Daily/Log 00.md", "wiki", ""), ("Work/Log 02.md", "wiki", " "), ("Home.md", "markdown", "")]
    expected = [resolver.resolve_target(*link).path for link in asked]
    assert resolver.resolve_paths(asked) == expected
    assert expected.count("Daily/Shared.md") and expected.count("Work/Deep/Shared.md")  # the folder decides
    assert expected[-3:] == ["Daily/Log 00.md", "Work/Log 02.md", "Home.md"]
