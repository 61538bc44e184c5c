"""The `io.modelcontextprotocol/tasks` extension of 2026-07-28 over the real server on stdio.

The server makes a task of a call that may wait for the person, for a client that declares the
extension on the request; the form is an input request of the task (`tasks/get`), answered with
`tasks/update`; cancelling is an acknowledgement and withdraws the approval.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.approvals.helpers import approvals, audit
from tests.processes import cli_in_process, demo_config
from tests.tasks.rpc import MODERN, RpcError, over_stdio

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def clock(tmp_path: Path) -> Path:
    ahead = tmp_path / "clock"
    ahead.write_text("0", encoding="utf-8")
    return ahead


async def test_the_form_is_an_input_request_answered_with_tasks_update(tmp_path: Path, clock: Path) -> None:
    config = demo_config(tmp_path)
    async with over_stdio(config, clock, MODERN, forms=True) as peer:
        created = await peer.call_as_task("demo_erase", {"target": "drafts"})
        assert created["resultType"] == "task" and created["status"] == "working"
        assert "io.modelcontextprotocol/serverInfo" in created["_meta"]
        waiting = await peer.until(created["taskId"], "input_required")
        [(key, asked)] = waiting["inputRequests"].items()
        assert key.startswith("confirm-apr-") and asked["params"]["requestedSchema"]["required"] == ["confirm"]
        clock.write_text("300", encoding="utf-8")  # five minutes later, the same question is still open
        again = await peer.get(created["taskId"])
        assert again["inputRequests"] == waiting["inputRequests"] and again["pollIntervalMs"] > 0
        await peer.request(
            "tasks/update",
            {"taskId": created["taskId"], "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}}},
        )
        done = await peer.until(created["taskId"], "completed")
        assert done["result"]["structuredContent"] == {"erased": "drafts"} and "inputRequests" not in done
    assert [(row["decision"], row["answered_by"]) for row in audit(config) if row["tool"] == "demo.erase"] == [
        ("confirmed", "elicitation:stdio")
    ]


async def test_cancel_acknowledges_and_withdraws_and_the_task_survives_a_restart(tmp_path: Path, clock: Path) -> None:
    config = demo_config(tmp_path)
    async with over_stdio(config, clock, MODERN) as peer:
        cancelled = await peer.call_as_task("demo_erase", {"target": "cancel-me"})
        kept = await peer.call_as_task("demo_erase", {"target": "keep-waiting"})
        await peer.until(cancelled["taskId"], "input_required")
        await peer.until(kept["taskId"], "input_required")
        for _ in range(2):  # the second time the task has ended: a 2026 cancel acknowledges all the same
            acknowledged = await peer.request("tasks/cancel", {"taskId": cancelled["taskId"]})
            assert acknowledged["resultType"] == "complete" and set(acknowledged) <= {"resultType", "_meta"}
        assert (await peer.get(cancelled["taskId"]))["status"] == "cancelled"
        with pytest.raises(RpcError) as unknown:
            await peer.request("tasks/cancel", {"taskId": "task-never-made"})
        assert unknown.value.code == -32602
    statuses = {item["arguments"]["target"]: item for item in approvals(config, "--all")}
    assert statuses["cancel-me"]["status"] == "withdrawn"
    assert cli_in_process(config, "approvals", "approve", statuses["keep-waiting"]["id"]).returncode == 0
    async with over_stdio(config, clock, MODERN) as peer:
        done = await peer.until(kept["taskId"], "completed")
        assert done["result"]["structuredContent"] == {"erased": "keep-waiting"}


async def test_task_notifications_asked_without_the_extension_are_refused(tmp_path: Path, clock: Path) -> None:
    config = demo_config(tmp_path, 'discovery = "dynamic"\n')
    async with over_stdio(config, clock, MODERN) as peer:
        peer.capabilities = {}
        with pytest.raises(RpcError) as missing:
            await peer.request("subscriptions/listen", {"notifications": {"taskIds": ["task-x"]}})
        assert missing.value.code == -32021
        assert missing.value.data == {"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}
