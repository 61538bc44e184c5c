"""How complete the notes index says it is, across server restarts and re-checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_tools.core.tooling import Environment
from mcp_tools.servers.notes.config import NotesConfig
from mcp_tools.servers.notes.models import SearchArgs
from mcp_tools.servers.notes.service import NotesService


def service_for(tmp_path: Path, vault: Path) -> NotesService:
    env = Environment(data_dir=tmp_path / "data", state_dir=tmp_path / "state")
    return NotesService(NotesConfig(vault=str(vault), watch=False), env)


def make_vault(path: Path, count: int) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for number in range(count):
        (path / f"n{number}.md").write_text(f"# Note {number}\n\nglacier {number}\n", encoding="utf-8")
    return path


def test_a_first_build_in_progress_is_partial(tmp_path: Path) -> None:
    service = service_for(tmp_path, make_vault(tmp_path / "vault", 3))
    try:
        state = service.index_state()
        assert state.complete is False and state.indexed == 0
        service.reconcile()
        state = service.index_state()
        assert (state.complete, state.indexed, state.total) == (True, 3, 3)
    finally:
        service.close()


def test_an_index_built_by_an_earlier_process_is_complete_before_any_recheck(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault", 12)
    first = service_for(tmp_path, vault)
    first.reconcile()
    first.close()

    fresh = service_for(tmp_path, vault)  # a new process: nothing reconciled yet
    try:
        state = fresh.index_state()
        assert (state.complete, state.indexed, state.total) == (True, 12, 12)
        fresh.progress.running = True  # the start-up re-check is under way
        fresh.progress.done, fresh.progress.total = 3, 12
        assert fresh.index_state().complete is True
        found = fresh.search(SearchArgs(query="glacier"))
        assert "partial" not in (found.note or "")
    finally:
        fresh.close()


def test_an_index_built_for_another_vault_is_not_complete_for_this_one(tmp_path: Path) -> None:
    first = service_for(tmp_path, make_vault(tmp_path / "old", 2))
    first.reconcile()
    first.close()
    moved = service_for(tmp_path, make_vault(tmp_path / "new", 5))
    try:
        assert moved.index_state().complete is False
        moved.reconcile()
        state = moved.index_state()
        assert (state.complete, state.indexed) == (True, 5)
    finally:
        moved.close()


def long_key(depth: int = 5) -> str:
    """A note path over the 1024 characters the notes tools accept, each folder name a legal 240."""
    return "/".join(f"{number}" + "f" * 239 for number in range(depth)) + "/deep plan.md"


def test_notes_left_out_of_the_index_are_reported_with_why(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault", 2)
    deep = long_key()
    assert len(deep) > 1024
    (vault / deep).parent.mkdir(parents=True)
    (vault / deep).write_text("# Deep\n\nglacier far down\n", encoding="utf-8")
    (vault / "latin1.md").write_bytes("# Caf\xe9\n".encode("latin-1"))
    service = service_for(tmp_path, vault)
    try:
        service.config.max_note_bytes = 1000
        (vault / "big.md").write_text("glacier " * 200, encoding="utf-8")
        done = service.reconcile()
        assert sorted(done.skipped) == sorted([deep, "latin1.md", "big.md"])
        state = service.index_state()
        assert (state.indexed, state.skipped) == (2, 3)
        reasons = {note.path: note.reason for note in state.skipped_notes}
        assert reasons == {
            deep: f"cannot be read: path is {len(deep)} characters long; the limit is 1024",
            "latin1.md": "not UTF-8 (byte 5)",
            "big.md": "1600 bytes, over [notes] max_note_bytes (1000)",
        }
        found = service.search(SearchArgs(query="glacier"))
        assert found.index.skipped == 3 and "3 notes are not indexed" in (found.note or "")
        shown = found.model_dump(mode="json")["index"]["skipped_notes"]
        assert {note["path"] for note in shown} == set(reasons)

        (vault / deep).rename(vault / "deep plan.md")  # moved to a path the tools can open
        (vault / "big.md").unlink()
        (vault / "latin1.md").write_text("# Café\n", encoding="utf-8")
        service.refresh()
        state = service.index_state()
        assert (state.indexed, state.skipped, state.skipped_notes) == (4, 0, [])
        assert "skipped" not in service.search(SearchArgs(query="glacier")).model_dump(mode="json")["index"]
    finally:
        service.close()


def test_a_note_the_watcher_reports_on_a_path_too_long_is_skipped_not_raised(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault", 1)
    service = service_for(tmp_path, vault)
    try:
        service.reconcile()
        deep = long_key()
        (vault / deep).parent.mkdir(parents=True)
        (vault / deep).write_text("# Deep\n", encoding="utf-8")
        service.apply_changes({deep}, rescan=False)
        state = service.index_state()
        assert state.skipped == 1 and state.skipped_notes[0].reason.startswith("cannot be read: path is")
    finally:
        service.close()


def test_the_index_command_names_each_skipped_note_and_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_tools.cli import main

    vault = make_vault(tmp_path / "vault", 2)
    deep = long_key()
    (vault / deep).parent.mkdir(parents=True)
    (vault / deep).write_text("# Deep\n", encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[server]\nservers = ["notes"]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n'
        f'[notes]\nvault = "{vault}"\nwatch = false\n'
    )
    assert main(["--config", str(config), "notes", "index"]) == 0
    out = capsys.readouterr().out
    assert "2 notes in the index: 2 indexed, 0 unchanged, 0 removed, 1 skipped" in out
    assert f"skipped: {deep}: cannot be read: path is {len(deep)} characters long; the limit is 1024" in out
