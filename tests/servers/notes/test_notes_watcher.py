"""Changes made outside the server: the watcher, start-up reconciliation, and the index CLI command."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.core.tooling import Environment
from mcp_tools.servers.notes.config import NotesConfig
from mcp_tools.servers.notes.service import NotesService
from tests.harness import connect, ok
from tests.servers.notes.fixtures import VAULT, notes_settings, vault, wait_for, wait_indexed  # noqa: F401

pytestmark = pytest.mark.anyio


async def search_paths(client: Any, query: str) -> list[str]:
    result = ok(await client.call_tool("notes_search", {"query": query}))
    return [r["path"] for r in result["results"]]


async def test_watcher_picks_up_outside_edit_create_delete_and_rename(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    settings = notes_settings(vault, watch=True, watch_debounce_ms=50)
    async with connect(tmp_path, settings) as client:
        await wait_indexed(client)

        (vault / "Projects/Beta.md").write_text("# Beta\n\nNow about narwhals and [[Ideas/Idea One]].\n")
        await wait_for(lambda: search_paths(client, "narwhals"))
        assert await search_paths(client, "migration") == []

        (vault / "Inbox").mkdir()
        (vault / "Inbox/Fresh.md").write_text("# Fresh\n\nquokka sightings #wildlife\n")
        assert await wait_for(lambda: search_paths(client, "quokka")) == ["Inbox/Fresh.md"]
        tagged = ok(await client.call_tool("notes_search_by_tag", {"tag": "wildlife"}))
        assert [n["path"] for n in tagged["notes"]] == ["Inbox/Fresh.md"]

        (vault / "Inbox/Fresh.md").rename(vault / "Inbox/Renamed.md")
        assert await wait_for(lambda: _only(search_paths(client, "quokka"), ["Inbox/Renamed.md"]))

        (vault / "Inbox/Renamed.md").unlink()
        await wait_for(lambda: _empty(search_paths(client, "quokka")))

        (vault / "Journal").rename(vault / "Diary")
        assert await wait_for(lambda: _only(search_paths(client, "team"), ["Diary/2024-03-01.md"]))
        backlinks = ok(await client.call_tool("notes_backlinks", {"path": "Ideas/Idea One"}))
        assert "Projects/Beta.md" in [b["source"] for b in backlinks["backlinks"]]


async def _only(paths: Any, expected: list[str]) -> bool:
    return await paths == expected


async def _empty(paths: Any) -> bool:
    return await paths == []


def make_service(tmp_path: Path, vault: Path, **config: Any) -> NotesService:  # noqa: F811
    env = Environment(data_dir=tmp_path / "data", state_dir=tmp_path / "state")
    return NotesService(NotesConfig(vault=str(vault), watch=False, **config), env)


def test_startup_reconciliation_reindexes_only_what_changed(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    service = make_service(tmp_path, vault)
    first = service.reconcile()
    assert (first.indexed, first.unchanged, first.removed) == (len(VAULT), 0, 0)
    service.close()

    (vault / "Projects/Beta.md").write_text("changed\n")
    touched = vault / "Home.md"
    stat = touched.stat()
    os.utime(touched, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))  # same bytes, new mtime
    (vault / "Code.md").unlink()
    (vault / "Added.md").write_text("# Added\n")

    service = make_service(tmp_path, vault)
    second = service.reconcile()
    assert (second.indexed, second.removed) == (2, 1)
    assert second.unchanged == len(VAULT) - 2  # the touched note is hashed, found equal, not re-parsed
    third = service.reconcile()
    assert (third.indexed, third.removed, third.unchanged) == (0, 0, len(VAULT))
    service.close()


def test_index_command_prints_progress_and_a_summary(
    tmp_path: Path,
    vault: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    from mcp_tools.cli import main

    config = tmp_path / "config.toml"
    config.write_text(
        f'[server]\nservers = ["notes"]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n'
        f'[notes]\nvault = "{vault}"\n'
    )
    code = main(["--config", str(config), "notes", "index"])
    captured = capsys.readouterr()
    assert code == 0
    assert f"{len(VAULT)}/{len(VAULT)}" in captured.err and "[#" in captured.err
    assert f"{len(VAULT)} notes in the index: {len(VAULT)} indexed, 0 unchanged, 0 removed" in captured.out
    main(["--config", str(config), "notes", "index"])
    assert f"0 indexed, {len(VAULT)} unchanged" in capsys.readouterr().out


async def test_tools_answer_while_the_first_index_runs(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time as time_module

    from mcp_tools.servers.notes import indexing as indexing_module
    from mcp_tools.servers.notes import service as vault_module
    from tests.servers.notes.fixtures import write_vault

    root = write_vault(tmp_path / "big", {f"Bulk/Note {i:03d}.md": f"# Note {i}\n\nkiwi {i}\n" for i in range(200)})
    original = vault_module.NotesService.index_path

    def slow_index_path(self: NotesService, key: str, *args: Any, **kwargs: Any) -> str:
        time_module.sleep(0.01)
        return original(self, key, *args, **kwargs)

    monkeypatch.setattr(vault_module.NotesService, "index_path", slow_index_path)
    monkeypatch.setattr(indexing_module, "RECONCILE_BATCH", 5)
    async with connect(tmp_path, notes_settings(root)) as client:
        started = time_module.monotonic()
        early = ok(await client.call_tool("notes_search", {"query": "kiwi"}))
        read = ok(await client.call_tool("notes_read", {"path": "Bulk/Note 199"}))
        answered_in = time_module.monotonic() - started
        final = await wait_indexed(client)
        done = ok(await client.call_tool("notes_search", {"query": "kiwi", "top_k": 50}))
    assert early["index"]["complete"] is False and early["index"]["indexed"] < 200
    assert "results may be partial" in early["note"]
    assert read["content"] == "# Note 199\n\nkiwi 199\n"
    assert answered_in < 1.5  # the whole first pass takes over 2 s
    assert final["index"] == {"indexed": 200, "total": 200, "complete": True, "embedded_chunks": 0, "total_chunks": 0}
    assert len(done["results"]) == 50
