"""The policy gate, seen through a real MCP client: what runs, what asks, what is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import mcp_types as types
import pytest

from mcp_tools.composition.app import build_app
from mcp_tools.core.tooling import Arguments, Risk, ToolSpec
from tests.harness import annotation, connect, failure, make_config, ok, text_of

pytestmark = pytest.mark.anyio
DEMO = {"server": {"servers": ["demo"]}}
BOTH_ERAS = pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])


def settings(**policy: object) -> dict[str, dict[str, object]]:
    return {"server": {"servers": ["demo"]}, "policy": dict(policy)}


def demo_app(tmp_path: Path, **policy: object):
    return build_app(make_config(tmp_path, settings(**policy)))


async def test_low_risk_runs_without_notice(tmp_path: Path, demo_namespace: str) -> None:
    async with connect(tmp_path, DEMO, elicit=None) as client:
        result = await client.call_tool("demo_echo", {"text": "hi"})
    assert ok(result) == {"echo": "hello: hi"}
    assert "Action performed" not in text_of(result)


async def test_medium_risk_runs_and_reports_the_action(tmp_path: Path, demo_namespace: str) -> None:
    async with connect(tmp_path, DEMO, elicit=None) as client:
        result = await client.call_tool("demo_note", {"key": "k", "text": "v"})
    assert ok(result) == {"key": "k", "replaced": False}
    assert text_of(result).startswith("Action performed: Store note 'k'")


@BOTH_ERAS
async def test_dynamic_risk_escalates_to_a_confirmation(tmp_path: Path, demo_namespace: str, mode: str) -> None:
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, DEMO, elicit="decline", mode=mode, seen=seen) as client:
        assert not (await client.call_tool("demo_note", {"key": "k", "text": "v1"})).is_error
        assert seen == []
        replaced = await client.call_tool("demo_note", {"key": "k", "text": "v2"})
    assert failure(replaced)["kind"] == "declined_by_user"
    assert len(seen) == 1 and "Store note 'k'" in seen[0].message


@BOTH_ERAS
async def test_high_risk_runs_after_the_person_confirms(tmp_path: Path, demo_namespace: str, mode: str) -> None:
    seen: list[types.ElicitRequestParams] = []
    app = demo_app(tmp_path)
    async with connect(tmp_path, app=app, elicit="accept", mode=mode, seen=seen) as client:
        result = await client.call_tool("demo_erase", {"target": "old-drafts"})
    assert ok(result) == {"erased": "old-drafts"}
    assert app.services["demo"].erased == ["old-drafts"]
    message = seen[0].message
    assert "Erase 'old-drafts'" in message and "demo.erase" in message and "high risk" in message
    schema = seen[0].requested_schema
    assert schema["properties"]["confirm"]["type"] == "boolean"
    assert [(row.decision, row.answered_by) for row in app.store.tail()] == [("confirmed", "elicitation:test")]


@BOTH_ERAS
@pytest.mark.parametrize("answer", ["decline", "cancel", "accept_unchecked"])
async def test_high_risk_does_not_run_unless_confirmed(
    tmp_path: Path, demo_namespace: str, mode: str, answer: str
) -> None:
    app = demo_app(tmp_path)
    async with connect(tmp_path, app=app, elicit=answer, mode=mode) as client:  # type: ignore[arg-type]
        result = await client.call_tool("demo_erase", {"target": "x"})
    error = failure(result)
    assert error["kind"] == "declined_by_user"
    assert app.services["demo"].erased == []
    assert [row.decision for row in app.store.tail()] == ["declined"]


async def test_elicitation_timeout_fails_closed(tmp_path: Path, demo_namespace: str) -> None:
    import anyio
    from mcp import Client

    from mcp_tools.transports.mcp_server import build_server

    app = build_app(make_config(tmp_path, settings(elicitation_timeout_seconds=0.2)))

    async def never_answers(context: object, params: object) -> types.ElicitResult:
        await anyio.sleep(5)
        raise AssertionError("unreachable")

    async with (
        app.running(),
        Client(build_server(app, "test"), mode="legacy", elicitation_callback=never_answers) as client,
    ):
        result = await client.call_tool("demo_erase", {"target": "x"})
    assert failure(result)["kind"] == "declined_by_user"
    assert "timed out" in failure(result)["message"]
    assert app.services["demo"].erased == []


@BOTH_ERAS
async def test_out_of_band_approval_covers_exactly_one_identical_call(
    tmp_path: Path, demo_namespace: str, mode: str
) -> None:
    app = demo_app(tmp_path)
    async with connect(tmp_path, app=app, elicit=None, mode=mode) as client:
        first = failure(await client.call_tool("demo_erase", {"target": "x"}))
        assert first["kind"] == "approval_required"
        approval_id = first["approval_id"]
        assert approval_id in first["hint"] and "mcp-tools approvals approve" in first["hint"]
        # Asking again before the person answered points at the same approval.
        assert failure(await client.call_tool("demo_erase", {"target": "x"}))["approval_id"] == approval_id
        app.store.decide_approval(approval_id, approve=True, ttl_seconds=600)
        # Other arguments are not covered.
        other = failure(await client.call_tool("demo_erase", {"target": "y"}))
        assert other["kind"] == "approval_required" and other["approval_id"] != approval_id
        assert ok(await client.call_tool("demo_erase", {"target": "x"})) == {"erased": "x"}
        third = failure(await client.call_tool("demo_erase", {"target": "x"}))
        assert third["kind"] == "approval_required" and third["approval_id"] != approval_id
    assert app.services["demo"].erased == ["x"]
    decisions = [(row.decision, row.approval_id) for row in app.store.tail()]
    assert ("approved_out_of_band", approval_id) in decisions
    assert [d for d, _ in decisions].count("approval_required") == 4


async def test_denied_approval_is_refused(tmp_path: Path, demo_namespace: str) -> None:
    app = demo_app(tmp_path)
    async with connect(tmp_path, app=app, elicit=None) as client:
        approval_id = failure(await client.call_tool("demo_erase", {"target": "x"}))["approval_id"]
        app.store.decide_approval(approval_id, approve=False, ttl_seconds=600)
        refused = failure(await client.call_tool("demo_erase", {"target": "x"}))
    assert refused["kind"] == "declined_by_user" and approval_id in refused["message"]
    assert app.services["demo"].erased == []


async def test_expired_approval_is_refused(tmp_path: Path, demo_namespace: str) -> None:
    app = demo_app(tmp_path)
    clock = [1_000_000.0]
    app.store.clock = lambda: clock[0]
    async with connect(tmp_path, app=app, elicit=None) as client:
        approval_id = failure(await client.call_tool("demo_erase", {"target": "x"}))["approval_id"]
        app.store.decide_approval(approval_id, approve=True, ttl_seconds=600)
        clock[0] += 601
        again = failure(await client.call_tool("demo_erase", {"target": "x"}))
    assert again["kind"] == "approval_required" and again["approval_id"] != approval_id
    assert app.services["demo"].erased == []


async def test_model_written_approval_fields_are_not_approval(tmp_path: Path, demo_namespace: str) -> None:
    app = demo_app(tmp_path)
    async with connect(tmp_path, app=app, elicit=None) as client:
        approval_id = failure(await client.call_tool("demo_erase", {"target": "x"}))["approval_id"]
        for sneaky in ({"approved": True}, {"approval_id": approval_id}, {"confirm": True}):
            result = await client.call_tool("demo_erase", {"target": "x", **sneaky})
            assert failure(result)["kind"] == "invalid_arguments"
    assert app.services["demo"].erased == []


async def test_no_elicitation_with_deny_setting_refuses(tmp_path: Path, demo_namespace: str) -> None:
    app = demo_app(tmp_path, on_no_elicitation="deny")
    async with connect(tmp_path, app=app, elicit=None) as client:
        error = failure(await client.call_tool("demo_erase", {"target": "x"}))
    assert error["kind"] == "denied_by_policy"
    assert app.store.list_approvals(include_done=True) == []


async def test_deny_rule_refuses_and_hides(tmp_path: Path, demo_namespace: str) -> None:
    app = demo_app(tmp_path, rules=[{"match": "demo.ec*", "risk": "deny"}])
    async with connect(tmp_path, app=app) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        error = failure(await client.call_tool("demo_echo", {"text": "x"}))
    assert "demo_echo" not in names and "demo_note" in names
    assert error["kind"] == "denied_by_policy"


async def test_user_rule_can_raise_a_low_tool_to_high(tmp_path: Path, demo_namespace: str) -> None:
    app = demo_app(tmp_path, rules=[{"match": "demo.echo", "risk": "high"}])
    async with connect(tmp_path, app=app, elicit=None) as client:
        error = failure(await client.call_tool("demo_echo", {"text": "x"}))
    assert error["kind"] == "approval_required"


async def test_read_only_hides_and_refuses_writers(tmp_path: Path, demo_namespace: str) -> None:
    app = demo_app(tmp_path, read_only=True)
    async with connect(tmp_path, app=app) as client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
        error = failure(await client.call_tool("demo_note", {"key": "k", "text": "v"}))
        assert ok(await client.call_tool("demo_echo", {"text": "x"}))
    assert names == ["demo_echo", "demo_fail"]
    assert error["kind"] == "denied_by_policy" and "read_only" in error["message"]
    assert app.services["demo"].notes == {}


async def test_disabled_hides_and_refuses(tmp_path: Path, demo_namespace: str) -> None:
    app = demo_app(tmp_path, disabled=["demo.erase"])
    async with connect(tmp_path, app=app) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        error = failure(await client.call_tool("demo_erase", {"target": "x"}))
    assert "demo_erase" not in names
    assert error["kind"] == "denied_by_policy" and "disabled" in error["message"]


async def test_argument_errors_say_what_to_fix(tmp_path: Path, demo_namespace: str) -> None:
    async with connect(tmp_path, DEMO) as client:
        missing = failure(await client.call_tool("demo_note", {"key": "k"}))
        wrong_type = failure(await client.call_tool("demo_echo", {"text": 5}))
        unknown = failure(await client.call_tool("demo_nope", {}))
    assert missing == {"kind": "invalid_arguments", "message": "demo.note needs text"}
    assert wrong_type["kind"] == "invalid_arguments" and wrong_type["message"].startswith("text:")
    assert unknown["kind"] == "unknown_tool"


async def test_handler_failures_are_error_results_without_internals(tmp_path: Path, demo_namespace: str) -> None:
    async with connect(tmp_path, DEMO) as client:
        expected = failure(await client.call_tool("demo_fail", {}))
        crash = await client.call_tool("demo_fail", {"kind": "crash"})
        still_serving = ok(await client.call_tool("demo_echo", {"text": "after"}))
    assert expected == {"kind": "not_found", "message": "nothing here", "hint": "try another key"}
    assert failure(crash)["kind"] == "internal_error"
    assert "secret-internal-detail" not in text_of(crash) and "Traceback" not in text_of(crash)
    assert still_serving == {"echo": "hello: after"}


async def test_audit_row_for_every_call_with_secrets_redacted(tmp_path: Path, demo_namespace: str) -> None:
    app = demo_app(tmp_path)
    async with connect(tmp_path, app=app, elicit=None) as client:
        await client.call_tool("demo_note", {"key": "k", "text": "x" * 5000, "api_token": "tok-SECRET-123"})
        await client.call_tool("demo_echo", {"nope": 1})
        await client.call_tool("demo_erase", {"target": "t"})
    rows = app.store.tail()
    assert [(row.tool, row.decision, row.outcome) for row in rows] == [
        ("demo.note", "ran", "ok"),
        ("demo.echo", "denied", "invalid_arguments"),
        ("demo.erase", "approval_required", "approval_required"),
    ]
    assert rows[0].risk == "medium" and rows[2].risk == "high" and rows[2].approval_id
    assert rows[0].args["api_token"] == "[redacted]"
    assert len(rows[0].args["text"]) < 300
    assert all(row.transport == "test" and row.principal == "local" for row in rows)
    stored = (tmp_path / "state" / "policy.sqlite3").read_bytes()
    assert b"tok-SECRET-123" not in stored


async def test_tools_carry_consistent_annotations(tmp_path: Path, demo_namespace: str) -> None:
    async with connect(tmp_path, DEMO) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    echo, note, erase = tools["demo_echo"], tools["demo_note"], tools["demo_erase"]
    assert annotation(echo, "read_only_hint") is True and annotation(echo, "destructive_hint") is False
    assert annotation(erase, "read_only_hint") is False and annotation(erase, "destructive_hint") is True
    assert annotation(note, "destructive_hint") is True  # it can overwrite
    assert echo.output_schema is not None and echo.input_schema["additionalProperties"] is False
    assert "Risk: high." in erase.description


async def test_dotted_wire_names_when_configured(tmp_path: Path, demo_namespace: str) -> None:
    config = {"server": {"servers": ["demo"], "wire_separator": "."}}
    async with connect(tmp_path, config) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert ok(await client.call_tool("demo.echo", {"text": "x"}))
    assert "demo.echo" in names and "demo_echo" not in names


def test_thousands_of_unknown_arguments_cost_one_pass() -> None:
    """Each unknown key once looked at every error again: 3,000 keys took minutes of processor time."""
    from pydantic import ValidationError

    from mcp_tools.policy.gate import describe_validation_error

    class Args(Arguments):
        text: str

    spec = ToolSpec(
        name="demo.many",
        description="x",
        input_model=Args,
        output_model=Args,
        handler=lambda *a: None,  # type: ignore[arg-type,return-value]
        risk=Risk.LOW,
        describe=lambda a: "x",
    )
    with pytest.raises(ValidationError) as raised:
        Args.model_validate({"text": "x", **{f"key{index}": 1 for index in range(2_000)}})
    calls = 0
    errors = raised.value.errors

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return errors(*args, **kwargs)

    exc = mock.Mock(wraps=raised.value)
    exc.errors = counted
    message = describe_validation_error(spec, exc)
    assert calls == 1
    assert message.startswith("demo.many does not take key0") and message.endswith("; and 1992 more problems")


async def test_an_unknown_argument_with_no_likely_meaning_is_named_and_the_list_follows(
    tmp_path: Path, demo_namespace: str
) -> None:
    async with connect(tmp_path, DEMO, elicit=None) as client:
        error = failure(await client.call_tool("demo_echo", {"text": "hi", "zzqx": 1}))
    assert error["kind"] == "invalid_arguments"
    assert error["message"] == "demo.echo does not take zzqx; it takes text"


async def test_an_audit_row_that_fails_to_write_is_logged_and_the_call_is_not_reported_done(
    tmp_path: Path, demo_namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A broken audit log (not an unreachable store) is logged, and a low call is answered
    `unavailable`: a result is never given out without its row kept (a call that changed
    something keeps its row in the spool: tests/state/test_storable_audit.py)."""
    app = demo_app(tmp_path)

    async def broken(row: object) -> None:
        raise RuntimeError("disk quota")

    app.store.append_audit = broken  # type: ignore[method-assign]
    async with connect(tmp_path, app=app) as client:
        assert failure(await client.call_tool("demo_echo", {"text": "hi"}))["kind"] == "unavailable"
    [record] = [r for r in caplog.records if "refused the audit row" in r.getMessage()]
    assert "demo.echo" in record.getMessage() and record.exc_info is not None


