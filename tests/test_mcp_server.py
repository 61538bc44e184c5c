"""Tool definitions: derived from the declarations, cached between starts, never stale."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from mcp_tools.composition.app import build_app
from mcp_tools.transports import budget, mcp_server
from mcp_tools.transports.mcp_server import _sources_fingerprint, cached_definitions, definitions_key, tool_definition
from tests.harness import make_config


def demo_app(tmp_path: Path, **policy: object):
    return build_app(make_config(tmp_path, {"server": {"servers": ["demo"]}, "policy": dict(policy)}))


def test_cached_definitions_equal_fresh_ones(tmp_path: Path, demo_namespace: str) -> None:
    app = demo_app(tmp_path)
    tools = app.visible_tools()
    fresh = [tool_definition(tool) for tool in tools]
    first = cached_definitions(tools, tmp_path / "cache")
    assert len(list((tmp_path / "cache").glob("tools-*.json"))) == 1
    second = cached_definitions(tools, tmp_path / "cache")
    assert first == fresh and second == fresh


def test_every_shipped_definition_comes_back_from_the_cache_as_it_was_made(tmp_path: Path) -> None:
    """Tools with no annotations or enum types included: the cache must not add or drop a key."""
    tools = budget.every_tool()
    cached_definitions(tools, tmp_path / "cache")
    assert cached_definitions(tools, tmp_path / "cache") == [tool_definition(tool) for tool in tools]


def test_the_key_covers_the_code_that_shapes_schemas() -> None:
    """Compacting schemas happens here: a change to it changes every key."""
    size = os.stat(mcp_server.__file__).st_size
    assert f"mcp_server.py:{size}:" in _sources_fingerprint()


def test_a_change_of_risk_changes_the_key(tmp_path: Path, demo_namespace: str) -> None:
    plain = demo_app(tmp_path / "a").visible_tools()
    raised = demo_app(tmp_path / "b", rules=[{"match": "demo.echo", "risk": "high"}]).visible_tools()
    assert definitions_key(plain) != definitions_key(raised)
    cached_definitions(plain, tmp_path / "cache")
    definitions = {tool.name: tool for tool in cached_definitions(raised, tmp_path / "cache")}
    assert "Risk: high." in (definitions["demo_echo"].description or "")
    assert len(list((tmp_path / "cache").glob("tools-*.json"))) == 1  # the stale file is gone


def test_a_change_of_wording_or_hints_changes_the_key(tmp_path: Path, demo_namespace: str) -> None:
    """A namespace may vary a declaration with its config: the cache must not serve the old one."""
    (tool, *rest) = demo_app(tmp_path).visible_tools()
    key = definitions_key([tool, *rest])
    for change in ({"description": "Other words."}, {"title": "Other"}, {"read_only": not tool.spec.read_only}):
        changed = dataclasses.replace(tool, spec=dataclasses.replace(tool.spec, **change))
        assert definitions_key([changed, *rest]) != key, change
        definitions = cached_definitions([changed, *rest], tmp_path / "cache")
        assert definitions[0] == tool_definition(changed)


def test_the_http_header_check_finds_input_schemas_without_listing_tools(tmp_path: Path, demo_namespace: str) -> None:
    """On 2026-07-28 HTTP the SDK checks `Mcp-Param-*` headers against the called tool's input schema."""
    from mcp_tools.transports.mcp_server import build_server

    app = demo_app(tmp_path)
    server = build_server(app, transport="http")
    lookup = server.get_tool_input_schema
    assert lookup is not None
    for tool in app.visible_tools():
        assert lookup(tool.wire_name) == tool_definition(tool).input_schema
    assert lookup("no_such_tool") is None


def test_a_corrupt_cache_is_regenerated(tmp_path: Path, demo_namespace: str) -> None:
    tools = demo_app(tmp_path).visible_tools()
    cached_definitions(tools, tmp_path / "cache")
    (cache_file,) = (tmp_path / "cache").glob("tools-*.json")
    cache_file.write_text("[{broken")
    assert cached_definitions(tools, tmp_path / "cache") == [tool_definition(tool) for tool in tools]


def test_an_unwritable_cache_dir_only_costs_the_cache(tmp_path: Path, demo_namespace: str) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    tools = demo_app(tmp_path).visible_tools()
    assert cached_definitions(tools, blocker / "cache") == [tool_definition(tool) for tool in tools]


@pytest.mark.anyio
async def test_an_in_band_answer_counts_only_for_the_principal_it_was_asked_of(tmp_path: Path) -> None:
    """An input-required round trip replayed from another token's session asks again instead of running."""
    import mcp_types as types

    from mcp_tools.core.tooling import Risk
    from mcp_tools.policy.gate import Answer, AskLater, ConfirmationRequest
    from mcp_tools.state.sqlite import PolicyStore
    from mcp_tools.transports.mcp_server import CONFIRM_KEY, InputRequiredElicitation

    store = PolicyStore(tmp_path / "policy.sqlite3")
    request = ConfirmationRequest("demo.erase", Risk.HIGH, "Erase t", {"target": "t"}, "digest")
    asked = await InputRequiredElicitation(
        types.CallToolRequestParams(name="demo_erase", arguments={"target": "t"}), store, 600, "laptop"
    ).ask(request)
    assert isinstance(asked, AskLater)

    def answered(principal: str) -> InputRequiredElicitation:
        params = types.CallToolRequestParams(
            name="demo_erase",
            arguments={"target": "t"},
            input_responses={CONFIRM_KEY: types.ElicitResult(action="accept", content={"confirm": True})},
            request_state=asked.payload.request_state,
        )
        return InputRequiredElicitation(params, store, 600, principal)

    assert isinstance(await answered("phone").ask(request), AskLater)
    assert await answered("laptop").ask(request) is Answer.ACCEPT
