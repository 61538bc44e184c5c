"""Every way one namespace reaches another goes through the policy gate.

First the source: no namespace imports another namespace or builds another namespace's service,
and every tool a handler calls with `ctx.call_tool` is one its spec declares in `reaches`. Then
each declared crossing, found from the catalog rather than listed by hand, is run through the
real client: the other namespace's tool leaves its own audit row with the caller's principal,
and a policy that hides that tool refuses the argument before anything runs.
"""

from __future__ import annotations

import ast
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import mcp_tools
from mcp_tools.composition.app import build_app
from mcp_tools.servers import CATALOG, load_namespace
from mcp_tools.servers.google import scopes
from tests.harness import connect, failure, make_config, ok
from tests.servers.fake_google import FakeDrive, FakeGmail, FakeGoogle
from tests.servers.gmail.fixtures import ALL_SCOPES, nested_with_attachments, sign_in

SERVERS = Path(mcp_tools.__file__).parent / "servers"
SHARED_LIBRARIES = {"google"}  # mcp_tools/servers/google: the Google account, used by the Google namespaces


def namespace_of(module: str) -> str | None:
    """The catalog namespace a module belongs to (`mcp_tools.servers.http_requests.tools` -> http)."""
    for name, root in CATALOG.items():
        if module == root or module.startswith(root + "."):
            return name
    return None


def sources() -> list[tuple[str, Path]]:
    """Every source file under mcp_tools/servers with the namespace (or shared library) it belongs to."""
    found = []
    for path in sorted(SERVERS.rglob("*.py")):
        relative = path.relative_to(SERVERS.parent.parent).with_suffix("")
        module = ".".join(relative.parts).removesuffix(".__init__")
        owner = namespace_of(module) or (relative.parts[2] if len(relative.parts) > 3 else None)
        if owner is not None:
            found.append((owner, path))
    return found


def imported_modules(tree: ast.AST) -> list[str]:
    modules = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return modules


