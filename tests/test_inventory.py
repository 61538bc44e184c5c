"""The inventory: one grammar for entries, one chain of filters that says why a caller is or is not
served a tool, every fact about a tool in one place, and no tool name written twice."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

import mcp_tools
from mcp_tools.composition.app import build_app
from mcp_tools.core.tooling import Risk
from mcp_tools.inventory.catalog import declared
from mcp_tools.inventory.chain import FILTERS, Audience
from mcp_tools.inventory.discovery import META_TOOLS
from mcp_tools.inventory.grammar import EntryError, covers, parse_entries
from mcp_tools.oauth.guard import Reach
from mcp_tools.oauth.settings import OAuthSettings
from mcp_tools.policy.gate import Caller
from mcp_tools.transports.mcp_server import build_server
from tests.harness import failure, make_config
from tests.textcalls.conftest import run

PACKAGE = Path(mcp_tools.__file__).parent
pytestmark = pytest.mark.anyio
SCOPES = {"read": ["read_only"], "write": ["*"], "files": ["files", "-files.delete"]}


def oauth(scopes: dict[str, list[str]] | None = None) -> OAuthSettings:
    return OAuthSettings(
        issuer="https://auth.example.org", resource="https://mcp.example.org/mcp", scopes=scopes or SCOPES
    )


def files_app(tmp_path: Path, server: dict[str, Any] | None = None, **policy: Any) -> Any:
    vault = tmp_path / "vault"
    vault.mkdir(exist_ok=True)
    settings = {
        "server": {"servers": ["files", "notes"], **(server or {})},
        "notes": {"vault": str(vault), "watch": False},
        "policy": policy,
    }
    app = build_app(make_config(tmp_path, settings))
    app.store.close()
    return app


def steps_of(app: Any, name: str, audience: Audience = Audience()) -> dict[str, tuple[bool, str]]:
    explained = app.catalog.explain(app.find_tool(name).spec, audience)
    return {step.filter: (step.passed, step.reason) for step in explained.steps}


# One grammar ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry", ["*", "*.core", "read_only", "files", "files.extended", "files.read", "-files.delete"]
)
def test_selection_and_scopes_accept_the_same_entries(entry: str) -> None:
    from mcp_tools.core.toolsets import parse_entries as selection_entries

    assert selection_entries([entry])[0] == parse_entries([entry])[0]
    assert oauth({"s": [entry]}).scopes == {"s": [entry]}


@pytest.mark.parametrize("entry", ["files/read", "files.read.all", "*.read", "read_only.core", "Files"])
def test_selection_and_scopes_refuse_the_same_entries_in_the_same_words(entry: str) -> None:
    from pydantic import ValidationError

    from mcp_tools.core.toolsets import SelectionError
    from mcp_tools.core.toolsets import parse_entries as selection_entries

    with pytest.raises(SelectionError) as selection:
        selection_entries([entry])
    with pytest.raises(ValidationError) as scopes:
        oauth({"s": [entry]})
    reason = str(selection.value).replace("selection entry", "scope entry")
    assert reason in str(scopes.value)


def test_a_scope_reaches_what_its_entries_cover_and_an_exclusion_wins(tmp_path: Path) -> None:
    app = files_app(tmp_path)
    read, delete, write = (app.find_tool(name).spec for name in ("files.read", "files.delete", "files.write"))
    entries = parse_entries(SCOPES["files"])
    assert covers(entries, read) and covers(entries, write) and not covers(entries, delete)
    reach = Reach(oauth(), frozenset({"files"}))
    assert reach(read) and not reach(delete)
    assert reach.scope_for(delete) == "write"  # the scope that would reach it
    assert reach.whole_scope() == "write"  # a scope with an exclusion does not reach every tool
    with pytest.raises(EntryError, match=r"unknown namespace 'fils'.*did you mean 'files'"):
        parse_entries(["fils"], namespaces=["files", "notes"])


def test_read_only_selects_only_what_reads(tmp_path: Path) -> None:
    app = files_app(tmp_path, {"tools": ["read_only", "-notes"]})
    served = [tool.spec for tool in app.visible_tools()]
    assert served and all(spec.read_only and spec.namespace == "files" for spec in served)
    assert "files.read" in [spec.name for spec in served]


# One chain, each filter with its reason ------------------------------------------------------------


def test_every_filter_gives_its_reason(tmp_path: Path) -> None:
    app = files_app(tmp_path, {"tools": ["files", "-files.move"]}, disabled=["files.delete"])
    assert tuple(steps_of(app, "files.read")) == FILTERS
    assert steps_of(app, "files.delete")["policy"] == (
        False,
        "hidden: files.delete is disabled by the policy config (disabled = 'files.delete')",
    )
    assert steps_of(app, "files.move")["selection"] == (False, "excluded by '-files.move'")
    assert steps_of(app, "notes.read")["selection"] == (False, "core tier, not selected")
    assert steps_of(app, "files.read", Audience(namespace="notes"))["endpoint"] == (
        False,
        "this endpoint serves the notes namespace only (/files/mcp has it)",
    )
    reach = Reach(oauth(), frozenset({"read"}))
    assert steps_of(app, "files.write", Audience(reaches=reach))["reach"] == (
        False,
        "outside the scopes this sign-in was granted; scope write reaches it",
    )
    assert steps_of(app, "files.read", Audience(reaches=reach))["reach"][0] is True
    assert steps_of(app, "files.read")["account"] == (True, "every caller may use every account")
    # the first filter that stops a tool is the reason given for it
    assert app.why(app.find_tool("files.move").spec) == "excluded by '-files.move'"
    assert app.why(app.find_tool("files.read").spec) == "selected by 'files'"
    assert app.catalog.why(app.find_tool("files.write").spec, Audience(reaches=reach)).startswith("outside the scopes")


def test_the_dynamic_view_is_a_filter_with_its_reason(tmp_path: Path) -> None:
    app = files_app(tmp_path, {"discovery": "dynamic", "tools": ["files.core", "-files.delete"]})
    view = app.catalog.view_of(set())
    assert steps_of(app, "files.move", Audience(view=view))["view"] == (
        False,
        "extended tier, not selected; not enabled by this client (toolsets_enable adds it)",
    )
    assert steps_of(app, "files.read", Audience(view=view))["view"][0] is True
    view.enable(["files.extended"])
    assert steps_of(app, "files.move", Audience(view=view))["view"] == (True, "enabled by this client")
    # enabling never serves what the selection excludes: the selection's reason stands
    assert app.catalog.why(app.find_tool("files.delete").spec, Audience(view=view)) == "excluded by '-files.delete'"


# The faces ask the same chain ------------------------------------------------------------------------


async def test_tools_list_and_tools_call_answer_as_the_chain_does(tmp_path: Path) -> None:
    app = build_app(make_config(tmp_path, {"server": {"servers": ["files"], "tools": ["files.core"]}}))
    catalog = app.catalog
    async with app.running(), Client(build_server(app, "test"), mode="legacy") as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        assert listed == [tool.wire_name for tool in catalog.tools.values() if catalog.explain(tool.spec).served]
        error = failure(await client.call_tool("files_move", {"source": "a", "destination": "b"}))
    assert error["kind"] == "unknown_tool"
    assert f"({app.why(app.find_tool('files.move').spec)})" in error["message"]


async def test_a_call_outside_the_scopes_says_so_not_how_the_selection_chose_it(tmp_path: Path) -> None:
    app = build_app(make_config(tmp_path, {"server": {"servers": ["files"]}}))
    reach = Reach(oauth(), frozenset({"read"}))
    listed = [tool.spec.name for tool in app.catalog.listed(reaches=reach)]
    assert "files.read" in listed and "files.write" not in listed
    found = app.catalog.resolve("files_write", {"path": "a", "content": "b"}, "http", reaches=reach)
    assert found.tool is None and found.failure is not None
    message = found.failure.message
    assert message == "files_write is not served to this client (outside the scopes this sign-in was granted; " + (
        "scope write reaches it)"
    )
    assert "[server] tools" not in (found.failure.hint or "")
    async with app.running():
        written = '{"name": "files.write", "arguments": {"path": "a", "content": "b"}}'
        report = await run(app, written, caller=Caller(transport="text", reaches=reach))
    assert "outside the scopes this sign-in was granted" in json.dumps(report.as_dict())
    assert not (tmp_path / "data" / "files" / "a").exists()


async def test_a_text_call_gets_the_chains_reason(tmp_path: Path) -> None:
    app = build_app(make_config(tmp_path, {"server": {"servers": ["files"], "tools": ["files.core"]}}))
    async with app.running():
        report = await run(app, '{"name": "files.move", "arguments": {"source": "a", "destination": "b"}}')
    assert "is not served to this client (extended tier, not selected)" in json.dumps(report.as_dict())


@pytest.mark.slow
def test_the_command_line_explains_each_tool_as_the_server_serves_it(tmp_path: Path) -> None:
    from tests.processes import demo_config, run_cli

    config = demo_config(
        tmp_path,
        '[policy]\ndisabled = ["files.write"]\n[[policy.rules]]\nmatch = "files.*"\nrisk = "medium"\n'
        '[http.oauth]\nissuer = "https://auth.example.org"\nresource = "https://mcp.example.org/mcp"\n'
        '[http.oauth.scopes]\nread = ["read_only"]\nwrite = ["*"]\n',
        servers='["files"]',
    )
    plain = run_cli(config, "tools", "--explain", "--json", "--all")
    assert plain.returncode == 0, plain.stderr
    rows = {row["name"]: row for row in json.loads(plain.stdout)}
    assert rows["files.read"]["served"] and rows["files.read"]["risk"] == "medium"
    assert rows["files.read"]["risk_from"] == "your rule 'files.*'"
    assert rows["files.delete"]["risk"] == "high"
    assert rows["files.delete"]["risk_from"] == (
        "declared by the tool; the shipped rule '*.delete*' says the same; "
        "your rule 'files.*' may raise it, never lower it"
    )
    assert rows["files.write"]["why"].startswith("hidden: files.write is disabled")
    assert rows["files.move"]["why"] == "extended tier, not selected"
    assert [step["filter"] for step in rows["files.read"]["steps"]] == list(FILTERS)
    assert "task_support" not in rows["files.read"]
    signed_in = run_cli(config, "tools", "--explain", "--json", "--scopes", "read")
    rows = {row["name"]: row for row in json.loads(signed_in.stdout)}
    assert "files.read" in rows and "files.edit" not in rows
    text = run_cli(config, "tools", "--explain", "--all", "--scopes", "read")
    assert "reach      STOP  outside the scopes this sign-in was granted; scope write reaches it" in text.stdout


# Facts ------------------------------------------------------------------------------------------------


def test_each_tools_facts_are_gathered_once_with_the_final_risk_and_its_origin(tmp_path: Path) -> None:
    app = files_app(tmp_path, rules=[{"match": "files.read", "risk": "medium"}, {"match": "notes.*", "risk": "low"}])
    facts = app.catalog.facts
    assert set(facts) == {tool.spec.name for tool in app.tools.values()}
    assert facts["files.read"].risk is Risk.MEDIUM and facts["files.read"].risk_from == "your rule 'files.read'"
    assert facts["files.list"].risk is Risk.LOW and facts["files.list"].risk_from == "declared by the tool"
    # a pattern of the person's never lowers what the shipped rules or the tool set
    assert facts["notes.delete"].risk is Risk.HIGH
    assert facts["notes.delete"].risk_from == (
        "declared by the tool; the shipped rule '*.delete*' says the same; "
        "your rule 'notes.*' may raise it, never lower it"
    )
    for tool in app.tools.values():
        assert tool.configured_risk is facts[tool.spec.name].risk
        assert facts[tool.spec.name].task_support == "forbidden"


def test_the_shipped_rules_are_a_safety_net_for_tools_that_declare_too_little(tmp_path: Path) -> None:
    import dataclasses

    app = files_app(tmp_path)
    careless = dataclasses.replace(app.find_tool("files.list").spec, name="files.delete_everything")
    assert app.rules.risk_and_origin(careless) == (Risk.HIGH, "the shipped rule '*.delete*'")


def test_google_tools_declare_their_scopes_on_the_spec() -> None:
    from mcp_tools.servers import load_namespace
    from mcp_tools.servers.google import scopes

    for name in scopes.NAMESPACES:
        for spec in load_namespace(name).tools:
            assert spec.scopes is not None and spec.scopes.asked and spec.scopes.methods, spec.name
            for level in scopes.ACCESS_LEVELS:
                assert scopes.asked_scopes(spec.name, level) == spec.scopes.at(level)
    assert scopes.asked_scopes("drive.read", "read") == (scopes.DRIVE_READONLY,)


# No tool name written twice ----------------------------------------------------------------------------

# Literals that equal a tool's name without naming the tool, or that must name it as text.
ALLOWED = {
    ("core/config.py", "files.write"): "an example of [[policy.rules]] match in the config's schema",
    ("core/config.py", "files.delete"): "an example of [policy] disabled in the config's schema",
    ("transports/http_errors.py", "http.request"): "ASGI's message type",
    ("transports/http_limits.py", "http.request"): "ASGI's message type",
    ("oauth/guard.py", "http.request"): "ASGI's message type",
    ("oauth/limits.py", "http.request"): "ASGI's message type",
    ("servers/google/scopes.py", "gmail.send"): "a Google scope's own name",
    ("servers/google/scopes.py", "calendar.events"): "a Google scope's own name",
    # a namespace never imports another (tests/test_namespace_boundaries.py): it calls the files
    # store's tools by name through ctx.call_tool, each declared in its `reaches`
    ("servers/google/stored.py", "files.write"): "another namespace's tool, called through ctx.call_tool",
    ("servers/google/stored.py", "files.read"): "another namespace's tool, called through ctx.call_tool",
}


def _declarations(tree: ast.Module, constants: set[str]) -> tuple[set[int], set[int]]:
    """The literals that declare a name: a ToolSpec's or ToolAlias's own name (or the module
    constant a ToolSpec's `name=` is, when the service that calls Google names the tool too),
    and the other namespaces' tools a ToolSpec `reaches` (by name: a namespace never imports another)."""
    found: set[int] = set()
    reaching: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if called == "ToolAlias" and node.args:
            found.add(id(node.args[0]))
        for keyword in node.keywords:
            if keyword.arg == "name" and called in ("ToolSpec", "ToolAlias"):
                found.add(id(keyword.value))
            if keyword.arg == "reaches" and called == "ToolSpec" and isinstance(keyword.value, ast.Dict):
                reaching.update(id(value) for value in keyword.value.values)
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
            pairs = (
                zip(target.elts, value.elts, strict=True)
                if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
                else [(target, value)]
            )
            found.update(
                id(value) for target, value in pairs if isinstance(target, ast.Name) and target.id in constants
            )
    return found, reaching


def _name_constants(trees: list[ast.Module]) -> set[str]:
    """The module constants some ToolSpec's `name=` is (`name=SEND_TOOL`)."""
    return {
        keyword.value.id
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ToolSpec"
        for keyword in node.keywords
        if keyword.arg == "name" and isinstance(keyword.value, ast.Name)
    }


def test_no_tool_name_is_written_as_a_string_outside_its_declaration() -> None:
    names = set(declared().names) | {spec.name for spec in META_TOOLS}
    written = names | {name.replace(".", "_") for name in names}
    paths = sorted(PACKAGE.rglob("*.py"))
    trees = [ast.parse(path.read_text(encoding="utf-8")) for path in paths]
    constants = _name_constants(trees)
    found, declarations = [], []
    for path, tree in zip(paths, trees, strict=True):
        declaring, reaching = _declarations(tree, constants)
        where = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or node.value not in written:
                continue
            if id(node) in declaring:
                declarations.append(node.value)
            elif id(node) not in reaching and (where, node.value) not in ALLOWED:
                found.append(f"{where}:{node.lineno}: {node.value!r}")
    assert not found, "use the spec (its .name) instead of writing the name again:\n" + "\n".join(found)
    # and each canonical name is declared once: in its ToolSpec, or in the constant its ToolSpec names
    twice = sorted(name for name in names if declarations.count(name) > 1)
    assert not twice


def test_the_finder_finds_a_name_written_again(tmp_path: Path) -> None:
    source = 'READ_TOOL = "files.read"\nTOOLS = [ToolSpec(name=READ_TOOL)]\ntool = "files.read"\n'
    tree = ast.parse(source)
    declaring, _ = _declarations(tree, _name_constants([tree]))
    literals = [node for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value == "files.read"]
    assert [node.lineno for node in literals if id(node) not in declaring] == [3]