async def test_an_audit_row_the_store_cannot_take_withholds_the_result(tmp_path: Path, demo_namespace: str) -> None:
    """With the state store unreachable the answer would have no audit row: the caller gets
    `unavailable` instead of a result nobody can account for."""
    from mcp_tools.state.store import StateStoreUnavailable

    app = demo_app(tmp_path)

    async def unreachable(row: object) -> None:
        raise StateStoreUnavailable("the state store cannot be reached")

    app.store.append_audit = unreachable  # type: ignore[method-assign]
    async with connect(tmp_path, app=app) as client:
        error = failure(await client.call_tool("demo_echo", {"text": "hi"}))
    assert error["kind"] == "unavailable"


async def test_a_call_whose_row_cannot_be_written_or_spooled_answers_unavailable(
    tmp_path: Path, demo_namespace: str
) -> None:
    """The store down and the spool's disk refusing too: the answer says unavailable, and the
    server goes on (no traceback, no dead call)."""
    from mcp_tools.state.spool import AuditSpool
    from mcp_tools.state.store import StateStoreUnavailable

    app = demo_app(tmp_path)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the spool's folder would be")
    app.store.audit_spool = AuditSpool(blocked / "audit-spool.jsonl")

    async def unreachable(row: object) -> None:
        raise StateStoreUnavailable("the state store cannot be reached")

    real_append = app.store.append_audit
    app.store.append_audit = unreachable  # type: ignore[method-assign]
    async with connect(tmp_path, app=app) as client:
        error = failure(await client.call_tool("demo_note", {"key": "k", "text": "v"}))
        assert error["kind"] == "unavailable"
        app.store.append_audit = real_append  # type: ignore[method-assign]
        assert ok(await client.call_tool("demo_echo", {"text": "still here"})) == {"echo": "hello: still here"}
