"""How complete the notes index says it is, across server restarts and re-checks."""

from __future__ import annotations

from pathlib import Path

from mcp_tools.servers.notes.config import NotesConfig
from mcp_tools.servers.notes.models import SearchArgs
from mcp_tools.servers.notes.service import NotesService
from mcp_tools.tooling import Environment


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
