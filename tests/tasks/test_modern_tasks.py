"""The `io.modelcontextprotocol/tasks` extension of 2026-07-28 over the real server on stdio.

The server makes a task of a call that may wait for the person, for a client that declares the
extension on the request, where the person can answer while it waits (a form the client shows, a
channel, the approvals page); elsewhere the call answers `approval_required` at once. The form is
an input request of the task (`tasks/get`), answered with `tasks/update`; cancelling is an
acknowledgement and withdraws the approval.
"""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest

from tests.approvals.helpers import approvals, audit
from tests.processes import cli_in_process, demo_config
from tests.results import check_call_result, error_payload
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
    # No form: the configured approvals page is where the person answers (a channel that reaches them).
    config = demo_config(tmp_path, '[approvals.page]\nurl = "https://approvals.example/approvals"\n')
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


@pytest.mark.parametrize("policy", ["approve_out_of_band", "deny"])
async def test_where_nobody_can_answer_a_task_the_call_answers_at_once(
    tmp_path: Path, clock: Path, policy: str
) -> None:
    """A client that declares the extension but shows no form (the Inspector's 2026-07-28 era), over
    stdio with no channel and no approvals page: a task would wait unseen for as long as the approval
    lives, so the call answers `approval_required` at once (or the policy's refusal), as a plain call."""
    config = demo_config(tmp_path, f'[policy]\non_no_elicitation = "{policy}"\n')
    async with over_stdio(config, clock, MODERN) as peer:
        assert peer.capabilities == {"extensions": {"io.modelcontextprotocol/tasks": {}}}
        listed = types.ListToolsResult.model_validate(await peer.request("tools/list"), by_name=False)
        [tool] = [tool for tool in listed.tools if tool.name == "demo_erase"]
        call = {"name": "demo_erase", "arguments": {"target": "drafts"}}
        answered = await peer.request("tools/call", call, timeout=20)  # the extension declared, as always
        assert answered.get("resultType", "complete") == "complete" and "taskId" not in answered
        result = types.CallToolResult.model_validate(answered, by_name=False)
        check_call_result(tool, tool.name, result)
        error = error_payload(result)["error"]
        if policy == "deny":
            assert error["kind"] == "denied_by_policy" and approvals(config) == []
            return
        assert error["kind"] == "approval_required"
        assert [item["id"] for item in approvals(config)] == [error["approval_id"]]
        assert cli_in_process(config, "approvals", "approve", error["approval_id"]).returncode == 0
        done = types.CallToolResult.model_validate(await peer.request("tools/call", call, timeout=20), by_name=False)
        check_call_result(tool, tool.name, done)
        assert not done.is_error and done.structured_content == {"erased": "drafts"}
    assert [row["decision"] for row in audit(config) if row["tool"] == "demo.erase"] == [
        "approval_required",
        "approved_out_of_band",
    ]
