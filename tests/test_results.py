"""Every result of every tool, success and error, is one a validating client accepts.

A client such as the MCP Inspector checks `structuredContent` against the tool's advertised
`outputSchema` and rejects the whole result when it does not match. These tests call each tool
of each namespace through the SDK's real client at least once successfully and at least once
with a failure, and check every result with `tests/results.py`.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server.lowlevel import Server

from mcp_tools.composition.app import build_app
from tests.harness import connect, make_config
from tests.results import InvalidResult, check_call_result, error_payload
from tests.servers.calendar.fixtures import World, person_event, radicale_server, world_fixture  # noqa: F401  (fixtures)
from tests.servers.docs.fixtures import docs_settings, planning_doc
from tests.servers.drive.fixtures import drive_settings
from tests.servers.fake_google import FakeDocs, FakeDrive, FakeGoogle, FakeSheets, FakeTasks
from tests.servers.fake_google.drive import DOC, SHEET
from tests.servers.fake_tavily import VALID_KEY, FakeTavily, Reply
from tests.servers.inbox import fixtures as mail
from tests.servers.notes.fixtures import wait_indexed, write_vault
from tests.servers.sheets.fixtures import sheets_settings
from tests.servers.tasks.fixtures import tasks_settings

pytestmark = pytest.mark.anyio
NAMESPACES = ("files", "notes", "calendar", "web", "inbox", "demo")
ECHO_TOOL = types.Tool(
    name="echo",
    input_schema={"type": "object"},
    output_schema={
        "type": "object",
        "properties": {"echo": {"type": "string"}, "at": {"type": "string", "format": "date"}},
        "required": ["echo"],
        "additionalProperties": False,
    },
)


def text(value: str) -> list[types.TextContent]:
    return [types.TextContent(type="text", text=value)]


# --- the checker itself ----------------------------------------------------------------------


def test_a_valid_success_and_a_valid_error_pass() -> None:
    check_call_result(ECHO_TOOL, "echo", types.CallToolResult(content=text("hi"), structured_content={"echo": "hi"}))
    error = {"error": {"kind": "not_found", "message": "x does not exist", "hint": "list the folder"}}
    check_call_result(ECHO_TOOL, "echo", types.CallToolResult(content=text(json.dumps(error)), is_error=True))


@pytest.mark.parametrize(
    ("result", "complaint"),
    [
        (types.CallToolResult(content=text("hi")), "without structuredContent"),
        (types.CallToolResult(content=text("hi"), structured_content={"echo": 1}), "does not match"),
        (types.CallToolResult(content=text("hi"), structured_content={"echo": "hi", "extra": 1}), "does not match"),
        (
            types.CallToolResult(content=text("hi"), structured_content={"echo": "hi", "at": "03/02/2026"}),
            "is not a 'date'",
        ),
        (types.CallToolResult(content=[], structured_content={"echo": "hi"}), "without a text block"),
        (
            types.CallToolResult(content=text("hi"), structured_content={"echo": "hi", "n": float("nan")}),
            "not plain JSON",
        ),
        (
            types.CallToolResult(content=text('{"error": {"kind": "timeout", "message": NaN}}'), is_error=True),
            "not JSON",
        ),
        (
            types.CallToolResult(
                content=text('{"error": {"kind": "not_found", "message": "m"}}'),
                structured_content={"error": {"kind": "not_found", "message": "m"}},
                is_error=True,
            ),
            "carries structuredContent",
        ),
        (types.CallToolResult(content=text("it broke"), is_error=True), "not JSON"),
        (types.CallToolResult(content=text("bad-\udcff-name"), structured_content={"echo": "x"}), "UTF-8"),
        (types.CallToolResult(content=text("{}") + text("{}"), is_error=True), "exactly one text block"),
        (types.CallToolResult(content=text('{"error": {"kind": "oops", "message": "m"}}'), is_error=True), "oops"),
        (types.CallToolResult(content=text('{"error": {"kind": "timeout"}}'), is_error=True), "'message'"),
        (
            types.CallToolResult(
                content=text('{"error": {"kind": "approval_required", "message": "m"}}'), is_error=True
            ),
            "approval_id",
        ),
        (
            types.CallToolResult(content=text('{"error": {"kind": "timeout", "message": "m"}, "x": 1}'), is_error=True),
            "Additional properties",
        ),
    ],
)
def test_results_a_validating_client_would_reject_are_caught(result: types.CallToolResult, complaint: str) -> None:
    with pytest.raises(InvalidResult, match=complaint):
        check_call_result(ECHO_TOOL, "echo", result)


def test_a_success_of_an_unlisted_tool_is_caught() -> None:
    with pytest.raises(InvalidResult, match="does not list it"):
        check_call_result(None, "ghost", types.CallToolResult(content=text("hi"), structured_content={}))


async def test_every_call_through_the_real_client_is_checked() -> None:
    """The session fixture in conftest.py checks results a test never looks at."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[ECHO_TOOL])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        payload = {"error": {"kind": "not_found", "message": "nothing"}}
        return types.CallToolResult(content=text(json.dumps(payload)), structured_content=payload, is_error=True)

    server: Server[Any] = Server("bad", on_list_tools=list_tools, on_call_tool=call_tool)
    async with Client(server, mode="legacy") as client:
        with pytest.raises(InvalidResult, match="carries structuredContent"):
            await client.call_tool("echo", {})


