"""Obsidian details: links inside %% comments %%, and links to headings or blocks that do not exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import connect, ok
from tests.servers.notes.fixtures import notes_settings, wait_indexed

pytestmark = pytest.mark.anyio

NOTES = {
    "Alpha.md": "# Alpha\n\n## Goals\n\nMeasure the glacier. ^key1\n\n## Budget: 2026\n\nMoney.\n",
    "Hub.md": (
        "# Hub\n\n"
        "Good: [[Alpha#Goals]], [[Alpha#^key1]], [[Alpha#Budget 2026]], [[Alpha]].\n"
        "Bad: [[Alpha#Nowhere]], [[Alpha#^nokey]], [[Ghost]].\n"
        "%% hidden: [[Alpha#Goals]] and [[Beta]] %%\n"
    ),
    "Beta.md": "# Beta\n\nLinks back to [[Hub]].\n",
}


@pytest.fixture
def linked_vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


async def test_read_lists_links_to_missing_notes_headings_and_blocks(tmp_path: Path, linked_vault: Path) -> None:
    async with connect(tmp_path, notes_settings(linked_vault)) as client:
        await wait_indexed(client)
        hub = ok(await client.call_tool("notes_read", {"path": "Hub"}))
        alpha = ok(await client.call_tool("notes_read", {"path": "Alpha"}))
    assert hub["broken_links"] == [
        "Alpha#Nowhere: Alpha.md has no heading 'Nowhere'",
        "Alpha#^nokey: Alpha.md has no block ^nokey",
        "Ghost: no such note",
    ]
    assert alpha["broken_links"] == []


async def test_forward_links_mark_missing_fragments(tmp_path: Path, linked_vault: Path) -> None:
    async with connect(tmp_path, notes_settings(linked_vault)) as client:
        await wait_indexed(client)
        links = ok(await client.call_tool("notes_forward_links", {"path": "Hub"}))["links"]
    missing = {link["target"] + link["fragment"]: link["missing"] for link in links}
    assert missing["Alpha#Goals"] is None and missing["Alpha#Budget 2026"] is None and missing["Alpha#^key1"] is None
    assert missing["Alpha#Nowhere"] == "Alpha.md has no heading 'Nowhere'"
    assert missing["Alpha#^nokey"] == "Alpha.md has no block ^nokey"


async def test_links_inside_comments_count_as_in_obsidian(tmp_path: Path, linked_vault: Path) -> None:
    async with connect(tmp_path, notes_settings(linked_vault)) as client:
        await wait_indexed(client)
        backlinks = ok(await client.call_tool("notes_backlinks", {"path": "Beta"}))
        renamed = ok(await client.call_tool("notes_rename", {"path": "Beta", "new_path": "Gamma"}))
    assert [link["source"] for link in backlinks["backlinks"]] == ["Hub.md"]
    assert "[[Gamma]] %%" in (linked_vault / "Hub.md").read_text() and renamed["new_path"] == "Gamma.md"


async def test_rename_dry_run_warns_of_links_to_missing_fragments(tmp_path: Path, linked_vault: Path) -> None:
    async with connect(tmp_path, notes_settings(linked_vault)) as client:
        await wait_indexed(client)
        arguments = {"path": "Alpha", "new_path": "Archive/Alpha", "dry_run": True}
        plan = ok(await client.call_tool("notes_rename", arguments))
    assert plan["dry_run"] is True
    assert plan["warnings"] == [
        "Hub.md: Alpha#Nowhere: Alpha.md has no heading 'Nowhere'",
        "Hub.md: Alpha#^nokey: Alpha.md has no block ^nokey",
    ]
