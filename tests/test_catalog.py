"""The catalog: one place resolves every tool name, decides what a caller is served, and words
the refusal the gate records."""

from __future__ import annotations

import ast
import inspect
import typing
from pathlib import Path

import pytest

import mcp_tools
from mcp_tools.composition.app import build_app
from mcp_tools.inventory.catalog import closest, declared, lookup, resolve_alias
from mcp_tools.policy.gate import BoundTool, PolicyGate
from mcp_tools.servers import CATALOG, load_namespace
from tests.harness import make_config
from tests.textcalls.conftest import run, text_app

PACKAGE = Path(mcp_tools.__file__).parent


@pytest.fixture
def files_root(tmp_path: Path) -> Path:
    root = tmp_path / "data" / "files"
    root.mkdir(parents=True, exist_ok=True)
    return root


@pytest.mark.parametrize(
    "written",
    ["files.read", "files_read", "read_file", "fs.read_file", "fs.read_text_file", "filesystem_read_text_file"],
)
def test_canonical_wire_and_alias_names_resolve_to_the_same_tool(tmp_path: Path, written: str) -> None:
    app = text_app(tmp_path, ["files"])
    found = app.catalog.resolve(written, {"path": "a.md"}, "text", aliases=True)
    assert found.failure is None and found.tool is not None
    assert found.tool is app.find_tool("files.read") and found.name == "files.read"
    assert found.arguments == {"path": "a.md"}
    # the result says how the call was written when that was another system's name
    assert found.written_as == (None if written in ("files.read", "files_read") else written)


def test_aliases_rename_and_reshape_arguments_into_the_tools_terms() -> None:
    assert resolve_alias("gmail_list", {"maxResults": 5, "q": "from:ada", "pageToken": "t"}) == (
        "gmail.search",
        {"limit": 5, "query": "from:ada", "cursor": "t"},
    )
    assert resolve_alias(
        "fs.edit_file", {"path": "a", "edits": [{"oldText": "x", "newText": "y"}], "dryRun": True}
    ) == (
        "files.edit",
        {"path": "a", "edits": [{"old_string": "x", "new_string": "y"}], "dry_run": True},
    )
    assert resolve_alias("calendar_create", {"start": {"dateTime": "2026-01-01T10:00:00Z"}, "summary": "Tea"}) == (
        "calendar.create_event",
        {"start": "2026-01-01T10:00:00Z", "title": "Tea"},
    )


def test_mcp_callers_are_not_served_other_systems_names(tmp_path: Path) -> None:
    """Aliases are for calls written as text; an MCP client calls the names tools/list gave it."""
    app = text_app(tmp_path, ["files"])
    found = app.catalog.resolve("read_file", {"path": "a.md"}, "stdio")
    assert found.tool is None and found.failure is not None and found.failure.kind == "unknown_tool"
    near = app.catalog.resolve("files_reed", {"path": "a.md"}, "stdio").failure
    assert near is not None and (near.hint or "").startswith("Did you mean files_read")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ('[{"id": "1", "type": "create_file", "operation": "?", "parameters": {}}]', "unknown_tool"),
        ('[{"id": "1", "type": "gmail_list", "operation": "?", "parameters": {"maxResults": 3}}]', "not_configured"),
        ('[{"id": "1", "type": "web_search", "operation": "?", "parameters": {"query": "x"}}]', "not_configured"),
    ],
)
async def test_the_text_answer_for_a_name_without_a_tool_is_what_the_audit_row_records(
    tmp_path: Path, files_root: Path, monkeypatch: pytest.MonkeyPatch, reply: str, kind: str
) -> None:
    """One failure, made by the catalog, recorded by the gate, read by the model: a namespace
    this build lacks used to be audited as `unknown_tool` while the model read `not_configured`."""
    app = text_app(tmp_path, ["files"])
    declared()  # what this version declares, read before the web namespace goes
    monkeypatch.delitem(CATALOG, "web")
    report = await run(app, reply + "\n✂️🐱\nok")
    (result,) = report.results
    error = result.outcome.error
    assert error is not None and error["kind"] == kind
    (row,) = app.store.tail()
    assert (row.tool, row.outcome, row.decision, row.transport) == (result.name, error["kind"], "denied", "text")


@pytest.mark.anyio
async def test_an_alias_for_a_tool_that_is_not_served_says_how_it_would_be(tmp_path: Path, files_root: Path) -> None:
    app = build_app(make_config(tmp_path, {"server": {"servers": ["files"], "tools": ["files.read"]}}))
    report = await run(app, '{"tool": "write_file", "path": "a.md", "content": "x"}')
    (result,) = report.results
    error = result.outcome.error
    assert error is not None and error["kind"] == "unknown_tool" and "is not served" in error["message"]
    assert result.name == "files.write" and result.written_as == "write_file"
    assert not (files_root / "a.md").exists()
    (row,) = app.store.tail()
    assert (row.tool, row.outcome) == ("files.write", "unknown_tool")


def test_the_gate_never_calls_back_into_composition(tmp_path: Path) -> None:
    app = text_app(tmp_path, ["files"])
    assert not any(callable(value) for value in vars(app.gate).values())
    assert not hasattr(PolicyGate, "explain_unknown")
    hints = typing.get_type_hints(PolicyGate.call)
    assert hints["tool"] is BoundTool  # never None: a name without a tool goes to `refuse`
    assert set(inspect.signature(PolicyGate.refuse).parameters) >= {"name", "failure", "caller"}
    imported = _imports(PACKAGE / "policy" / "gate.py")
    assert not imported & {
        "mcp_tools.composition.app",
        "mcp_tools.inventory.catalog",
        "mcp_tools.inventory.discovery",
        "mcp_tools.textcalls",
    }


def test_approvals_and_composition_do_not_import_each_other() -> None:
    for path in (PACKAGE / "approvals").glob("*.py"):
        assert "mcp_tools.composition.app" not in _imports(path), path


def test_every_alias_names_a_declared_tool_and_none_takes_another_tools_name() -> None:
    specs = {spec.name: spec for name in CATALOG for spec in load_namespace(name).tools}
    names = set(specs) | {name.replace(".", "_") for name in specs}
    seen: dict[str, str] = {}
    for canonical, spec in specs.items():
        for alias in spec.aliases:
            assert alias.name not in seen, (alias.name, seen.get(alias.name), canonical)
            seen[alias.name] = canonical
            own = {canonical, canonical.replace(".", "_")}
            assert alias.name not in names - own, f"{alias.name} ({canonical}) is another tool's name"
            assert lookup(alias.name) is not None and lookup(alias.name).tool == canonical  # type: ignore[union-attr]
    assert {alias.tool for alias in declared().aliases.values()} <= set(specs)
    assert set(declared().aliases) == set(seen)


@pytest.mark.parametrize(
    ("written", "candidates", "expected"),
    [
        ("create_file", ["read_file", "write_file"], ["write_file"]),
        ("writeFile", ["write_file", "files_write"], ["write_file"]),
        ("files_reed", ["files_read", "files_write"], ["files_read"]),
        ("fils", ["files", "notes"], ["files"]),
        ("xyzzy", ["files", "notes"], []),
    ],
)
def test_one_suggester_finds_the_closest_name(written: str, candidates: list[str], expected: list[str]) -> None:
    assert closest(written, candidates) == expected


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("mcp_tools")} | {
        prefix for name in found for prefix in _prefixes(name)
    }


def _prefixes(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:index]) for index in range(1, len(parts))]