def called_tools(tree: ast.AST) -> list[str]:
    """The literal names handed to `call_tool(...)` (a computed name would be a finding of its own)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "call_tool":
            first = node.args[0] if node.args else None
            names.append(first.value if isinstance(first, ast.Constant) else "<computed>")
    return names


def crossings() -> set[tuple[str, str, str]]:
    """(tool, argument, other namespace's tool) for every spec of every namespace in the catalog."""
    return {
        (spec.name, option, target)
        for name in CATALOG
        for spec in load_namespace(name).tools
        for option, target in spec.reaches.items()
    }


def test_no_namespace_imports_or_builds_another_namespace():
    owners = {owner for owner, _ in sources()}
    assert set(CATALOG) <= owners  # every namespace was read, inbox, docs, files and search included
    findings = []
    for owner, path in sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for module in imported_modules(tree):
            other = namespace_of(module)
            if other is not None and other != owner:
                findings.append(f"{path.relative_to(SERVERS)} imports {module} (namespace {other})")
        uses_loader = "load_namespace" in imported_modules(tree) or any(
            m.endswith(".load_namespace") for m in imported_modules(tree)
        )
        builds = any(isinstance(node, ast.Attribute) and node.attr == "create" for node in ast.walk(tree))
        if uses_loader and builds:
            findings.append(f"{path.relative_to(SERVERS)} loads a namespace and calls create: a private service")
    assert findings == []


def test_every_tool_a_handler_calls_is_declared_in_reaches():
    declared = {target for _, _, target in crossings()}
    called = {
        (path.relative_to(SERVERS).as_posix(), name)
        for _, path in sources()
        for name in called_tools(ast.parse(path.read_text(encoding="utf-8")))
    }
    assert called  # the scan finds the calls that exist
    assert {(where, name) for where, name in called if name not in declared} == set()


def test_the_crossings_found_are_the_ones_proved_below():
    assert crossings() == set(SCENARIOS), "a tool reaches another namespace: add its scenario to SCENARIOS"


# --- each crossing through the real client -----------------------------------------------------

Scenario = Callable[[Any, Path, FakeGmail, FakeDrive], Awaitable[dict[str, Any]]]


def put(tmp_path: Path, path: str, data: bytes) -> None:
    target = tmp_path / "data" / "files" / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


async def drive_save(client: Any, tmp_path: Path, gmail: FakeGmail, drive: FakeDrive) -> dict[str, Any]:
    item = drive.add("chart.png", b"\x89PNG drive bytes", "image/png")
    return {"id": item.id, "save_to": "saved/chart.png"}


async def attachment_save(client: Any, tmp_path: Path, gmail: FakeGmail, drive: FakeDrive) -> dict[str, Any]:
    message = gmail.add(nested_with_attachments())
    return {"message_id": message.id, "index": 1, "save": True}


async def compose_with_attachment(client: Any, tmp_path: Path, gmail: FakeGmail, drive: FakeDrive) -> dict[str, Any]:
    put(tmp_path, "reports/q3.csv", b"region,revenue\n")
    return {"to": ["bob@example.org"], "subject": "Q3", "attachments": ["reports/q3.csv"]}


async def upload_new(client: Any, tmp_path: Path, gmail: FakeGmail, drive: FakeDrive) -> dict[str, Any]:
    put(tmp_path, "reports/q3.csv", b"region,revenue\n")
    return {"name": "q3.csv", "from_path": "reports/q3.csv"}


async def upload_over(client: Any, tmp_path: Path, gmail: FakeGmail, drive: FakeDrive) -> dict[str, Any]:
    item = drive.add("q3.csv", b"old", "text/csv")
    put(tmp_path, "reports/q3.csv", b"region,revenue\n")
    return {"id": item.id, "from_path": "reports/q3.csv"}


SCENARIOS: dict[tuple[str, str, str], Scenario] = {
    ("drive.create", "from_path", "files.read"): upload_new,
    ("drive.update", "from_path", "files.read"): upload_over,
    ("drive.read", "save_to", "files.write"): drive_save,
    ("gmail.attachment", "save", "files.write"): attachment_save,
    ("gmail.draft", "attachments", "files.read"): compose_with_attachment,
    ("gmail.send", "attachments", "files.read"): compose_with_attachment,
}


def google_settings(tmp_path: Path, google: FakeGoogle) -> dict[str, Any]:
    settings = sign_in(tmp_path, google, [*ALL_SCOPES, scopes.DRIVE_FILE], servers=["gmail", "drive", "files"])
    settings["drive"] = {}
    return settings


@pytest.mark.anyio
@pytest.mark.parametrize("crossing", sorted(SCENARIOS), ids=lambda crossing: f"{crossing[0]}.{crossing[1]}")
async def test_each_crossing_runs_through_the_gate_as_the_caller(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, drive: FakeDrive, crossing: tuple[str, str, str]
):
    tool, option, target = crossing
    wire = tool.replace(".", "_")
    app = build_app(make_config(tmp_path, google_settings(tmp_path, google)))
    async with connect(tmp_path, app=app, elicit="accept") as client:
        arguments = await SCENARIOS[crossing](client, tmp_path, gmail, drive)
        ok(await client.call_tool(wire, arguments))
    rows = app.store.tail(10)
    outer = rows[-1]
    inner = [row for row in rows[:-1] if row.tool == target]
    assert outer.tool == tool and inner, f"{tool} {option} left no {target} audit row"
    assert all((row.principal, row.transport, row.outcome) == (outer.principal, outer.transport, "ok") for row in inner)

    elsewhere = tmp_path / "hidden"
    elsewhere.mkdir()
    settings = {**google_settings(elsewhere, google), "policy": {"disabled": [target]}}
    hidden = build_app(make_config(elsewhere, settings))
    async with connect(elsewhere, app=hidden, elicit="accept") as client:
        arguments = await SCENARIOS[crossing](client, elsewhere, gmail, drive)
        refused = failure(await client.call_tool(wire, arguments))
    assert refused["kind"] == "denied_by_policy" and option in refused["message"] and target in refused["message"]
    assert [row.tool for row in hidden.store.tail(10)] == [tool]
