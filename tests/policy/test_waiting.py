"""High-risk calls from clients that cannot ask wait for an answer on the configured channels.

The channel here is the notify hook (a real command that appends the JSON it receives to a
file); answers come through the decision core, as the page, Telegram and the CLI give them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_tools.composition.app import build_app
from mcp_tools.state.sqlite import PolicyStore
from tests.harness import connect, failure, make_config, ok

pytestmark = pytest.mark.anyio


def hook_command(log: Path) -> list[str]:
    script = "import sys; open(sys.argv[1], 'ab').write(sys.stdin.buffer.read() + b'\\n')"
    return [sys.executable, "-c", script, str(log)]


def waiting_app(tmp_path: Path, wait: float = 20, **approvals: Any):
    settings = {
        "server": {"servers": ["demo"]},
        "approvals": {
            "wait_seconds": wait,
            "progress_interval_seconds": 0.2,
            "notify": {"command": hook_command(tmp_path / "hook.jsonl")},
            **approvals,
        },
    }
    return build_app(make_config(tmp_path, settings))


def announced(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "hook.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def answer_when_announced(tmp_path: Path, approve: bool, by: str = "cli") -> str:
    """What the person does: waits for the notification, then answers from another process."""
    with anyio.fail_after(15):
        while not announced(tmp_path):
            await anyio.sleep(0.05)
    approval_id = announced(tmp_path)[0]["id"]
    PolicyStore(tmp_path / "state" / "policy.sqlite3").decide(approval_id, approve, 600, decided_by=by)
    return approval_id


async def test_a_waiting_call_runs_once_the_person_approves(tmp_path: Path, demo_namespace: str) -> None:
    app = waiting_app(tmp_path)
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async with connect(tmp_path, app=app, elicit=None) as client, anyio.create_task_group() as group:
        group.start_soon(answer_when_announced, tmp_path, True)
        result = await client.call_tool("demo_erase", {"target": "drafts"}, progress_callback=on_progress)
    assert ok(result) == {"erased": "drafts"}
    assert app.services["demo"].erased == ["drafts"]
    [notice] = announced(tmp_path)
    assert notice["event"] == "approval_requested" and notice["tool"] == "demo.erase"
    assert notice["arguments"] == {"target": "drafts"} and "Erase 'drafts'" in notice["message"]
    assert notice["transport"] == "test" and notice["principal"] == "local"
    assert updates and updates[0][1] == 20 and "Waiting for the person to approve" in str(updates[0][2])
    assert [p for p, _, _ in updates] == sorted(p for p, _, _ in updates)
    rows = app.store.tail()
    assert [(row.decision, row.outcome, row.answered_by) for row in rows] == [("approved_out_of_band", "ok", "cli")]
    assert app.store.get_approval(rows[0].approval_id).status == "consumed"  # type: ignore[arg-type,union-attr]


async def test_a_waiting_call_is_declined_when_the_person_denies(tmp_path: Path, demo_namespace: str) -> None:
    app = waiting_app(tmp_path)
    async with connect(tmp_path, app=app, elicit=None) as client, anyio.create_task_group() as group:
        group.start_soon(answer_when_announced, tmp_path, False)
        result = await client.call_tool("demo_erase", {"target": "drafts"})
    error = failure(result)
    assert error["kind"] == "declined_by_user" and "denied approval" in error["message"]
    assert app.services["demo"].erased == []
    assert [(row.decision, row.answered_by) for row in app.store.tail()] == [("declined", "cli")]


async def test_when_the_wait_runs_out_the_retry_flow_still_works(tmp_path: Path, demo_namespace: str) -> None:
    app = waiting_app(tmp_path, wait=0.6)
    async with connect(tmp_path, app=app, elicit=None) as client:
        first = failure(await client.call_tool("demo_erase", {"target": "t"}))
        assert first["kind"] == "approval_required"
        app.out_of_band.decisions.decide(first["approval_id"], True, "cli")
        assert ok(await client.call_tool("demo_erase", {"target": "t"})) == {"erased": "t"}
    assert len(announced(tmp_path)) == 1  # the same approval is not announced twice
    assert [row.decision for row in app.store.tail()] == ["approval_required", "approved_out_of_band"]


async def test_a_cancelled_call_withdraws_its_approval(tmp_path: Path, demo_namespace: str) -> None:
    app = waiting_app(tmp_path)
    async with connect(tmp_path, app=app, elicit=None) as client:
        with anyio.move_on_after(1.0):
            await client.call_tool("demo_erase", {"target": "t"})
        with anyio.fail_after(10):
            while not app.store.tail():
                await anyio.sleep(0.05)
    [row] = app.store.tail()
    assert (row.decision, row.outcome) == ("withdrawn", "cancelled")
    approval = app.store.get_approval(row.approval_id)  # type: ignore[arg-type]
    assert approval is not None and approval.status == "withdrawn"
    with pytest.raises(ValueError, match="withdrawn"):
        app.out_of_band.decisions.decide(approval.id, True, "page")
    assert app.services["demo"].erased == []


async def test_without_a_channel_nothing_waits(tmp_path: Path, demo_namespace: str) -> None:
    app = build_app(make_config(tmp_path, {"server": {"servers": ["demo"]}}))
    assert not app.out_of_band.reaches_person
    async with connect(tmp_path, app=app, elicit=None) as client:
        with anyio.fail_after(5):
            assert failure(await client.call_tool("demo_erase", {"target": "t"}))["kind"] == "approval_required"


async def test_a_failing_hook_does_not_stop_the_call_from_waiting(tmp_path: Path, demo_namespace: str) -> None:
    settings = {
        "server": {"servers": ["demo"]},
        "approvals": {"wait_seconds": 0.5, "notify": {"command": [sys.executable, "-c", "raise SystemExit(3)"]}},
    }
    app = build_app(make_config(tmp_path, settings))
    async with connect(tmp_path, app=app, elicit=None) as client:
        assert failure(await client.call_tool("demo_erase", {"target": "t"}))["kind"] == "approval_required"


def test_only_a_channel_that_delivers_messages_announces_news(tmp_path: Path, demo_namespace: str) -> None:
    """Namespaces that announce (new mail) reach Telegram; the page and the hook only show approvals."""
    app = waiting_app(
        tmp_path,
        page={"enabled": True, "url": "http://127.0.0.1:1/approvals"},
        telegram={"chat_id": 42, "bot_token": "123456:unused-in-this-test", "api_base": "http://127.0.0.1:1"},
    )
    assert sorted(channel.name for channel in app.out_of_band.channels) == ["notify", "page", "telegram"]
    assert list(app.out_of_band.announcers()) == ["telegram"]