# --- every tool of every namespace -------------------------------------------------------------


class Coverage:
    """Calls tools through one client, checks each result, and remembers what each one showed."""

    def __init__(self, client: Client, tavily: FakeTavily) -> None:
        self.client = client
        self.tavily = tavily
        self.tools: dict[str, types.Tool] = {}
        self.succeeded: set[str] = set()
        self.failed: set[str] = set()

    async def list(self) -> None:
        self.tools = {tool.name: tool for tool in (await self.client.list_tools()).tools}

    async def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        result = await self.client.call_tool(name, arguments)
        check_call_result(self.tools.get(name), name, result)
        return result

    async def ok(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self.call(name, arguments)
        assert not result.is_error, f"{name} {arguments}: {result.content}"
        self.succeeded.add(name)
        assert result.structured_content is not None
        return result.structured_content

    async def fails(self, name: str, arguments: dict[str, Any], kind: str) -> dict[str, Any]:
        result = await self.call(name, arguments)
        assert result.is_error, f"{name} {arguments} should fail with {kind}: {result.structured_content}"
        error: dict[str, Any] = error_payload(result)["error"]
        assert error["kind"] == kind, f"{name} {arguments}: {error}"
        self.failed.add(name)
        return error


@asynccontextmanager
async def everything(tmp_path: Path, world: World, *, elicit: Any, mode: str) -> AsyncIterator[Coverage]:
    """One server with every namespace on, each against its local peer."""
    with FakeTavily() as tavily:
        settings = {
            "server": {"servers": list(NAMESPACES)},
            "notes": {"vault": str(write_vault(tmp_path / "vault")), "watch": False},
            "calendar": world.section(),
            "web": {"api_key": VALID_KEY, "api_base_url": tavily.url, "timeout_seconds": 5},
            "inbox": {"addresses": [mail.INBOX_ADDRESS]},
        }
        app = build_app(make_config(tmp_path, settings))
        for raw in mail.corpus().values():
            await app.services["inbox"].ingest(raw, via="test")
        files_root = tmp_path / "data" / "files"
        files_root.mkdir(parents=True, exist_ok=True)
        (files_root / "a.txt").write_text("alpha\nbeta\n", encoding="utf-8")
        (files_root / "old.txt").write_text("old\n", encoding="utf-8")
        (files_root / "blob.bin").write_bytes(bytes(range(256)))
        async with connect(tmp_path, app=app, elicit=elicit, mode=mode) as client:
            coverage = Coverage(client, tavily)
            await coverage.list()
            yield coverage


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_every_tool_succeeds_and_fails_with_results_that_validate(
    tmp_path: Path, world: World, demo_namespace: str, mode: str
) -> None:
    async with everything(tmp_path, world, elicit="accept", mode=mode) as run:
        for namespace in NAMESPACES:
            assert any(name.startswith(namespace + "_") for name in run.tools), f"{namespace} is not served"
        for name, tool in run.tools.items():
            assert tool.output_schema is not None, f"{name} advertises no outputSchema"
            error = await run.fails(name, {"not_an_argument": 1}, "invalid_arguments")
            assert "not_an_argument" in error["message"]

        # files
        listing = await run.ok("files_list", {})
        assert {entry["path"] for entry in listing["entries"]} >= {"a.txt", "old.txt"}
        await run.fails("files_list", {"path": "nowhere"}, "not_found")
        read = await run.ok("files_read", {"path": "a.txt"})
        await run.fails("files_read", {"path": "missing.txt"}, "not_found")
        assert (await run.ok("files_read", {"path": "blob.bin", "limit": 100}))["encoding"] == "base64"
        await run.ok("files_list", {"recursive": True, "pattern": "*.txt", "limit": 1})
        await run.ok("files_write", {"path": "b.txt", "content": "new\n"})
        await run.fails("files_write", {"path": "a.txt", "content": "x", "expected_sha256": "0" * 64}, "conflict")
        await run.ok("files_edit", {"path": "a.txt", "edits": [{"old_string": "beta", "new_string": "gamma"}]})
        missing_edit = await run.fails(
            "files_edit", {"path": "a.txt", "edits": [{"old_string": "zeta", "new_string": "eta"}]}, "not_found"
        )
        assert missing_edit.get("hint")
        await run.ok(
            "files_edit", {"path": "a.txt", "edits": [{"old_string": "alpha", "new_string": "A"}], "dry_run": True}
        )
        await run.ok("files_mkdir", {"path": "folder"})
        await run.fails("files_mkdir", {"path": "../outside"}, "invalid_arguments")
        await run.ok("files_move", {"source": "b.txt", "destination": "folder/b.txt"})
        await run.fails("files_move", {"source": "ghost.txt", "destination": "g.txt"}, "not_found")
        await run.ok("files_delete", {"path": "old.txt"})
        await run.fails("files_delete", {"path": "old.txt"}, "not_found")
        await run.ok("files_import", {"path": "imported.txt", "content_base64": "aGVsbG8K"})
        await run.fails("files_import", {"path": "imported.txt", "content_base64": "not base64!"}, "invalid_arguments")
        await run.ok("files_search", {"query": "gamma", "context_lines": 1})
        await run.fails("files_search", {"query": "(", "regex": True}, "invalid_arguments")
        await run.ok("files_copy", {"source": "a.txt", "destination": "copies/a.txt"})
        await run.fails("files_copy", {"source": "ghost.txt", "destination": "g.txt"}, "not_found")
        assert read["sha256"]

        # notes
        await wait_indexed(run.client)
        await run.ok("notes_read", {"path": "Projects/Alpha"})
        await run.fails("notes_read", {"path": "No Such Note"}, "not_found")
        await run.ok("notes_search", {"query": "glacier", "tags": ["research"], "date_after": "2020-01-01"})
        await run.fails("notes_search", {"query": "glacier", "date_after": "yesterday"}, "invalid_arguments")
        written = await run.ok("notes_write", {"path": "Inbox/Fresh", "content": "# Fresh\n\n#idea here\n"})
        await run.fails("notes_write", {"path": "Inbox/Fresh", "content": "x", "expected_sha256": "0" * 64}, "conflict")
        await run.ok("notes_update_frontmatter", {"path": "Inbox/Fresh", "set": {"status": "draft", "n": 2}})
        await run.fails("notes_update_frontmatter", {"path": "No Such Note", "set": {"a": 1}}, "not_found")
        await run.ok("notes_edit", {"path": "Inbox/Fresh", "action": "append", "content": "one more line"})
        await run.fails(
            "notes_edit", {"path": "Inbox/Fresh", "action": "replace", "old": "zzz", "content": "y"}, "not_found"
        )
        await run.ok("notes_backlinks", {"path": "Projects/Alpha"})
        await run.fails("notes_backlinks", {"path": "Home", "cursor": "zz"}, "invalid_arguments")
        await run.ok("notes_forward_links", {"path": "Home"})
        await run.fails("notes_forward_links", {"path": "No Such Note"}, "not_found")
        await run.ok("notes_daily", {"date": "2025-02-03"})
        await run.fails("notes_daily", {"date": "2025-02-04", "create": False}, "not_found")
        await run.ok("notes_search_by_tag", {"tag": "project"})
        await run.fails("notes_search_by_tag", {"tag": "project", "cursor": "zz"}, "invalid_arguments")
        await run.ok("notes_metadata", {"path": "Home"})
        await run.fails("notes_metadata", {"path": "No Such Note"}, "not_found")
        await run.ok("notes_random", {})
        await run.fails("notes_random", {"tag": "no-note-has-this-tag"}, "not_found")
        await run.ok("notes_rename", {"path": "Ideas/Idea One", "new_path": "Ideas/Idea Two", "dry_run": True})
        await run.ok("notes_rename", {"path": "Ideas/Idea One", "new_path": "Ideas/Idea Two"})
        await run.fails("notes_rename", {"path": "Ideas/Idea One", "new_path": "Ideas/Idea Three"}, "not_found")
        await run.ok("notes_delete", {"path": written["path"]})
        await run.fails("notes_delete", {"path": written["path"]}, "not_found")

        # calendar
        await run.ok("calendar_availability", {"start": "2026-03-02", "end": "2026-03-06"})
        await run.fails("calendar_availability", {"start": "2026-03-06", "end": "2026-03-02"}, "invalid_arguments")
        created = await run.ok(
            "calendar_create_event",
            {
                "title": "Review",
                "start": "2026-03-03T10:00",
                "end": "2026-03-03T11:00",
                "recurrence": "FREQ=DAILY;COUNT=3",
            },
        )
        uid = created["event"]["uid"]
        await run.ok("calendar_create_event", {"title": "Holiday", "start": "2026-03-05"})
        await run.fails("calendar_create_event", {"title": "Nope", "start": "tomorrow-ish"}, "invalid_arguments")
        await run.ok("calendar_events", {"start": "2026-03-02", "end": "2026-03-08"})
        await run.ok("calendar_events", {"uid": uid})
        await run.fails("calendar_events", {"uid": "no-such-uid"}, "not_found")
        await run.ok("calendar_update_event", {"uid": uid, "title": "Review (moved)", "location": "Room 2"})
        await run.fails("calendar_update_event", {"uid": "no-such-uid", "title": "x"}, "not_found")
        await run.ok("calendar_delete_event", {"uid": uid})
        await run.fails("calendar_delete_event", {"uid": uid}, "not_found")
        # answering invitations is Google's (tests/servers/calendar/test_calendar_invites.py); CalDAV refuses it
        await run.fails("calendar_respond", {"uid": uid, "response": "accepted"}, "invalid_arguments")

        # web
        found = await run.ok("web_search", {"query": "python packaging", "max_results": 3})
        assert found["results"]
        run.tavily.push(Reply(401))
        await run.fails("web_search", {"query": "python packaging"}, "not_configured")
        await run.fails("web_search", {"query": ""}, "invalid_arguments")

        # inbox
        page = await run.ok("inbox_search", {"query": "invoice", "has_attachment": True})
        message_id = page["messages"][0]["id"]
        await run.fails("inbox_search", {"cursor": "garbage"}, "invalid_arguments")
        await run.ok("inbox_read", {"id": message_id, "max_chars": 500})
        await run.fails("inbox_read", {"id": "ffffffffffffffff"}, "not_found")
        for index in range(len((await run.ok("inbox_read", {"id": message_id}))["attachments"])):
            await run.ok("inbox_attachment", {"id": message_id, "index": index})
        for message in (await run.ok("inbox_search", {"limit": 50}))["messages"]:
            await run.ok("inbox_read", {"id": message["id"]})
        await run.fails("inbox_attachment", {"id": message_id, "index": 99}, "not_found")

        # demo
        await run.ok("demo_echo", {"text": "hi"})
        await run.ok("demo_note", {"key": "k", "text": "v"})
        await run.ok("demo_erase", {"target": "t"})
        await run.fails("demo_fail", {}, "not_found")
        await run.fails("demo_fail", {"kind": "crash"}, "internal_error")
        await run.fails("no_such_tool", {}, "unknown_tool")

        never_succeeded = set(run.tools) - run.succeeded - {"demo_fail", "calendar_respond"}
        assert not never_succeeded, f"add a successful call of each to this test: {sorted(never_succeeded)}"
        assert run.failed == set(run.tools) | {"no_such_tool"}


async def test_every_high_risk_tool_without_a_form_returns_an_approval_that_validates(
    tmp_path: Path, world: World, demo_namespace: str
) -> None:
    async with everything(tmp_path, world, elicit=None, mode="legacy") as run:
        high = {
            "files_delete": {"path": "old.txt"},
            "files_write": {"path": "a.txt", "content": "replaced without a hash"},
            "notes_rename": {"path": "Home", "new_path": "Start"},
            "notes_delete": {"path": "Home"},
            "calendar_create_event": {"title": "Review", "start": "2026-03-03T10:00", "end": "2026-03-03T11:00"},
            "calendar_update_event": {"uid": "review-1", "title": "Review (moved)"},
            "calendar_delete_event": {"uid": "review-1"},
            "demo_erase": {"target": "t"},
        }
        world.add_person_event(
            world.shared,
            person_event(
                "Review",
                dt.datetime(2026, 3, 3, 9, tzinfo=dt.UTC),
                dt.datetime(2026, 3, 3, 10, tzinfo=dt.UTC),
                uid="review-1",
            ),
        )
        for name, arguments in high.items():
            error = await run.fails(name, arguments, "approval_required")
            assert error["approval_id"] in error["hint"]
        always = "Risk: high."  # tools that may escalate say "high for some arguments"
        asking = {name for name in run.tools if always in (run.tools[name].description or "")}
        assert asking <= set(high), f"add a call that needs approval for each to this test: {asking - set(high)}"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_every_tasks_tool_succeeds_fails_and_asks_with_results_that_validate(
    tmp_path: Path, google: FakeGoogle, tasks: FakeTasks, mode: str
) -> None:
    """The tasks namespace against the fake Google Tasks: each tool once right, once wrong."""
    parent = tasks.add("Parent", due="2026-03-05T00:00:00.000Z", notes="n")
    tasks.add("Child", parent=parent.id, completed=True)
    doomed = tasks.add("Doomed")
    async with connect(tmp_path, tasks_settings(tmp_path, google), mode=mode) as client:
        run = Coverage(client, None)  # type: ignore[arg-type]
        await run.list()
        for name in run.tools:
            await run.fails(name, {"not_an_argument": 1}, "invalid_arguments")
        await run.ok("tasks_list", {})
        await run.ok("tasks_list", {"list": "My Tasks", "status": "all", "due_from": "2026-03-01", "limit": 1})
        await run.fails("tasks_list", {"list": "No such list"}, "not_found")
        await run.ok("tasks_get", {"id": parent.id})
        await run.fails("tasks_get", {"id": "missing"}, "not_found")
        made = await run.ok("tasks_create", {"title": "New", "due": "2026-03-06", "parent": parent.id})
        await run.fails("tasks_create", {"title": "x", "due": "tomorrow"}, "invalid_arguments")
        await run.ok("tasks_update", {"id": made["task"]["id"], "notes": "", "clear_due": True})
        await run.fails("tasks_update", {"id": "missing", "title": "x"}, "not_found")
        await run.ok("tasks_complete", {"id": made["task"]["id"]})
        await run.ok("tasks_complete", {"id": made["task"]["id"], "undo": True})
        await run.fails("tasks_complete", {"id": "missing"}, "not_found")
        await run.ok("tasks_delete", {"id": doomed.id})
        await run.fails("tasks_delete", {"id": doomed.id}, "not_found")
    assert run.succeeded == set(run.tools) == run.failed
    async with connect(tmp_path, tasks_settings(tmp_path, google), elicit=None, mode=mode) as client:
        run = Coverage(client, None)  # type: ignore[arg-type]
        await run.list()
        error = await run.fails("tasks_delete", {"id": parent.id}, "approval_required")
    assert error["approval_id"] in error["hint"] and "'Parent'" in error["message"]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_every_docs_tool_succeeds_and_fails_with_results_that_validate(
    tmp_path: Path, google: FakeGoogle, docs: FakeDocs, mode: str
) -> None:
    stored = planning_doc(docs)
    async with connect(tmp_path, docs_settings(tmp_path, google), mode=mode) as client:
        run = Coverage(client, None)  # type: ignore[arg-type]
        await run.list()
        for name in run.tools:
            await run.fails(name, {"not_an_argument": 1}, "invalid_arguments")
        read = await run.ok("docs_read", {"id": stored.id, "max_chars": 200})
        await run.fails("docs_read", {"id": "1NoSuchDoc"}, "not_found")
        made = await run.ok("docs_create", {"title": "New", "text": "# Hi\n\n- a\n"})
        await run.fails("docs_create", {"title": ""}, "invalid_arguments")
        await run.ok("docs_append", {"id": made["id"], "text": "more", "revision": made["revision"]})
        await run.fails("docs_append", {"id": made["id"], "text": "late", "revision": made["revision"]}, "conflict")
        await run.ok("docs_replace", {"id": stored.id, "find": "Plan", "replace": "x", "dry_run": True})
        await run.ok("docs_replace", {"id": stored.id, "find": "Hire", "replace": "Fire", "revision": read["revision"]})
        await run.fails(
            "docs_replace", {"id": stored.id, "find": "Fire", "replace": "x", "expected_matches": 9}, "conflict"
        )
    assert run.succeeded == run.failed == set(run.tools) == {"docs_read", "docs_create", "docs_append", "docs_replace"}


async def test_docs_replace_without_a_form_returns_an_approval_that_validates(
    tmp_path: Path, google: FakeGoogle, docs: FakeDocs
) -> None:
    stored = planning_doc(docs)
    async with connect(tmp_path, docs_settings(tmp_path, google), elicit=None) as client:
        run = Coverage(client, None)  # type: ignore[arg-type]
        await run.list()
        error = await run.fails(
            "docs_replace", {"id": stored.id, "find": "Hire", "replace": "Fire"}, "approval_required"
        )
    assert error["approval_id"] in error["hint"] and "Hire" in stored.text()


async def test_numbers_json_cannot_carry_still_give_valid_results(tmp_path: Path) -> None:
    """YAML's .nan and .inf in frontmatter, a score of 1e999 from the search engine: the result
    must still be plain JSON valid against the schema, not NaN or Infinity."""
    vault = write_vault(tmp_path / "vault", {"Odd.md": "---\nratio: .nan\nlimit: -.inf\nok: 1.5\n---\n# Odd\n"})
    with FakeTavily() as tavily:
        settings = {
            "server": {"servers": ["notes", "web"]},
            "notes": {"vault": str(vault), "watch": False},
            "web": {"api_key": VALID_KEY, "api_base_url": tavily.url},
        }
        body = {"query": "q", "answer": None, "response_time": 0.1}
        body["results"] = [{"title": "T", "url": "https://example.org/", "content": "c", "score": "SCORE"}]
        tavily.push(Reply(200, json.dumps(body).replace('"SCORE"', "1e999").encode()))
        async with connect(tmp_path, settings) as client:
            meta = await client.call_tool("notes_metadata", {"path": "Odd"})
            found = await client.call_tool("web_search", {"query": "q"})
    assert not meta.is_error and meta.structured_content is not None
    assert meta.structured_content["frontmatter"]["ok"] == 1.5
    assert not found.is_error and found.structured_content is not None
    assert found.structured_content["results"][0]["score"] is None
    assert "NaN" not in meta.content[0].text and "Infinity" not in meta.content[0].text  # type: ignore[union-attr]


# --- the Google namespaces, against the fake Google --------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_every_drive_tool_succeeds_and_fails_with_results_that_validate(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive, mode: str
) -> None:
    doc = drive.add("Plan", "# Plan\n", DOC)
    sheet = drive.add("Budget", mime_type=SHEET, sheets={"Q1": [["a", "b"]], "Q2": [["c"]]})
    blob = drive.add("logo.png", bytes(range(256)), "image/png")
    settings = drive_settings(tmp_path, google)
    async with connect(tmp_path, settings, mode=mode) as client:
        run = Coverage(client, FakeTavily())
        await run.list()
        for name in [name for name in run.tools if name.startswith("drive_")]:
            error = await run.fails(name, {"not_an_argument": 1}, "invalid_arguments")
            assert "not_an_argument" in error["message"]
        listed = await run.ok("drive_search", {})
        assert {item["name"] for item in listed["files"]} == {"Plan", "Budget", "logo.png"}
        await run.ok("drive_search", {"name": "it's", "type": "document", "modified_after": "2020-01-01"})
        await run.fails("drive_search", {"q": "name = 'open"}, "invalid_arguments")
        await run.ok("drive_read", {"id": doc.id})
        await run.ok("drive_read", {"id": sheet.id, "sheet": "Q2"})
        await run.ok("drive_read", {"id": blob.id})
        await run.ok("drive_read", {"id": blob.id, "save_to": "logo.png"})
        await run.fails("drive_read", {"id": "1missing"}, "not_found")
        made = await run.ok("drive_create", {"name": "notes.md", "content": "# Notes\n", "convert": True})
        await run.ok("drive_create", {"name": "Folder", "type": "folder"})
        await run.fails("drive_create", {"name": "x", "content": "x", "folder": "1missing"}, "not_found")
        file_id = made["file"]["id"]
        await run.ok("drive_update", {"id": file_id, "content": "# Notes 2\n", "version": made["file"]["version"]})
        await run.fails("drive_update", {"id": file_id, "name": "n", "version": made["file"]["version"]}, "conflict")
        await run.ok("drive_share", {"id": file_id, "email": "bob@example.org"})
        await run.fails("drive_share", {"id": file_id, "type": "anyone"}, "denied_by_policy")
        await run.ok("drive_delete", {"id": file_id})
        await run.fails("drive_delete", {"id": "1missing"}, "not_found")
        drive_tools = {name for name in run.tools if name.startswith("drive_")}
        assert drive_tools and drive_tools <= run.succeeded and drive_tools <= run.failed


