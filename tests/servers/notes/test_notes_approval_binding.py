"""notes: an approval to replace or delete a note covers the note as the person saw it.

Someone edits the note in Obsidian after the person approved replacing it: the approved call is
not run on the new text; the person is asked again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_tools.composition.app import build_app
from tests.harness import connect, failure, make_config, ok, text_of
from tests.servers.notes.fixtures import notes_settings, write_vault

pytestmark = pytest.mark.anyio
VAULT = {"Plan.md": "# Plan\n\nSteps.\n", "Home.md": "# Home\n\nSee [[Plan]].\n"}
REPLACE = {"path": "Plan", "content": "# Plan\n\nNew steps.\n"}


async def test_an_approved_note_replacement_runs_while_the_note_is_as_it_was(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "vault", VAULT)
    app = build_app(make_config(tmp_path, notes_settings(vault)))
    async with connect(tmp_path, app=app, elicit=None) as client:
        asked = failure(await client.call_tool("notes_write", REPLACE))
        app.store.decide_approval(asked["approval_id"], approve=True, ttl_seconds=600)
        ok(await client.call_tool("notes_write", REPLACE))
    assert (vault / "Plan.md").read_text() == REPLACE["content"]


async def test_attack_a_note_edited_after_the_approval_is_not_replaced_under_it(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "vault", VAULT)
    app = build_app(make_config(tmp_path, notes_settings(vault)))
    async with connect(tmp_path, app=app, elicit=None) as client:
        asked = failure(await client.call_tool("notes_write", REPLACE))
        app.store.decide_approval(asked["approval_id"], approve=True, ttl_seconds=600)
        (vault / "Plan.md").write_text("# Plan\n\nStepz.\n")  # an edit in place, same length
        again = failure(await client.call_tool("notes_write", REPLACE))
    assert again["kind"] == "approval_required" and again["approval_id"] != asked["approval_id"]
    assert (vault / "Plan.md").read_text() == "# Plan\n\nStepz.\n"


async def test_attack_a_note_edited_after_a_delete_was_approved_is_not_deleted(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "vault", VAULT)
    app = build_app(make_config(tmp_path, notes_settings(vault)))
    async with connect(tmp_path, app=app, elicit=None) as client:
        asked = failure(await client.call_tool("notes_delete", {"path": "Plan"}))
        app.store.decide_approval(asked["approval_id"], approve=True, ttl_seconds=600)
        (vault / "Plan.md").write_text("# Plan\n\nToday's important decisions.\n")
        again = failure(await client.call_tool("notes_delete", {"path": "Plan"}))
    assert again["kind"] == "approval_required"
    assert (vault / "Plan.md").exists()


async def test_a_write_says_which_file_it_creates_or_replaces_and_how_big(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "vault", {**VAULT, "Big.md": "x" * 1300})
    app = build_app(make_config(tmp_path, notes_settings(vault)))
    async with connect(tmp_path, app=app, elicit=None) as client:
        created = await client.call_tool("notes_write", {"path": "Alpha", "content": "abcd"})
        replacing = failure(await client.call_tool("notes_write", {"path": "Alpha", "content": "abcdef"}))
        big = failure(await client.call_tool("notes_write", {"path": "Big", "content": "y"}))
    ok(created)
    assert "Create note Alpha.md (4 characters)" in text_of(created)
    assert "(Replace note Alpha.md (4 B) with 6 characters)" in replacing["message"]
    assert "(Replace note Big.md (1.3 KB) with 1 character)" in big["message"]


@pytest.mark.parametrize("path", ["x.md ", "x ", "Projects /x.md", "x.md\t"])
async def test_a_note_path_with_a_name_ending_in_a_space_is_refused_and_nothing_is_written(
    tmp_path: Path, path: str
) -> None:
    """Not `x.md .md`, and not quietly another note than the one named."""
    vault = write_vault(tmp_path / "vault", VAULT)
    before = sorted(p.relative_to(vault) for p in vault.rglob("*"))
    async with connect(tmp_path, notes_settings(vault), elicit=None) as client:
        refused = failure(await client.call_tool("notes_write", {"path": path, "content": "hi"}))
    assert refused["kind"] == "invalid_arguments" and "ending in a space" in refused["message"]
    assert sorted(p.relative_to(vault) for p in vault.rglob("*")) == before
