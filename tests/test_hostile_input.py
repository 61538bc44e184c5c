"""Hostile arguments to every tool of every namespace: a clear error or a result, never `internal_error`.

The namespaces run for real (a file store, a notes vault, an inbox, a fake Tavily, a calendar whose
server refuses connections); arguments come from a seeded generator of hostile values shaped by each
tool's advertised input schema, so a new tool is fuzzed without a line of test code.
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from mcp_tools.composition.app import build_app
from mcp_tools.servers.google import scopes
from tests.harness import connect, failure, make_config
from tests.servers.docs.fixtures import docs_settings, planning_doc
from tests.servers.fake_google import FakeCalendar, FakeDocs, FakeDrive, FakeGoogle, FakeSheets, FakeTasks
from tests.servers.fake_tavily import VALID_KEY, FakeTavily
from tests.servers.gmail.fixtures import ALL_SCOPES, sign_in
from tests.servers.http_requests.fixtures import fixed_resolver
from tests.servers.inbox import fixtures as mail
from tests.servers.notes.fixtures import wait_indexed, write_vault
from tests.servers.sheets.fixtures import sheets_settings
from tests.servers.tasks.fixtures import tasks_settings

pytestmark = pytest.mark.anyio
EXAMPLES_PER_TOOL = 40
HOSTILE_STRINGS = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "x" * 50_000,
    "../../../etc/passwd",
    "/etc/passwd",
    "C:\\Windows\\system32",
    "\\",
    "\\xff",
    "\\\\",
    "a//b",
    ".",
    "..",
    "%s%n%x",
    "' OR 1=1 --",
    '"',
    'NEAR("a" "b")',
    "*",
    "AND OR NOT",
    "tag:#x",
    "#",
    "[[",
    "\u202e\u200b",
    "😀" * 300,
    "\n\r\t\x7f\x1b[31m",
    "\uffff\U0010ffff",
    "9999-12-31",
    "0000-00-00",
    "-1",
    "1e309",
    "2024-02-30T25:61:00+99:00",
    "FREQ=SECONDLY;COUNT=99999999",
    "javascript:alert(1)",
    "http://u:p@127.0.0.1:1/",
]
HOSTILE_NUMBERS: list[Any] = [-1, 0, 1, 2**63, -(2**63), 10**100, 1.5, float("1e308"), True, "1", None]


def hostile_value(rng: random.Random, schema: dict[str, Any], depth: int = 0) -> Any:
    """Mostly values of the advertised type (to get past the first check), sometimes anything."""
    declared = schema.get("type")  # one type, or a list of them
    kinds = set(declared) if isinstance(declared, list) else {declared}
    kinds |= {option.get("type") for option in schema.get("anyOf", [])}
    if depth < 2 and rng.random() < 0.15:
        kinds = {"string", "integer", "array", "object", "boolean", "null"}
    kind = rng.choice(sorted(kind for kind in kinds if kind) or ["string"])
    if kind == "string":
        if "enum" in schema and rng.random() < 0.5:
            return rng.choice(schema["enum"])
        return rng.choice(HOSTILE_STRINGS)
    if kind in ("integer", "number"):
        return rng.choice(HOSTILE_NUMBERS)
    if kind == "boolean":
        return rng.choice([True, False, "yes", 1, None])
    if kind == "array" and depth < 2:
        items = schema.get("items", {"type": "string"})
        return [hostile_value(rng, items, depth + 1) for _ in range(rng.choice([0, 1, 3, 200]))]
    if kind == "object":
        return {rng.choice(HOSTILE_STRINGS)[:50]: rng.choice(HOSTILE_STRINGS + HOSTILE_NUMBERS) for _ in range(3)}
    return None


def hostile_arguments(rng: random.Random, schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties", {})
    names = [name for name in properties if rng.random() < 0.7 or name in schema.get("required", [])]
    arguments = {name: hostile_value(rng, properties[name]) for name in names}
    if rng.random() < 0.1:
        arguments[rng.choice(HOSTILE_STRINGS)[:40]] = "unexpected"
    return arguments


@pytest.fixture
def tavily() -> Iterator[FakeTavily]:
    with FakeTavily() as fake:
        yield fake


@pytest.fixture
async def client(tmp_path: Path, tavily: FakeTavily) -> AsyncIterator[Client]:
    vault = write_vault(tmp_path / "vault")
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "a.txt").write_text("hello\n")
    settings = {
        "files": {"root": str(tmp_path / "files")},
        "notes": {"vault": str(vault), "watch": False},
        "inbox": {"addresses": [mail.INBOX_ADDRESS]},
        "web": {"api_base_url": tavily.url, "timeout_seconds": 5},
        "calendar": {
            "url": "http://127.0.0.1:9/dav/",  # the discard port: nothing listens, connections are refused
            "username": "u",
            "password": "calendar-pass-123",
            "calendar": "Assistant",
            "timezone": "Europe/Berlin",
            "timeout_seconds": 3,
        },
    }
    app = build_app(make_config(tmp_path, settings, environ={"TAVILY_API_KEY": VALID_KEY}))
    for raw in list(mail.corpus().values())[:3]:
        await app.services["inbox"].ingest(raw, via="test")
    async with connect(tmp_path, app=app, elicit=None) as connected:
        await wait_indexed(connected)
        yield connected


def assert_answered_cleanly(name: str, arguments: dict[str, Any], result: types.CallToolResult) -> None:
    for block in result.content:
        if isinstance(block, types.TextContent):
            block.text.encode("utf-8")  # raises on a lone surrogate, which would kill a stdio server
    if result.is_error:
        error = json.loads(result.content[0].text)["error"]
        assert error["kind"] != "internal_error", (name, arguments, error)


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("inbox_search", {"until": "9999-12-31"}, "until"),
        ("inbox_search", {"since": "9999-12-31"}, "since"),
        ("inbox_search", {"query": "a\x00b"}, "query"),
        ("inbox_search", {"sender": "a\x00b"}, "sender"),
        ("notes_search_by_tag", {"tag": "x" * 50_000}, "tag"),
        ("notes_random", {"tag": "x" * 50_000}, "tag"),
        ("notes_random", {"folder": "x" * 50_000}, "folder"),
        ("notes_search", {"query": "glacier", "folder": "x" * 50_000}, "folder"),
        ("notes_search", {"query": "glacier", "tags": ["x" * 50_000]}, "tags[0]"),
        ("notes_search", {"query": "glacier\x00"}, "query"),
        ("web_search", {"query": "python", "include_domains": ["x" * 50_000]}, "include_domains[0]"),
    ],
)
async def test_inputs_beyond_the_limits_are_invalid_arguments_naming_the_field(
    client: Client, tool: str, arguments: dict[str, Any], field: str
) -> None:
    error = failure(await client.call_tool(tool, arguments))
    assert error["kind"] == "invalid_arguments" and field in error["message"], error


async def test_every_tool_survives_hostile_arguments(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert {tool.name.split("_", 1)[0] for tool in tools} == {"files", "notes", "calendar", "web", "inbox", "search"}
    rng = random.Random(9)
    for tool in tools:
        for _ in range(EXAMPLES_PER_TOOL):
            arguments = hostile_arguments(rng, tool.input_schema)
            result = await client.call_tool(tool.name, arguments)
            assert_answered_cleanly(tool.name, arguments, result)


async def test_sheets_survives_hostile_arguments(tmp_path: Path, google: FakeGoogle, sheets: FakeSheets) -> None:
    """sheets against the fake Google: a request Google would refuse fails the test (the fixture checks)."""
    book = sheets.add("Budget", {"Data": [["a", 1], ["b", 2]], "It's": [["x"]]})
    async with connect(tmp_path, sheets_settings(tmp_path, google), elicit=None) as connected:
        tools = (await connected.list_tools()).tools
        assert {tool.name.split("_", 1)[0] for tool in tools} == {"sheets"}
        rng = random.Random(12)
        for tool in tools:
            for number in range(EXAMPLES_PER_TOOL):
                arguments = hostile_arguments(rng, tool.input_schema)
                if number % 2 and "id" in arguments:
                    arguments["id"] = book.id  # half the calls reach the spreadsheet itself
                result = await connected.call_tool(tool.name, arguments)
                assert_answered_cleanly(tool.name, arguments, result)


async def test_arguments_that_are_not_valid_unicode_are_refused_before_anything_runs(
    tmp_path: Path, demo_namespace: str
) -> None:
    """JSON on the wire cannot carry a lone surrogate, but `mcp-tools call --args` and text calls can."""
    from mcp_tools.policy.gate import Caller

    app = build_app(make_config(tmp_path, {"server": {"servers": ["demo"]}}))
    outcome = await app.gate.call(app.find_tool("demo.note"), "demo.note", {"key": "k", "text": "a\udcffb"}, Caller())
    assert outcome.error is not None and outcome.error["kind"] == "invalid_arguments"
    assert outcome.error["message"].startswith("text is not valid Unicode")
    assert app.services["demo"].notes == {}
    assert [row.decision for row in app.store.tail()] == ["denied"]


async def test_nul_stays_allowed_where_it_can_be_stored(tmp_path: Path) -> None:
    """File contents and edit strings may hold NUL; names, queries and other text may not."""
    from tests.harness import ok

    settings = {"server": {"servers": ["files"]}, "files": {"root": str(tmp_path / "root")}}
    async with connect(tmp_path, settings) as client:
        ok(await client.call_tool("files_write", {"path": "a.bin", "content": "x\x00y"}))
        edits = [{"old_string": "\x00", "new_string": "-"}]
        read = await client.call_tool("files_read", {"path": "a.bin"})
        ok(await client.call_tool("files_edit", {"path": "a.bin", "edits": edits, "dry_run": True}))
        named = failure(await client.call_tool("files_write", {"path": "a\x00.bin", "content": "x"}))
    assert ok(read)["encoding"] == "base64"
    assert named["kind"] == "invalid_arguments" and "NUL" in named["message"]
    assert (tmp_path / "root" / "a.bin").read_bytes() == b"x\x00y"


async def test_the_account_and_power_tools_survive_hostile_arguments(
    tmp_path: Path, google: FakeGoogle, gcal: FakeCalendar, drive: FakeDrive
) -> None:
    """gmail, drive and the Google calendar against the fake Google, the terminal and outbound HTTP
    (both turned on) get the same fuzz."""
    gcal.add_calendar("Assistant")
    drive.add("notes.txt", "hello")
    drive.folder("Projects")
    calendar_scopes = [scopes.CALENDAR_READONLY, scopes.CALENDAR_EVENTS, scopes.CALENDAR_FREEBUSY]
    granted = [*ALL_SCOPES, scopes.DRIVE_FILE, *calendar_scopes]
    gmail_settings = sign_in(
        tmp_path, google, granted, servers=["gmail", "drive", "files", "terminal", "http", "calendar"]
    )
    settings = {
        **gmail_settings,
        "calendar": {"backend": "google", "calendar": "Assistant"},
        "server": {**gmail_settings["server"], "tools": ["*"]},
        "terminal": {"enabled": True, "allow": ["true"], "isolation": "none"},
        "http": {"outbound": {"enabled": True, "allow_hosts": ["api.test"], "allow_plain_http": True}},
    }
    app = build_app(make_config(tmp_path, settings))
    app.services["http"].resolver = fixed_resolver({})  # no name resolves: nothing leaves the machine
    async with connect(tmp_path, app=app, elicit=None) as connected:
        tools = [tool for tool in (await connected.list_tools()).tools if not tool.name.startswith("files_")]
        assert {tool.name.split("_", 1)[0] for tool in tools} == {"gmail", "drive", "calendar", "terminal", "http"}
        rng = random.Random(11)
        for tool in tools:
            for _ in range(EXAMPLES_PER_TOOL):
                arguments = hostile_arguments(rng, tool.input_schema)
                result = await connected.call_tool(tool.name, arguments)
                assert_answered_cleanly(tool.name, arguments, result)


async def test_google_tasks_survive_hostile_arguments(tmp_path: Path, google: FakeGoogle, tasks: FakeTasks) -> None:
    """Every tasks tool against the fake Google Tasks, which refuses what Google would refuse."""
    tasks.add("Target", notes="n", due="2026-03-05T00:00:00.000Z")
    async with connect(tmp_path, tasks_settings(tmp_path, google), elicit=None) as connected:
        tools = (await connected.list_tools()).tools
        assert {tool.name.split("_", 1)[0] for tool in tools} == {"tasks"}
        rng = random.Random(13)
        for tool in tools:
            for _ in range(EXAMPLES_PER_TOOL):
                arguments = hostile_arguments(rng, tool.input_schema)
                result = await connected.call_tool(tool.name, arguments)
                assert_answered_cleanly(tool.name, arguments, result)


async def test_hostile_search_words_always_make_a_query_drive_accepts(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive
) -> None:
    """Whatever the model puts in drive.search's name or text, the q sent parses at Drive: the
    escaping is ours, so a word can fail only our own checks (NUL, length), never Google's."""
    from tests.servers.drive.fixtures import drive_settings

    drive.add("notes.txt", "hello")
    async with connect(tmp_path, drive_settings(tmp_path, google)) as connected:
        for value in HOSTILE_STRINGS:
            for field in ("name", "text"):
                result = await connected.call_tool("drive_search", {field: value, "limit": 1})
                if result.is_error:
                    error = failure(result)
                    assert error["kind"] == "invalid_arguments" and "Google" not in error["message"], (value, error)
                    assert "\x00" in value or len(value) > 255, (field, value, error)
    assert google.violations == []


async def test_docs_survive_hostile_arguments(tmp_path: Path, google: FakeGoogle, docs: FakeDocs) -> None:
    """The docs tools against the fake Docs, with a real document among the ids they may be given."""
    stored = planning_doc(docs)
    HOSTILE_STRINGS.append(stored.id)
    try:
        async with connect(tmp_path, docs_settings(tmp_path, google), elicit=None) as connected:
            tools = (await connected.list_tools()).tools
            assert {tool.name for tool in tools} == {"docs_read", "docs_create", "docs_append", "docs_replace"}
            rng = random.Random(12)
            for tool in tools:
                for _ in range(EXAMPLES_PER_TOOL):
                    arguments = hostile_arguments(rng, tool.input_schema)
                    result = await connected.call_tool(tool.name, arguments)
                    assert_answered_cleanly(tool.name, arguments, result)
    finally:
        HOSTILE_STRINGS.remove(stored.id)
