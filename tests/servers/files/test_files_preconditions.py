"""files: a call that could never run fails before the person is asked, on both backends."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from mcp_tools.composition.app import build_app
from tests.harness import connect, failure, make_config, ok
from tests.servers.files import fixtures as files_fixtures
from tests.servers.files.fixtures import FilesBackend

backend = files_fixtures.backend
moto_endpoint = files_fixtures.moto_endpoint
local = files_fixtures.local

pytestmark = pytest.mark.anyio
ALL_HIGH = [{"match": f"files.{name}", "risk": "high"} for name in ("write", "edit", "move", "delete")]


def high_risk(settings: dict[str, Any]) -> dict[str, Any]:
    """Every changing files tool asks first, so that any question the person gets is visible."""
    return {**settings, "policy": {"rules": ALL_HIGH}}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def test_deleting_a_missing_path_answers_not_found_without_asking(tmp_path: Path, backend: FilesBackend) -> None:
    seen: list[types.ElicitRequestParams] = []
    app = build_app(make_config(tmp_path, backend.settings))
    async with connect(tmp_path, app=app, elicit="accept", seen=seen) as client:
        error = failure(await client.call_tool("files_delete", {"path": "reports/q3-draft.md"}))
    assert error["kind"] == "not_found" and "reports/q3-draft.md" in error["message"]
    assert seen == []
    assert [(row.decision, row.outcome) for row in app.store.tail()] == [("precheck_failed", "not_found")]


async def test_deleting_a_missing_path_creates_no_approval(tmp_path: Path, backend: FilesBackend) -> None:
    app = build_app(make_config(tmp_path, backend.settings))
    async with connect(tmp_path, app=app, elicit=None) as client:
        error = failure(await client.call_tool("files_delete", {"path": "gone.txt"}))
    assert error["kind"] == "not_found"
    assert app.store.list_approvals(include_done=True) == []


async def test_a_delete_that_can_run_still_asks(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("junk.txt", b"x")
    backend.put("build/a.o", b"a")
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, backend.settings, elicit="accept", seen=seen) as client:
        folder = failure(await client.call_tool("files_delete", {"path": "build"}))
        removed = ok(await client.call_tool("files_delete", {"path": "junk.txt"}))
    assert folder["kind"] == "invalid_arguments" and "recursive" in folder["hint"]
    assert removed["removed"] == 1
    assert [params.message.splitlines()[0] for params in seen] == ["Delete file junk.txt (1 B)"]
    assert backend.get("build/a.o") == b"a"


async def test_moves_bound_to_fail_ask_nobody(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("a.txt", b"a")
    backend.put("b.txt", b"b")
    backend.put("folder/c.txt", b"c")
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, high_risk(backend.settings), elicit="accept", seen=seen) as client:
        missing = failure(await client.call_tool("files_move", {"source": "nope.txt", "destination": "x.txt"}))
        taken = failure(await client.call_tool("files_move", {"source": "a.txt", "destination": "b.txt"}))
        onto_folder = failure(
            await client.call_tool("files_move", {"source": "a.txt", "destination": "folder", "overwrite": True})
        )
        into_itself = failure(await client.call_tool("files_move", {"source": "folder", "destination": "folder/x"}))
        assert seen == []
        moved = ok(await client.call_tool("files_move", {"source": "a.txt", "destination": "b.txt", "overwrite": True}))
    assert missing["kind"] == "not_found"
    assert taken["kind"] == "conflict" and "overwrite" in taken["hint"]
    assert onto_folder["kind"] == "conflict" and into_itself["kind"] == "invalid_arguments"
    assert moved["replaced"] is True and backend.get("b.txt") == b"a"
    assert len(seen) == 1 and "Move a.txt to b.txt" in seen[0].message


async def test_writes_with_a_stale_hash_ask_nobody(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("plan.md", b"v1")
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, high_risk(backend.settings), elicit="accept", seen=seen) as client:
        stale = failure(
            await client.call_tool("files_write", {"path": "plan.md", "content": "v3", "expected_sha256": sha(b"v0")})
        )
        vanished = failure(
            await client.call_tool("files_write", {"path": "gone.md", "content": "x", "expected_sha256": sha(b"v1")})
        )
        bad_base64 = failure(
            await client.call_tool("files_write", {"path": "bin.dat", "content": "%%%", "encoding": "base64"})
        )
        assert seen == []
        written = ok(
            await client.call_tool("files_write", {"path": "plan.md", "content": "v2", "expected_sha256": sha(b"v1")})
        )
    assert stale["kind"] == "conflict" and "changed since you read it" in stale["message"]
    assert vanished["kind"] == "conflict" and bad_base64["kind"] == "invalid_arguments"
    assert written["sha256"] == sha(b"v2") and backend.get("plan.md") == b"v2"
    assert len(seen) == 1


async def test_edits_bound_to_fail_ask_nobody(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("notes.txt", b"hello world\n")
    edits = [{"old_string": "hello", "new_string": "goodbye"}]
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, high_risk(backend.settings), elicit="accept", seen=seen) as client:
        missing = failure(await client.call_tool("files_edit", {"path": "other.txt", "edits": edits}))
        stale = failure(
            await client.call_tool(
                "files_edit", {"path": "notes.txt", "edits": edits, "expected_sha256": sha(b"older\n")}
            )
        )
        assert seen == []
        edited = ok(
            await client.call_tool(
                "files_edit", {"path": "notes.txt", "edits": edits, "expected_sha256": sha(b"hello world\n")}
            )
        )
    assert missing["kind"] == "not_found" and stale["kind"] == "conflict"
    assert edited["replacements"] == 1 and backend.get("notes.txt") == b"goodbye world\n"
    assert len(seen) == 1


async def test_overwriting_a_link_that_leads_out_is_refused_without_asking(tmp_path: Path, local: FilesBackend) -> None:
    """Attack: a link planted in the store points outside; the write can never run, so nobody is asked."""
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"keep")
    assert local.root is not None
    (local.root / "out.txt").symlink_to(outside)
    seen: list[types.ElicitRequestParams] = []
    app = build_app(make_config(tmp_path, local.settings))
    async with connect(tmp_path, app=app, elicit="accept", seen=seen) as client:
        error = failure(await client.call_tool("files_write", {"path": "out.txt", "content": "pwn"}))
    assert error["kind"] == "invalid_arguments" and "symbolic link" in error["message"]
    assert seen == [] and app.store.list_approvals(include_done=True) == []
    assert outside.read_bytes() == b"keep"


async def test_writing_onto_a_folder_fails_before_anyone_is_asked(tmp_path: Path, backend: FilesBackend) -> None:
    """Replacing a folder by a file can never run: no question "Replace reports (0 B)" first."""
    backend.put("reports/q3.md", b"numbers")
    seen: list[types.ElicitRequestParams] = []
    app = build_app(make_config(tmp_path, backend.settings))
    async with connect(tmp_path, app=app, elicit="accept", seen=seen) as client:
        error = failure(await client.call_tool("files_write", {"path": "reports", "content": "x"}))
    assert error["kind"] == "conflict" and "reports is a folder" in error["message"]
    assert seen == []
    assert [(row.decision, row.outcome) for row in app.store.tail()] == [("precheck_failed", "conflict")]
    assert backend.get("reports/q3.md") == b"numbers"


async def test_writing_onto_a_folder_creates_no_approval(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("reports/q3.md", b"numbers")
    app = build_app(make_config(tmp_path, backend.settings))
    async with connect(tmp_path, app=app, elicit=None) as client:
        error = failure(await client.call_tool("files_write", {"path": "reports", "content": "x"}))
        imported = failure(await client.call_tool("files_import", {"path": "reports", "content_base64": "eA=="}))
    assert error["kind"] == "conflict" and "is a folder" in error["message"]
    assert imported["kind"] == "conflict" and "is a folder" in imported["message"]
    assert app.store.list_approvals(include_done=True) == []


async def test_moving_onto_a_folder_fails_before_anyone_is_asked(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("draft.md", b"d")
    backend.put("reports/q3.md", b"numbers")
    app = build_app(make_config(tmp_path, backend.settings))
    async with connect(tmp_path, app=app, elicit=None) as client:
        error = failure(
            await client.call_tool("files_move", {"source": "draft.md", "destination": "reports", "overwrite": True})
        )
    assert error["kind"] == "conflict" and "reports is a folder" in error["message"]
    assert app.store.list_approvals(include_done=True) == []
