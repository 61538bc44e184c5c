"""Preconditions run before the person is asked: a call bound to fail never spends their attention."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest

from mcp_tools.composition.app import build_app
from mcp_tools.policy.gate import Caller
from tests.harness import connect, failure, make_config, ok

pytestmark = pytest.mark.anyio
BOTH_ERAS = pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])


def demo_app(tmp_path: Path, **policy: object):
    return build_app(make_config(tmp_path, {"server": {"servers": ["demo"]}, "policy": dict(policy)}))


@BOTH_ERAS
async def test_a_failed_precondition_answers_at_once_and_asks_nobody(
    tmp_path: Path, demo_namespace: str, mode: str
) -> None:
    seen: list[types.ElicitRequestParams] = []
    app = demo_app(tmp_path)
    async with connect(tmp_path, app=app, elicit="accept", mode=mode, seen=seen) as client:
        error = failure(await client.call_tool("demo_erase", {"target": "missing-report"}))
    assert error["kind"] == "not_found" and "missing-report" in error["message"]
    assert seen == []
    assert app.services["demo"].erased == []
    [row] = app.store.tail()
    assert (row.decision, row.outcome, row.risk, row.approval_id) == ("precheck_failed", "not_found", "high", None)


async def test_a_failed_precondition_creates_no_approval(tmp_path: Path, demo_namespace: str) -> None:
    app = demo_app(tmp_path)
    async with connect(tmp_path, app=app, elicit=None) as client:
        error = failure(await client.call_tool("demo_erase", {"target": "missing-report"}))
    assert error["kind"] == "not_found"
    assert app.store.list_approvals(include_done=True) == []
    assert [row.decision for row in app.store.tail()] == ["precheck_failed"]


async def test_a_failed_precondition_leaves_an_approval_unused(tmp_path: Path, demo_namespace: str) -> None:
    """A call that cannot run does not consume the person's yes; it stays for when the call can run."""
    app = demo_app(tmp_path)
    service = app.services["demo"]
    async with connect(tmp_path, app=app, elicit=None) as client:
        approval_id = failure(await client.call_tool("demo_erase", {"target": "x"}))["approval_id"]
        app.store.decide_approval(approval_id, approve=True, ttl_seconds=600)
        service.gone.add("x")
        assert failure(await client.call_tool("demo_erase", {"target": "x"}))["kind"] == "not_found"
        assert app.store.get_approval(approval_id).status == "approved"
        service.gone.clear()
        assert ok(await client.call_tool("demo_erase", {"target": "x"})) == {"erased": "x"}
    assert app.store.get_approval(approval_id).status == "consumed"


@BOTH_ERAS
async def test_a_passing_precondition_leads_to_the_usual_confirmation(
    tmp_path: Path, demo_namespace: str, mode: str
) -> None:
    seen: list[types.ElicitRequestParams] = []
    app = demo_app(tmp_path)
    async with connect(tmp_path, app=app, elicit="accept", mode=mode, seen=seen) as client:
        result = await client.call_tool("demo_erase", {"target": "old-drafts"})
    assert ok(result) == {"erased": "old-drafts"}
    assert len(seen) == 1 and "Erase 'old-drafts'" in seen[0].message
    assert [row.decision for row in app.store.tail()] == ["confirmed"]


async def test_a_passing_precondition_still_needs_the_out_of_band_approval(tmp_path: Path, demo_namespace: str) -> None:
    app = demo_app(tmp_path)
    async with connect(tmp_path, app=app, elicit=None) as client:
        error = failure(await client.call_tool("demo_erase", {"target": "x"}))
    assert error["kind"] == "approval_required"
    assert app.services["demo"].erased == []


async def test_preconditions_run_after_argument_validation(tmp_path: Path, demo_namespace: str) -> None:
    app = demo_app(tmp_path)
    async with connect(tmp_path, app=app, elicit="accept") as client:
        error = failure(await client.call_tool("demo_erase", {"target": 5}))
    assert error["kind"] == "invalid_arguments"
    assert [row.decision for row in app.store.tail()] == ["denied"]


# -- names that have no tool ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("transport", "expected", "not_expected"),
    [
        ("stdio", "tools/list", "mcp-tools tools"),
        ("http", "tools/list", "mcp-tools tools"),
        ("cli", "mcp-tools tools`", "tools/list"),  # this installation's mcp-tools, by path when not on PATH
        ("text", "demo_echo, demo_note, demo_erase, demo_fail", "tools/list"),
    ],
)
async def test_an_unknown_name_gets_the_way_to_the_names_that_suits_the_caller(
    tmp_path: Path, demo_namespace: str, transport: str, expected: str, not_expected: str
) -> None:
    app = demo_app(tmp_path)
    found = app.catalog.resolve("demo_ecko", {}, transport)
    assert found.tool is None and found.failure is not None
    outcome = await app.gate.refuse(found.name, found.failure, Caller(transport=transport))
    error = outcome.error
    assert error is not None and error["kind"] == "unknown_tool"
    assert expected in error["hint"] and not_expected not in error["hint"]
    assert "demo_echo" in error["hint"]  # the near miss


async def test_a_tool_of_a_namespace_left_out_says_how_to_serve_it(tmp_path: Path, demo_namespace: str) -> None:
    app = demo_app(tmp_path)
    async with connect(tmp_path, app=app) as client:
        error = failure(await client.call_tool("notes_search", {"query": "x"}))
    assert error["kind"] == "not_configured" and error["namespace"] == "notes"
    assert "[server] namespaces" in error["message"]