async def test_every_high_risk_drive_tool_without_a_form_returns_an_approval_that_validates(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive
) -> None:
    item = drive.add("notes.txt", "x")
    async with connect(tmp_path, drive_settings(tmp_path, google), elicit=None) as client:
        run = Coverage(client, FakeTavily())
        await run.list()
        for name, arguments in {
            "drive_delete": {"id": item.id},
            "drive_share": {"id": item.id, "email": "bob@example.org"},
            "drive_update": {"id": item.id, "content": "replaced without a version"},
        }.items():
            error = await run.fails(name, arguments, "approval_required")
            assert error["approval_id"] in error["hint"]
    assert item.content == b"x" and item.permissions == [] and not item.trashed


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_every_sheets_tool_succeeds_and_fails_with_results_that_validate(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets, mode: str
) -> None:
    book = sheets.add("Budget", {"Data": [["Name", "Amount"], ["Ann", 12.5]], "It's": [["x"]]})
    async with connect(tmp_path, sheets_settings(tmp_path, google), mode=mode) as client:
        run = Coverage(client, None)  # type: ignore[arg-type]  (no Tavily here)
        await run.list()
        for name in run.tools:
            await run.fails(name, {"not_an_argument": 1}, "invalid_arguments")
        await run.ok("sheets_read", {"id": book.id, "range": "'It''s'!A1:B2", "formulas": True})
        await run.fails("sheets_read", {"id": book.id, "range": "Nope!A1"}, "invalid_arguments")
        await run.ok("sheets_write", {"id": book.id, "range": "Data!C1", "values": [["=IMPORTXML(1)", 2, True, None]]})
        await run.fails("sheets_write", {"id": "1" + "z" * 43, "range": "A1", "values": [[1]]}, "not_found")
        await run.ok("sheets_append", {"id": book.id, "range": "Data", "values": [["Bob", 3]]})
        await run.fails("sheets_append", {"id": book.id, "values": [[1]], "formulas": True}, "denied_by_policy")
        made = await run.ok("sheets_create", {"title": "Plan", "sheets": {"Q3 Budget": ["Item", "Cost"]}})
        await run.fails("sheets_create", {"title": ""}, "invalid_arguments")
        await run.ok("sheets_clear", {"id": made["id"], "range": "'Q3 Budget'"})
        await run.fails("sheets_clear", {"id": book.id, "range": "Data!A1:B2000000"}, "invalid_arguments")
    assert run.succeeded == set(run.tools) and run.failed == set(run.tools)


async def test_sheets_clear_without_a_form_returns_an_approval_that_validates(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
) -> None:
    book = sheets.add("Budget", {"Data": [["Name", "Amount"]]})
    async with connect(tmp_path, sheets_settings(tmp_path, google), elicit=None) as client:
        run = Coverage(client, None)  # type: ignore[arg-type]
        await run.list()
        error = await run.fails("sheets_clear", {"id": book.id, "range": "Data"}, "approval_required")
    assert error["approval_id"] in error["hint"] and "2 cell(s) hold data" in error["message"]
