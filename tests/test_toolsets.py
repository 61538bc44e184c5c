"""Which tools are served: `[server] tools`, tiers, exclusions, and toolsets a model enables itself."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcp_tools.composition.app import build_app
from mcp_tools.core.config import ConfigError
from mcp_tools.core.toolsets import DEFAULT_SELECTION, SelectionError, parse_entries, resolve
from mcp_tools.servers import CATALOG, load_namespace
from mcp_tools.transports.mcp_server import build_server
from tests.harness import connect, elicitation_handler, failure, make_config, ok, text_of

pytestmark = pytest.mark.anyio
FILES = [spec.name for spec in load_namespace("files").tools]
SPECS = {name: list(load_namespace(name).tools) for name in ("files", "notes", "inbox")}


def served(entries: list[str], running: tuple[str, ...] = ("files", "notes", "inbox")) -> set[str]:
    return set(resolve(parse_entries(entries, CATALOG), SPECS, running=running).chosen)


def served_by(settings: dict[str, Any], tmp_path: Path) -> list[str]:
    app = build_app(make_config(tmp_path, settings))
    app.store.close()
    return [tool.spec.name for tool in app.visible_tools()]


# The grammar -------------------------------------------------------------------------------------


def test_a_namespace_selects_all_its_tiers() -> None:
    assert served(["files"]) == set(FILES)


def test_a_tier_selects_only_that_tier() -> None:
    core = served(["files.core"])
    assert core == {"files.list", "files.read", "files.write", "files.edit", "files.search"}
    assert served(["files.extended"]) == set(FILES) - core


def test_a_single_tool() -> None:
    assert served(["files.read", "notes.search"]) == {"files.read", "notes.search"}


@pytest.mark.parametrize("order", [["files", "-files.move"], ["-files.move", "files"]])
def test_an_exclusion_wins_whatever_the_order(order: list[str]) -> None:
    assert served(order) == set(FILES) - {"files.move"}


def test_excluding_a_tier_or_a_namespace() -> None:
    assert served(["files", "-files.extended"]) == served(["files.core"])
    assert served(["*", "-notes"]) == set(FILES) | {s.name for s in SPECS["inbox"]}


def test_wildcards_cover_only_running_namespaces() -> None:
    assert served(["*.core"], running=("files",)) == served(["files.core"])
    assert served(["*"], running=("inbox",)) == {s.name for s in SPECS["inbox"]}


def test_the_default_is_the_core_tier_of_every_running_namespace(tmp_path: Path) -> None:
    assert DEFAULT_SELECTION == ("*.core",)
    names = served_by({"server": {"tools": None}}, tmp_path)  # files, inbox and search need no configuration
    assert sorted(names) == [
        "files.edit",
        "files.list",
        "files.read",
        "files.search",
        "files.write",
        "inbox.read",
        "inbox.search",
        "search.all",
    ]


def test_every_tool_declares_a_tier_and_no_tool_is_named_like_a_tier() -> None:
    for name in CATALOG:
        for spec in load_namespace(name).tools:
            assert spec.tier in ("core", "extended")
            assert spec.method not in ("core", "extended")
        assert any(spec.tier == "core" for spec in load_namespace(name).tools), name


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (["fils"], "unknown namespace 'fils' in 'fils'; did you mean 'files'?"),
        (["-noets.core"], "unknown namespace 'noets' in '-noets.core'; did you mean 'notes'?"),
        (["files/read"], "is not a selection entry"),
        (["*.read"], "after '*.' only a tier may follow"),
        (["files.read.all"], "is not a selection entry"),
    ],
)
def test_malformed_or_unknown_names_are_config_errors(tmp_path: Path, entries: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        make_config(tmp_path, {"server": {"tools": entries}})
    assert "server.tools" in str(caught.value) and message in str(caught.value)


def test_an_unknown_tool_or_tier_suggests_the_closest(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"server.tools: files has no tool or tier 'raed'.*did you mean 'files.read'"):
        build_app(make_config(tmp_path, {"server": {"tools": ["files.raed"]}}))
    with pytest.raises(ConfigError, match=re.escape("did you mean 'files.extended'")):
        build_app(make_config(tmp_path, {"server": {"tools": ["files.extnded"]}}))
    with pytest.raises(SelectionError, match="no tool or tier"):
        resolve(parse_entries(["inbox.send"], CATALOG), SPECS)


def test_a_one_run_selection_is_checked_and_named_as_such(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--tools: unknown namespace 'fles'"):
        build_app(make_config(tmp_path), tools=["fles"])
    app = build_app(make_config(tmp_path), tools=["files.read", "-inbox"])
    assert [tool.spec.name for tool in app.visible_tools()] == ["files.read"]
    app.store.close()


def test_servers_keeps_choosing_which_namespaces_run(tmp_path: Path) -> None:
    assert served_by({"server": {"servers": ["inbox"], "tools": None}}, tmp_path) == ["inbox.search", "inbox.read"]
    with pytest.raises(
        ConfigError, match=re.escape("server.tools names 'files', which server.namespaces does not start")
    ):
        build_app(make_config(tmp_path, {"server": {"servers": ["inbox"], "tools": ["files"]}}))


def test_naming_an_unconfigured_namespace_makes_it_required(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="namespace notes cannot start"):
        build_app(make_config(tmp_path, {"server": {"tools": ["notes.core"]}}))
    # A wildcard only covers what runs, and an exclusion asks nothing to start.
    assert "files.read" in served_by({"server": {"tools": ["*", "-notes"]}}, tmp_path)


def test_the_policy_still_hides_what_the_selection_names(tmp_path: Path) -> None:
    app = build_app(make_config(tmp_path, {"server": {"tools": ["files"]}, "policy": {"disabled": ["files.delete"]}}))
    app.store.close()
    names = [tool.spec.name for tool in app.visible_tools()]
    assert "files.delete" not in names and "files.move" in names
    delete = next(tool for tool in app.tools.values() if tool.spec.name == "files.delete")
    assert app.why(delete.spec).startswith("hidden: files.delete is disabled")


# Static serving over MCP --------------------------------------------------------------------------


async def test_a_tool_left_out_is_neither_listed_nor_callable(tmp_path: Path) -> None:
    app = build_app(make_config(tmp_path, {"server": {"tools": ["files.core"]}}))
    async with app.running(), Client(build_server(app, "test"), mode="legacy") as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names == ["files_list", "files_read", "files_write", "files_edit", "files_search"]
        assert (await client.list_tools()).tools and "toolsets_list" not in names
        error = failure(await client.call_tool("files_mkdir", {"path": "a"}))
        assert error["kind"] == "unknown_tool"
    assert not (tmp_path / "data" / "files" / "a").exists()


# Dynamic discovery ---------------------------------------------------------------------------------

DYNAMIC = {"server": {"discovery": "dynamic", "tools": ["files.core"]}}


@asynccontextmanager
async def dynamic_client(app: Any, mode: str, notices: list[Any]) -> AsyncIterator[Client]:
    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification | types.ToolListChangedNotification):
            notices.append(message)

    server = build_server(app, "test")
    async with Client(
        server, mode=mode, message_handler=on_message, elicitation_callback=elicitation_handler("accept")
    ) as client:
        yield client


async def enable_and_wait(client: Client, mode: str, notices: list[Any], names: list[str]) -> Any:
    """Enable toolsets and return once the client has been told its tool list changed."""
    if mode == "legacy":
        result = await client.call_tool("toolsets_enable", {"toolsets": names})
        with anyio.fail_after(5):
            while not any(isinstance(n, types.ToolListChangedNotification) for n in notices):
                await anyio.sleep(0.01)
        return result
    async with client.listen(tools_list_changed=True) as subscription:
        result = await client.call_tool("toolsets_enable", {"toolsets": names})
        with anyio.fail_after(5):
            async for event in subscription:
                notices.append(event)
                break
    return result


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_model_enables_a_toolset_and_calls_a_new_tool(tmp_path: Path, mode: str) -> None:
    app = build_app(make_config(tmp_path, DYNAMIC))
    notices: list[Any] = []
    async with app.running(), dynamic_client(app, mode, notices) as client:
        if mode == "legacy":
            assert client.session.server_capabilities.tools.list_changed is True
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names == [
            "toolsets_list",
            "toolsets_enable",
            "files_list",
            "files_read",
            "files_write",
            "files_edit",
            "files_search",
        ]
        listing = ok(await client.call_tool("toolsets_list", {}))
        files = next(item for item in listing["toolsets"] if item["name"] == "files")
        assert files["enabled"] == ["files_list", "files_read", "files_write", "files_edit", "files_search"]
        assert "files_mkdir" in files["tools"] and "inbox_search" not in files["tools"]

        result = await enable_and_wait(client, mode, notices, ["files.extended"])
        assert ok(result)["enabled"] == ["files_mkdir", "files_move", "files_delete", "files_import", "files_copy"]
        assert notices, "the client was told its tool list changed"
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert {"files_mkdir", "files_delete"} <= set(names)
        made = ok(await client.call_tool("files_mkdir", {"path": "reports"}))
        assert made == {"path": "reports", "created": True}
        # A newly enabled high-risk tool still asks the person (the client says yes here).
        deleted = ok(await client.call_tool("files_delete", {"path": "reports", "recursive": True}))
        assert deleted["type"] == "folder"
    audit = [(row.tool, row.decision) for row in app.store.tail(10)]
    app.store.close()
    assert ("toolsets.enable", "ran") in audit and ("toolsets.list", "ran") in audit
    assert ("files.delete", "confirmed") in audit


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_hidden_or_excluded_tool_can_never_be_enabled(tmp_path: Path, mode: str) -> None:
    settings = {
        "server": {"discovery": "dynamic", "tools": ["files.core", "-files.move"]},
        "policy": {"disabled": ["files.delete"], "read_only": False},
    }
    app = build_app(make_config(tmp_path, settings))
    async with app.running(), dynamic_client(app, mode, []) as client:
        for name in ("files.delete", "files_delete", "files.move", "*", "-files.core", "gmail"):
            error = failure(await client.call_tool("toolsets_enable", {"toolsets": [name]}))
            assert error["kind"] == "invalid_arguments", name
            assert "delete" not in error["message"] or name in error["message"]
        enabled = ok(await client.call_tool("toolsets_enable", {"toolsets": ["files"]}))["enabled"]
        assert enabled == ["files_mkdir", "files_import", "files_copy"]
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "files_delete" not in names and "files_move" not in names
        assert failure(await client.call_tool("files_delete", {"path": "x"}))["kind"] in (
            "unknown_tool",
            "denied_by_policy",
        )
        listing = ok(await client.call_tool("toolsets_list", {}))
        assert all("files_delete" not in item["tools"] for item in listing["toolsets"])
    app.store.close()


async def test_read_only_policy_keeps_write_tools_out_of_reach(tmp_path: Path) -> None:
    app = build_app(make_config(tmp_path, {**DYNAMIC, "policy": {"read_only": True}}))
    async with app.running(), dynamic_client(app, "legacy", []) as client:
        ok(await client.call_tool("toolsets_enable", {"toolsets": ["files"]}))
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"toolsets_list", "toolsets_enable", "files_list", "files_read", "files_search"}
    app.store.close()


async def test_meta_tools_pass_the_policy_like_any_other(tmp_path: Path) -> None:
    settings = {**DYNAMIC, "policy": {"disabled": ["toolsets.enable"]}}
    app = build_app(make_config(tmp_path, settings))
    async with app.running(), dynamic_client(app, "legacy", []) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert "toolsets_enable" not in names and "toolsets_list" in names
        assert failure(await client.call_tool("toolsets_enable", {"toolsets": ["files"]}))["kind"] == "unknown_tool"
    app.store.close()


async def test_each_session_keeps_its_own_enabled_set(tmp_path: Path) -> None:
    app = build_app(make_config(tmp_path, DYNAMIC))
    server = build_server(app, "test")
    async with app.running(), Client(server, mode="legacy") as first, Client(server, mode="legacy") as second:
        ok(await first.call_tool("toolsets_enable", {"toolsets": ["inbox"]}))
        assert "inbox_search" in {tool.name for tool in (await first.list_tools()).tools}
        assert "inbox_search" not in {tool.name for tool in (await second.list_tools()).tools}
        assert failure(await second.call_tool("inbox_search", {}))["kind"] == "unknown_tool"
    app.store.close()


async def test_enabling_what_is_already_served_changes_nothing(tmp_path: Path) -> None:
    app = build_app(make_config(tmp_path, DYNAMIC))
    notices: list[Any] = []
    async with app.running(), dynamic_client(app, "legacy", notices) as client:
        result = await client.call_tool("toolsets_enable", {"toolsets": ["files.core"]})
        assert ok(result)["enabled"] == [] and "Nothing new" in text_of(result)
        await anyio.sleep(0.05)
        assert not any(isinstance(n, types.ToolListChangedNotification) for n in notices)
    app.store.close()


# Over HTTP, in a real server process ---------------------------------------------------------------


@pytest.fixture(scope="module")
def dynamic_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from tests.processes import http_server, write_config

    tmp_path = tmp_path_factory.mktemp("dynamic")
    config = write_config(
        tmp_path / "config.toml",
        f'[server]\nservers = ["demo", "files"]\ntools = ["files.core"]\ndiscovery = "dynamic"\n'
        f'state_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n'
        '[http.tokens]\nlaptop = "tok-laptop-0123456789"\nphone = "tok-phone-9876543210"\n',
    )
    with http_server(config) as base:
        yield base


@asynccontextmanager
async def http_client(url: str, token: str, mode: str, notices: list[Any] | None = None) -> AsyncIterator[Client]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from tests.processes import bearer

    async def on_message(message: Any) -> None:
        if notices is not None and isinstance(message, types.ToolListChangedNotification):
            notices.append(message)

    async with (
        httpx2.AsyncClient(headers=bearer(token), timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, message_handler=on_message) as client,  # type: ignore[arg-type]
    ):
        yield client


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_over_http_each_client_grows_its_own_list(dynamic_http: str, mode: str) -> None:
    notices: list[Any] = []
    async with (
        http_client(dynamic_http + "/mcp", "tok-laptop-0123456789", mode, notices) as laptop,
        http_client(dynamic_http + "/mcp", "tok-phone-9876543210", mode) as phone,
    ):
        before = [tool.name for tool in (await laptop.list_tools()).tools]
        assert "files_mkdir" not in before and "toolsets_enable" in before
        await enable_and_wait(laptop, mode, notices, ["files.mkdir"])
        assert notices
        assert "files_mkdir" in {tool.name for tool in (await laptop.list_tools()).tools}
        assert ok(await laptop.call_tool("files_mkdir", {"path": f"made-{mode}"}))["created"] is True
        assert "files_mkdir" not in {tool.name for tool in (await phone.list_tools()).tools}
        assert failure(await phone.call_tool("files_mkdir", {"path": "x"}))["kind"] == "unknown_tool"


async def test_a_namespace_path_offers_only_its_own_toolset(dynamic_http: str) -> None:
    async with http_client(dynamic_http + "/files/mcp", "tok-phone-9876543210", "legacy") as client:
        listing = ok(await client.call_tool("toolsets_list", {}))
        assert [item["name"] for item in listing["toolsets"]] == ["files"]
        assert failure(await client.call_tool("toolsets_enable", {"toolsets": ["demo"]}))["kind"] == (
            "invalid_arguments"
        )


# The command line ----------------------------------------------------------------------------------


async def test_serve_tools_selects_for_one_run(tmp_path: Path) -> None:
    from tests.processes import demo_config, stdio_params

    config = demo_config(tmp_path, servers='["demo", "files"]')
    async with Client(stdio_params(config, "--tools=demo.echo,files,-files.extended"), mode="legacy") as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert names == ["files_list", "files_read", "files_write", "files_edit", "files_search", "demo_echo"]


@pytest.mark.slow
def test_tools_and_doctor_say_what_is_served_and_why(tmp_path: Path) -> None:
    from tests.processes import demo_config, run_cli

    config = demo_config(tmp_path, servers='["demo", "files"]')
    listing = run_cli(config, "tools", "--all")
    assert listing.returncode == 0, listing.stderr
    assert 'selection: ["*.core"] (the default); discovery: static' in listing.stdout
    assert "not served: extended tier, not selected" in listing.stdout
    rows = {row["name"]: row for row in json.loads(run_cli(config, "tools", "--json", "--all").stdout)}
    assert rows["files.move"]["served"] is False and rows["files.move"]["tier"] == "extended"
    assert rows["files.read"]["served"] is True and rows["files.read"]["why"] == "selected by '*.core'"
    doctor = run_cli(config, "doctor", "--tools", "files,-files.move")
    assert doctor.returncode == 0, doctor.stderr
    assert 'tools:     9 served, selection ["files", "-files.move"], discovery=static' in doctor.stdout
    assert "files     on  (9 tools); not served: move (excluded by '-files.move')" in doctor.stdout
    assert "demo      on  (0 tools); not served: echo, note, erase, fail (core tier, not selected)" in doctor.stdout
    bad = run_cli(config, "tools", "--tools", "files.mvoe")
    assert bad.returncode == 2 and "did you mean 'files.move'?" in bad.stderr


async def test_a_tool_that_is_not_served_says_how_it_would_be(tmp_path: Path) -> None:
    app = build_app(make_config(tmp_path, {"server": {"tools": ["files.core"]}}))
    async with app.running(), connect(tmp_path, app=app) as client:
        error = failure(await client.call_tool("files_delete", {"path": "x.txt"}))
    assert error["kind"] == "unknown_tool"
    assert "files_delete is not served to this client (extended tier, not selected)" in error["message"]
    assert "'files.delete' (or 'files.extended') to [server] tools" in error["hint"]
