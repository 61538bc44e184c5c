"""Every name the seed systems use maps onto our tools, with their argument names translated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcp_tools.inventory.catalog import CANONICAL, CANONICAL_NAMES, lookup, suggest
from mcp_tools.servers import CATALOG, load_namespace
from mcp_tools.textcalls import ALIASES, resolve_alias
from tests.textcalls.conftest import run, text_app

SEED_TYPES = {
    "gmail": ["gmail_list", "gmail_search", "gmail_read", "gmail_send", "gmail_draft", "gmail_trash"],
    "drive": ["drive_list", "drive_search", "drive_read", "drive_create", "drive_update", "drive_delete"],
    "calendar": ["calendar_list", "calendar_events", "calendar_create", "calendar_update", "calendar_delete"],
    "docs": ["docs_read", "docs_create", "docs_append", "docs_replace"],
    "sheets": ["sheets_read", "sheets_write", "sheets_append", "sheets_create", "sheets_clear"],
    "tasks": ["tasks_list", "tasks_get", "tasks_create", "tasks_update", "tasks_complete", "tasks_delete"],
    "web": ["web_search"],
    "search": ["search"],
    "terminal": ["terminal_execute"],
    "http": ["api_call"],
    "files": ["file_ingest", "file_upload"],
}
NOTES_NAMES = [
    "read_note",
    "search_notes",
    "write_note",
    "edit_note",
    "update_frontmatter",
    "list_backlinks",
    "list_forward_links",
    "get_daily_note",
    "search_by_tag",
    "get_note_metadata",
    "rename_note",
    "delete_note",
    "get_random_note",
]
CODE_BLOCK_NAMES = [
    "write_file",
    "edit_file",
    "delete_file",
    "read_file",
    "list_files",
    "create_directory",
    "pilotwrite",
    "pilotedit",
    "pilotdelete",
]


@pytest.mark.parametrize(("namespace", "types"), SEED_TYPES.items())
def test_every_scissors_type_maps_into_its_namespace(namespace: str, types: list[str]) -> None:
    for seed in types:
        alias = lookup(seed)
        assert alias is not None, seed
        assert alias.tool in CANONICAL_NAMES and alias.tool.startswith(f"{namespace}."), (seed, alias.tool)


def test_every_alias_targets_an_agreed_canonical_name() -> None:
    assert {alias.tool for alias in ALIASES.values()} <= CANONICAL_NAMES


@pytest.mark.parametrize("namespace", ["files", "notes", "calendar", "web", "inbox", "drive", "sheets", "tasks"])
def test_the_canonical_table_matches_the_namespaces_built_here(namespace: str) -> None:
    built = {spec.name for spec in load_namespace(namespace).tools}
    assert built == {f"{namespace}.{method}" for method in CANONICAL[namespace]}


def test_the_drive_renames_name_arguments_the_drive_tools_take() -> None:
    fields = {name for spec in load_namespace("drive").tools for name in spec.input_model.model_fields}
    for seed, alias in ALIASES.items():
        if alias.tool.startswith("drive."):
            assert set(alias.renames.values()) <= fields, (seed, set(alias.renames.values()) - fields)


def test_the_notes_names_cover_every_notes_tool() -> None:
    targets = {ALIASES[name].tool for name in NOTES_NAMES}
    assert targets == {spec.name for spec in load_namespace("notes").tools}


@pytest.mark.parametrize("name", CODE_BLOCK_NAMES)
def test_the_code_block_names_map_onto_files(name: str) -> None:
    assert ALIASES[name].tool.startswith("files.")


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        (
            "gmail_list",
            {"maxResults": 5, "q": "from:ada", "pageToken": "t"},
            ("gmail.search", {"limit": 5, "query": "from:ada", "cursor": "t"}),
        ),
        ("gmail_read", {"messageId": "m1"}, ("gmail.read", {"id": "m1"})),
        ("drive_read", {"fileId": "f1"}, ("drive.read", {"id": "f1"})),
        (
            "drive_list",
            {"folderId": "f1", "pageSize": 5, "pageToken": "t"},
            ("drive.search", {"folder": "f1", "limit": 5, "page_token": "t"}),
        ),
        (
            "drive_create",
            {"title": "a.md", "parentId": "f1", "mimeType": "text/markdown", "content": "x"},
            ("drive.create", {"name": "a.md", "folder": "f1", "mime_type": "text/markdown", "content": "x"}),
        ),
        (
            "drive_share",
            {"fileId": "f1", "emailAddress": "a@b.org", "role": "writer"},
            ("drive.share", {"id": "f1", "email": "a@b.org", "role": "writer"}),
        ),
        ("docs_append", {"documentId": "d1", "text": "x"}, ("docs.append", {"id": "d1", "text": "x"})),
        ("sheets_read", {"spreadsheetId": "s1", "range": "A1:B2"}, ("sheets.read", {"id": "s1", "range": "A1:B2"})),
        ("tasks_complete", {"taskListId": "l1", "taskId": "t1"}, ("tasks.complete", {"list": "l1", "id": "t1"})),
        ("web_search", {"query": "x", "top_k": 3}, ("web.search", {"query": "x", "max_results": 3})),
        ("search", {"query": "x", "top_k": 3}, ("search.all", {"query": "x", "limit": 3})),
        ("search_notes", {"query": "x", "limit": 4}, ("notes.search", {"query": "x", "top_k": 4})),
        ("search_notes", {"query": "x", "top_k": 4}, ("notes.search", {"query": "x", "top_k": 4})),
        (
            "calendar_create",
            {"summary": "Tea", "start": {"dateTime": "2026-05-01T10:00:00+02:00"}, "end": {"date": "2026-05-02"}},
            ("calendar.create_event", {"title": "Tea", "start": "2026-05-01T10:00:00+02:00", "end": "2026-05-02"}),
        ),
        (
            "calendar_list",
            {"timeMin": "2026-05-01", "timeMax": "2026-05-08", "maxResults": 9},
            ("calendar.events", {"start": "2026-05-01", "end": "2026-05-08", "limit": 9}),
        ),
        ("rename_note", {"path": "a.md", "new_name": "b.md"}, ("notes.rename", {"path": "a.md", "new_path": "b.md"})),
        (
            "update_frontmatter",
            {"path": "a.md", "frontmatter": {"x": 1}},
            ("notes.update_frontmatter", {"path": "a.md", "set": {"x": 1}}),
        ),
        ("pilotwrite", {"path": "a", "content": "x"}, ("files.write", {"path": "a", "content": "x"})),
        ("filesystem.read_file", {"path": "a"}, ("files.read", {"path": "a"})),
        ("filesystem.read_text_file", {"path": "a"}, ("files.read", {"path": "a"})),
        ("fs.read", {"path": "a"}, ("files.read", {"path": "a"})),
        ("filesystem_read_file", {"path": "a"}, ("files.read", {"path": "a"})),
        ("fs_list", {}, ("files.list", {})),
        ("fs.write_file", {"path": "a", "content": "x"}, ("files.write", {"path": "a", "content": "x"})),
        ("filesystem.list_directory", {"path": "d"}, ("files.list", {"path": "d"})),
        (
            "filesystem.edit_file",
            {"path": "a", "edits": [{"oldText": "x", "newText": "y"}], "dryRun": True},
            ("files.edit", {"path": "a", "edits": [{"old_string": "x", "new_string": "y"}], "dry_run": True}),
        ),
    ],
)
def test_arguments_are_translated_into_ours(name: str, arguments: dict[str, Any], expected: tuple[str, Any]) -> None:
    assert resolve_alias(name, arguments) == expected


def test_an_argument_given_under_two_names_is_refused() -> None:
    from mcp_tools.core.tooling import ToolFailure

    with pytest.raises(ToolFailure, match="limit is given twice"):
        resolve_alias("gmail_list", {"maxResults": 5, "limit": 6})


@pytest.mark.parametrize(
    ("written", "closest"),
    [
        ("create_file", "write_file"),
        ("writeFile", "write_file"),
        ("files_reed", "files.read"),
        ("gmail_lst", "gmail_list"),
    ],
)
def test_an_unknown_name_suggests_the_closest_known_one(written: str, closest: str) -> None:
    assert suggest(written) == closest


def test_nothing_close_suggests_nothing() -> None:
    assert suggest("xyzzy") is None


@pytest.mark.anyio
async def test_running_seed_names_through_real_namespaces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = text_app(tmp_path, ["files"])
    (tmp_path / "data" / "files").mkdir(parents=True, exist_ok=True)
    monkeypatch.delitem(CATALOG, "web")  # as if this version had no web namespace yet
    reply = (
        '[{"id": "w", "type": "pilotwrite", "operation": "write", "parameters": {"path": "a.md", "content": "hi"}},'
        ' {"id": "r", "type": "fs.read", "operation": "read", "parameters": {"path": "a.md"}},'
        ' {"id": "g", "type": "drive_list", "operation": "files", "parameters": {"maxResults": 3}},'
        ' {"id": "s", "type": "web_search", "operation": "search", "parameters": {"query": "x"}},'
        ' {"id": "n", "type": "read_note", "operation": "note", "parameters": {"path": "x.md"}},'
        ' {"id": "u", "type": "create_file", "operation": "?", "parameters": {}}]\n✂️🐱\nok'
    )
    report = await run(app, reply)
    by_id = {result.id: result for result in report.results}
    assert not by_id["w"].is_error and by_id["w"].written_as == "pilotwrite" and by_id["w"].name == "files.write"
    assert by_id["r"].outcome.structured is not None and by_id["r"].outcome.structured["content"] == "hi"
    drive = by_id["g"].outcome.error
    assert drive is not None and drive["kind"] == "not_configured"
    assert drive["message"].startswith("drive.search is in the drive namespace, which is off here")
    web = by_id["s"].outcome.error
    assert web is not None and web["kind"] == "not_configured"
    assert "web namespace, which this version of mcp-tools does not have yet" in web["message"]
    notes = by_id["n"].outcome.error
    assert notes is not None and notes["kind"] == "not_configured"
    assert notes["message"].startswith("notes.read is in the notes namespace, which is off here")
    unknown = by_id["u"].outcome.error
    assert (
        unknown is not None and unknown["kind"] == "unknown_tool" and "did you mean 'write_file'" in unknown["message"]
    )
    assert "notes" in CATALOG


@pytest.mark.anyio
async def test_a_seed_name_that_is_also_our_wire_name_still_translates(tmp_path: Path) -> None:
    app = text_app(tmp_path, ["files"])
    assert app.find_tool("files_list") is not None and lookup("fs.list") is not None
    report = await run(app, '{"name": "filesystem.list_directory", "arguments": {"path": ""}}')
    assert report.results[0].written_as == "filesystem.list_directory" and not report.results[0].is_error
    report = await run(app, '{"name": "files_list", "arguments": {}}')
    assert report.results[0].written_as is None and not report.results[0].is_error


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("gmail_read", {"threadId": "t1"}, {"id": "t1", "thread": True}),
        ("gmail_attachment", {"messageId": "m1", "partIndex": 2}, {"message_id": "m1", "index": 2}),
        ("gmail_trash", {"messageId": "m1"}, {"ids": ["m1"]}),
        ("gmail_labels", {"messageIds": ["a"], "addLabelIds": ["X"]}, {"ids": ["a"], "add": ["X"]}),
        ("terminal_execute", {"command": "git log --format='%H %s'"}, {"argv": ["git", "log", "--format=%H %s"]}),
        ("terminal_execute", {"cmd": ["ls", "-la"], "timeout": 5}, {"argv": ["ls", "-la"], "timeout_seconds": 5}),
        ("api_call", {"url": "https://a.example/x", "method": "POST", "body": "{}"}, None),
        ("search", {"query": "budget", "top_k": 3}, {"query": "budget", "limit": 3}),
        ("gmail_send", {"to": ["a@example.org"], "subject": "Hi", "body": "Text"}, None),
        (
            "tasks_list",
            {"tasklist": "@default", "showCompleted": True, "dueMin": "2026-05-01T00:00:00Z", "maxResults": 9},
            {"list": "@default", "status": "all", "due_from": "2026-05-01", "limit": 9},
        ),
        ("tasks_get", {"taskListId": "Work", "taskId": "t-1"}, {"list": "Work", "id": "t-1"}),
        (
            "tasks_create",
            {"title": "Pay", "notes": "n", "due": "2026-05-01T00:00:00.000Z", "parent": "p1", "list_id": "l1"},
            {"title": "Pay", "notes": "n", "due": "2026-05-01", "parent": "p1", "list": "l1"},
        ),
        ("tasks_update", {"task_id": "t1", "due": "2026-06-02T00:00:00Z"}, {"id": "t1", "due": "2026-06-02"}),
        ("tasks_complete", {"taskId": "t1"}, {"id": "t1"}),
        ("tasks_delete", {"tasklist": "l1", "taskId": "t1"}, {"list": "l1", "id": "t1"}),
        (
            "sheets_read",
            {"spreadsheetId": "1abcdefghijk", "range": "'It''s'!A:B", "valueRenderOption": "FORMULA"},
            {"id": "1abcdefghijk", "range": "'It''s'!A:B", "formulas": True},
        ),
        (
            "sheets_write",
            {"spreadsheet_id": "1abcdefghijk", "range": "A1", "values": [["=1+1", 2]], "valueInputOption": "RAW"},
            {"id": "1abcdefghijk", "range": "A1", "values": [["=1+1", 2]], "formulas": False},
        ),
        (
            "sheets_append",
            {"spreadsheetId": "1abcdefghijk", "range": "Data", "values": [["x"]], "valueInputOption": "USER_ENTERED"},
            {"id": "1abcdefghijk", "range": "Data", "values": [["x"]], "formulas": True},
        ),
        ("sheets_create", {"title": "Plan", "sheets": ["A", "B"]}, {"title": "Plan", "sheets": {"A": [], "B": []}}),
        ("sheets_create", {"title": "Plan", "sheets": {"A": ["h"]}}, None),
        (
            "sheets_clear",
            {"spreadsheetId": "1abcdefghijk", "range": "Data!A2:C"},
            {"id": "1abcdefghijk", "range": "Data!A2:C"},
        ),
        ("docs_read", {"document_id": "d1", "max_chars": 500}, {"id": "d1", "max_chars": 500}),
        ("docs_create", {"title": "Plan", "content": "# Plan"}, {"title": "Plan", "text": "# Plan"}),
        (
            "docs_append",
            {"documentId": "d1", "markdown": "- x", "revisionId": "r1"},
            {"id": "d1", "text": "- x", "revision": "r1"},
        ),
        (
            "docs_replace",
            {"documentId": "d1", "containsText": {"text": "a", "matchCase": False}, "replaceText": "b"},
            {"id": "d1", "find": "a", "match_case": False, "replace": "b"},
        ),
        (
            "docs_replace",
            {"documentId": "d1", "containsText": "a", "replaceText": "b", "matchCase": True, "dry_run": True},
            {"id": "d1", "find": "a", "replace": "b", "match_case": True, "dry_run": True},
        ),
        ("file_upload", {"filename": "in/a.pdf", "data": "aGk="}, {"path": "in/a.pdf", "content_base64": "aGk="}),
    ],
)
def test_seed_arguments_reach_the_real_input_models(name: str, arguments: dict, expected: dict | None) -> None:
    alias = ALIASES[name]
    translated = alias.arguments(arguments)
    assert translated == (arguments if expected is None else expected)
    namespace = alias.tool.split(".")[0]
    spec = next(spec for spec in load_namespace(namespace).tools if spec.name == alias.tool)
    spec.input_model.model_validate(translated)
