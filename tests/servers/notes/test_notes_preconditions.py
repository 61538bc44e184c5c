"""notes: a call that could never run fails before the person is asked."""

from __future__ import annotations

import hashlib
from pathlib import Path

import mcp_types as types
import pytest

from mcp_tools.composition.app import build_app
from tests.harness import connect, failure, make_config, ok
from tests.servers.notes.fixtures import notes_settings, write_vault

pytestmark = pytest.mark.anyio
SMALL_VAULT = {
    "Home.md": "# Home\n\nSee [[Plan]].\n",
    "Plan.md": "---\nstatus: draft\n---\n# Plan\n\nSteps.\n",
    "Other.md": "# Other\n",
}


def settings(vault: Path) -> dict:
    """Every changing notes tool asks first, so that any question the person gets is visible."""
    rules = [{"match": f"notes.{name}", "risk": "high"} for name in ("write", "update_frontmatter")]
    return {**notes_settings(vault), "policy": {"rules": rules}}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def test_deleting_a_missing_note_answers_not_found_without_asking(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "vault", SMALL_VAULT)
    seen: list[types.ElicitRequestParams] = []
    app = build_app(make_config(tmp_path, notes_settings(vault)))
    async with connect(tmp_path, app=app, elicit="accept", seen=seen) as client:
        error = failure(await client.call_tool("notes_delete", {"path": "Nowhere"}))
        deleted = ok(await client.call_tool("notes_delete", {"path": "Other"}))
    assert error["kind"] == "not_found"
    assert deleted["trashed_to"] is not None
    assert len(seen) == 1 and "Other" in seen[0].message
    assert [row.decision for row in app.store.tail()] == ["precheck_failed", "confirmed"]


async def test_renames_bound_to_fail_ask_nobody(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "vault", SMALL_VAULT)
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, notes_settings(vault), elicit="accept", seen=seen) as client:
        missing = failure(await client.call_tool("notes_rename", {"path": "Nowhere", "new_path": "Somewhere"}))
        taken = failure(await client.call_tool("notes_rename", {"path": "Plan", "new_path": "Other"}))
        same = failure(await client.call_tool("notes_rename", {"path": "Plan", "new_path": "Plan.md"}))
        hidden = failure(await client.call_tool("notes_rename", {"path": "Plan", "new_path": ".trash/Plan"}))
        assert seen == []
        renamed = ok(await client.call_tool("notes_rename", {"path": "Plan", "new_path": "Roadmap"}))
    assert missing["kind"] == "not_found" and taken["kind"] == "conflict"
    assert same["kind"] == "invalid_arguments" and hidden["kind"] == "invalid_arguments"
    assert renamed["new_path"] == "Roadmap.md" and (vault / "Roadmap.md").exists()
    assert len(seen) == 1


async def test_writes_with_a_stale_hash_ask_nobody(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "vault", SMALL_VAULT)
    current = sha(vault / "Plan.md")
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, settings(vault), elicit="accept", seen=seen) as client:
        stale = failure(
            await client.call_tool("notes_write", {"path": "Plan", "content": "x", "expected_sha256": "0" * 64})
        )
        vanished = failure(
            await client.call_tool("notes_write", {"path": "Gone", "content": "x", "expected_sha256": current})
        )
        frontmatter = failure(
            await client.call_tool(
                "notes_update_frontmatter", {"path": "Plan", "set": {"status": "done"}, "expected_sha256": "0" * 64}
            )
        )
        no_note = failure(await client.call_tool("notes_update_frontmatter", {"path": "Gone", "set": {"a": 1}}))
        assert seen == []
        replacement = {"path": "Plan", "content": "# Plan v2\n", "expected_sha256": current}
        written = ok(await client.call_tool("notes_write", replacement))
    assert stale["kind"] == "conflict" and vanished["kind"] == "conflict"
    assert frontmatter["kind"] == "conflict" and no_note["kind"] == "not_found"
    assert written["created"] is False and (vault / "Plan.md").read_text() == "# Plan v2\n"
    assert len(seen) == 1


async def test_writing_over_a_link_that_leads_out_is_refused_without_asking(tmp_path: Path) -> None:
    """Attack: a note that is a link out of the vault; the write can never run, so nobody is asked."""
    vault = write_vault(tmp_path / "vault", SMALL_VAULT)
    outside = tmp_path / "outside.md"
    outside.write_text("keep", encoding="utf-8")
    (vault / "Out.md").symlink_to(outside)
    seen: list[types.ElicitRequestParams] = []
    app = build_app(make_config(tmp_path, notes_settings(vault)))
    async with connect(tmp_path, app=app, elicit="accept", seen=seen) as client:
        error = failure(await client.call_tool("notes_write", {"path": "Out.md", "content": "pwn"}))
    assert error["kind"] == "invalid_arguments" and "symbolic link" in error["message"]
    assert seen == [] and app.store.list_approvals(include_done=True) == []
    assert outside.read_text(encoding="utf-8") == "keep"
