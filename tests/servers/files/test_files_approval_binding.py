"""files: an approval covers the file as the person saw it, not only the arguments.

The person approves "Replace report.md (8 B) with ...". If the file changes before the call is
retried, the yes was given for content that is gone: the retry asks again, on both backends.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext

from mcp_tools.composition.app import App, build_app
from mcp_tools.state.sqlite import PolicyStore
from mcp_tools.transports.mcp_server import build_server
from tests.harness import connect, failure, make_config, ok
from tests.policy.test_waiting import announced, hook_command
from tests.servers.files import fixtures as files_fixtures
from tests.servers.files.fixtures import FilesBackend

backend = files_fixtures.backend
moto_endpoint = files_fixtures.moto_endpoint
local = files_fixtures.local

pytestmark = pytest.mark.anyio


def files_app(tmp_path: Path, backend: FilesBackend) -> App:
    return build_app(make_config(tmp_path, backend.settings))


async def test_an_approved_write_runs_while_the_file_is_as_the_person_saw_it(
    tmp_path: Path, backend: FilesBackend
) -> None:
    backend.put("report.md", b"old text")
    app = files_app(tmp_path, backend)
    async with connect(tmp_path, app=app, elicit=None) as client:
        asked = failure(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
        app.store.decide_approval(asked["approval_id"], approve=True, ttl_seconds=600)
        ok(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
    assert backend.get("report.md") == b"new"
    assert app.store.get_approval(asked["approval_id"]).status == "consumed"


async def test_attack_a_file_rewritten_after_the_approval_with_the_same_size_is_asked_about_again(
    tmp_path: Path, backend: FilesBackend
) -> None:
    """The summary reads the same ("Replace report.md (8 B)"), but the content the person agreed to
    lose is not the content there now."""
    backend.put("report.md", b"old text")
    app = files_app(tmp_path, backend)
    async with connect(tmp_path, app=app, elicit=None) as client:
        asked = failure(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
        app.store.decide_approval(asked["approval_id"], approve=True, ttl_seconds=600)
        backend.put("report.md", b"NEW TEXT")  # a peer's work, same size
        again = failure(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
    assert again["kind"] == "approval_required" and again["approval_id"] != asked["approval_id"]
    assert backend.get("report.md") == b"NEW TEXT"
    assert app.store.get_approval(asked["approval_id"]).status == "approved"  # not spent on another file
    assert [row.decision for row in app.store.tail()][-1] == "approval_required"


async def test_attack_a_file_grown_after_the_approval_is_asked_about_with_its_new_size(
    tmp_path: Path, backend: FilesBackend
) -> None:
    backend.put("report.md", b"old text")
    app = files_app(tmp_path, backend)
    async with connect(tmp_path, app=app, elicit=None) as client:
        asked = failure(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
        app.store.decide_approval(asked["approval_id"], approve=True, ttl_seconds=600)
        backend.put("report.md", b"old text and a week of someone's edits")
        again = failure(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
        second = app.store.get_approval(again["approval_id"])
        assert "Replace report.md (38 B)" in second.summary
        # the model (and through it the person) hears why a yes is asked for again
        assert f"An earlier approval, {asked['approval_id']}, was for: Replace report.md (8 B)" in again["message"]
        assert "has changed since, so that approval no longer covers it" in again["message"]
        repeated = failure(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
        assert repeated["approval_id"] == again["approval_id"]  # the pending one is reused, not piled up
        app.store.decide_approval(second.id, approve=True, ttl_seconds=600)
        ok(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
    assert backend.get("report.md") == b"new"


async def test_attack_an_approved_delete_does_not_remove_a_file_put_there_since(
    tmp_path: Path, backend: FilesBackend
) -> None:
    backend.put("draft.txt", b"scratch")
    app = files_app(tmp_path, backend)
    async with connect(tmp_path, app=app, elicit=None) as client:
        asked = failure(await client.call_tool("files_delete", {"path": "draft.txt"}))
        app.store.decide_approval(asked["approval_id"], approve=True, ttl_seconds=600)
        backend.put("draft.txt", b"thesis!")  # same size, other content
        again = failure(await client.call_tool("files_delete", {"path": "draft.txt"}))
    assert again["kind"] == "approval_required" and again["approval_id"] != asked["approval_id"]
    assert backend.get("draft.txt") == b"thesis!"


async def test_attack_an_approved_overwriting_move_does_not_replace_a_destination_changed_since(
    tmp_path: Path, backend: FilesBackend
) -> None:
    backend.put("a.txt", b"A")
    backend.put("b.txt", b"old")
    app = files_app(tmp_path, backend)
    arguments = {"source": "a.txt", "destination": "b.txt", "overwrite": True}
    async with connect(tmp_path, app=app, elicit=None) as client:
        asked = failure(await client.call_tool("files_move", arguments))
        app.store.decide_approval(asked["approval_id"], approve=True, ttl_seconds=600)
        backend.put("b.txt", b"NEW")
        again = failure(await client.call_tool("files_move", arguments))
    assert again["kind"] == "approval_required"
    assert backend.get("b.txt") == b"NEW" and backend.get("a.txt") == b"A"


async def test_attack_a_file_changed_while_the_person_reads_the_question_is_not_replaced(
    tmp_path: Path, backend: FilesBackend
) -> None:
    """The person says yes to "Replace report.md (8 B)" in the form; while the form was open a peer
    saved new work there. The yes does not cover it: the call stops with a conflict and says why.
    (A client that holds the call open while it asks; the other era asks again: next test.)"""
    backend.put("report.md", b"old text")
    app = files_app(tmp_path, backend)

    async def yes_after_a_peer_saves(context: ClientRequestContext, params: types.ElicitRequestParams):
        assert "Replace report.md (8 B)" in params.message
        backend.put("report.md", b"a peer's new work")
        return types.ElicitResult(action="accept", content={"confirm": True})

    server = build_server(app, transport="test")
    async with app.running(), Client(server, mode="legacy", elicitation_callback=yes_after_a_peer_saves) as client:
        error = failure(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
    assert error["kind"] == "conflict" and "changed while the person was deciding" in error["message"]
    assert "Replace report.md (17 B)" in error["message"]
    assert backend.get("report.md") == b"a peer's new work"
    [row] = app.store.tail()
    assert (row.decision, row.outcome) == ("confirmed", "conflict")


async def test_attack_a_file_changed_while_the_person_reads_a_retried_question_is_asked_about_again(
    tmp_path: Path, backend: FilesBackend
) -> None:
    """In the era where the client answers and retries, the retry finds the file changed: the
    person's yes to the old question is not used; they are asked about the file as it is."""
    backend.put("report.md", b"old text")
    app = files_app(tmp_path, backend)
    questions: list[str] = []

    async def yes_then_no(context: ClientRequestContext, params: types.ElicitRequestParams):
        questions.append(params.message.splitlines()[0])
        if len(questions) == 1:
            backend.put("report.md", b"a peer's new work")
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="decline")

    server = build_server(app, transport="test")
    async with app.running(), Client(server, mode="2026-07-28", elicitation_callback=yes_then_no) as client:
        error = failure(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
    assert questions == [
        "Replace report.md (8 B) with 3 B of new text",
        "Replace report.md (17 B) with 3 B of new text",
    ]
    assert error["kind"] == "declined_by_user"
    assert backend.get("report.md") == b"a peer's new work"


async def test_a_file_left_alone_while_the_person_reads_the_question_is_replaced(
    tmp_path: Path, backend: FilesBackend
) -> None:
    backend.put("report.md", b"old text")
    async with connect(tmp_path, backend.settings, elicit="accept") as client:
        ok(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
    assert backend.get("report.md") == b"new"


async def test_attack_a_file_removed_while_the_person_reads_a_delete_question_is_reported_not_run(
    tmp_path: Path, backend: FilesBackend
) -> None:
    backend.put("draft.txt", b"scratch")
    app = files_app(tmp_path, backend)

    async def yes_after_it_is_gone(context: ClientRequestContext, params: types.ElicitRequestParams):
        backend.remove("draft.txt")
        return types.ElicitResult(action="accept", content={"confirm": True})

    server = build_server(app, transport="test")
    async with app.running(), Client(server, mode="legacy", elicitation_callback=yes_after_it_is_gone) as client:
        error = failure(await client.call_tool("files_delete", {"path": "draft.txt"}))
    assert error["kind"] == "not_found" and "while the person was deciding" in error["message"]


async def test_attack_a_file_changed_while_a_call_waits_for_the_persons_answer_is_not_replaced(
    tmp_path: Path, backend: FilesBackend
) -> None:
    """A client that cannot ask: the call waits for the person's answer on another channel. They
    approve "Replace report.md (8 B)"; in the meantime a peer saved there. Nothing is replaced."""
    backend.put("report.md", b"old text")
    settings = {
        **backend.settings,
        "approvals": {"wait_seconds": 20, "notify": {"command": hook_command(tmp_path / "hook.jsonl")}},
    }
    app = build_app(make_config(tmp_path, settings))

    async def peer_saves_then_person_approves() -> None:
        with anyio.fail_after(15):
            while not announced(tmp_path):
                await anyio.sleep(0.05)
        [notice] = announced(tmp_path)
        assert notice["message"].startswith("Replace report.md (8 B)")
        backend.put("report.md", b"NEW TEXT")
        PolicyStore(tmp_path / "state" / "policy.sqlite3").decide(notice["id"], True, 600, decided_by="cli")

    async with connect(tmp_path, app=app, elicit=None) as client, anyio.create_task_group() as group:
        group.start_soon(peer_saves_then_person_approves)
        error = failure(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
    assert error["kind"] == "conflict" and "changed while the person was deciding" in error["message"]
    assert backend.get("report.md") == b"NEW TEXT"


async def test_attack_an_approved_folder_delete_does_not_remove_work_saved_inside_it_since(
    tmp_path: Path, backend: FilesBackend
) -> None:
    """ "Delete folder drafts and the 2 entries in it" was approved for what was in it: a file in
    it rewritten since (same size, same count) gets a new question."""
    backend.put("drafts/one.txt", b"scratch")
    backend.put("drafts/deep/two.txt", b"scratch")
    app = files_app(tmp_path, backend)
    arguments = {"path": "drafts", "recursive": True}
    async with connect(tmp_path, app=app, elicit=None) as client:
        asked = failure(await client.call_tool("files_delete", arguments))
        app.store.decide_approval(asked["approval_id"], approve=True, ttl_seconds=600)
        backend.put("drafts/deep/two.txt", b"thesis!")
        again = failure(await client.call_tool("files_delete", arguments))
        assert again["kind"] == "approval_required" and again["approval_id"] != asked["approval_id"]
        assert backend.get("drafts/deep/two.txt") == b"thesis!"
        app.store.decide_approval(again["approval_id"], approve=True, ttl_seconds=600)
        ok(await client.call_tool("files_delete", arguments))  # unchanged since the second yes
    assert backend.get("drafts/one.txt") is None and backend.get("drafts/deep/two.txt") is None


async def test_attack_a_same_size_edit_with_its_modification_time_put_back_is_still_seen(
    tmp_path: Path, local: FilesBackend
) -> None:
    """`touch -r` can restore a file's modification time after an edit in place; its change time
    moves on regardless, and the approval covers that too."""
    import os

    local.put("report.md", b"old text")
    assert local.root is not None
    path = local.root / "report.md"
    app = files_app(tmp_path, local)
    async with connect(tmp_path, app=app, elicit=None) as client:
        asked = failure(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
        app.store.decide_approval(asked["approval_id"], approve=True, ttl_seconds=600)
        before = path.stat()
        with open(path, "r+b") as handle:  # an edit in place: same inode, same size
            handle.write(b"NEW TEXT")
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert path.stat().st_mtime_ns == before.st_mtime_ns and path.stat().st_ino == before.st_ino
        again = failure(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
    assert again["kind"] == "approval_required"
    assert path.read_bytes() == b"NEW TEXT"
