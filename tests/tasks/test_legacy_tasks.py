"""Tasks of protocol 2025-11-25 against the real server over stdio, with a client written from the spec.

A high-risk call made as a task returns a task at once; the task is `input_required` while it
waits for the person (five minutes of the server's clock here, moved by the test), who answers on
the CLI or in a form the client shows through `tasks/result`; then the call runs and the task
completes with its result, or fails with the refusal. Cancelling withdraws the approval; a task
outlives its server; a result over the budget is cut as any other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.approvals.helpers import approvals, audit
from tests.processes import cli_in_process, demo_config
from tests.tasks.rpc import RELATED, RpcError, accept_forms, over_stdio

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
TTL_SECONDS = 3600


@pytest.fixture
def clock(tmp_path: Path) -> Path:
    ahead = tmp_path / "clock"
    ahead.write_text("0", encoding="utf-8")
    return ahead


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return demo_config(tmp_path, f"[policy]\napproval_ttl_seconds = {TTL_SECONDS}\n")


def only_pending(config: Path) -> str:
    [pending] = [item for item in approvals(config) if item["status"] == "pending"]
    return str(pending["id"])


def decisions(config: Path, tool: str = "demo.erase") -> list[tuple[str, str | None, str]]:
    return [(row["decision"], row["answered_by"], row["outcome"]) for row in audit(config) if row["tool"] == tool]


async def test_a_task_waits_five_minutes_for_the_person_then_completes(config: Path, clock: Path) -> None:
    async with over_stdio(config, clock) as peer:
        capabilities = peer.initialized["capabilities"]  # type: ignore[attr-defined]
        assert capabilities["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        tools = {tool["name"]: tool for tool in (await peer.request("tools/list"))["tools"]}
        assert tools["demo_erase"]["execution"] == {"taskSupport": "optional"}
        assert tools["demo_note"]["execution"] == {"taskSupport": "optional"}  # high for some arguments
        assert "execution" not in tools["demo_echo"]

        created = await peer.call_as_task("demo_erase", {"target": "old-drafts"}, ttl=60_000)
        task = created["task"]
        assert task["status"] == "working" and task["taskId"].startswith("task-")
        assert task["ttl"] >= (TTL_SECONDS + 600) * 1000  # as long as the approval can wait, whatever was asked
        assert task["createdAt"].endswith("Z") and "pollInterval" in task
        assert "io.modelcontextprotocol/model-immediate-response" in created["_meta"]
        task_id = task["taskId"]

        waiting = await peer.until(task_id, "input_required")
        approval_id = only_pending(config)
        assert approval_id in waiting["statusMessage"] and "approvals approve" in waiting["statusMessage"]

        clock.write_text("300", encoding="utf-8")  # five minutes pass: the task still waits
        still = await peer.get(task_id)
        assert still["status"] == "input_required"
        assert [item["status"] for item in approvals(config)] == ["pending"]

        approved = cli_in_process(config, "approvals", "approve", approval_id)
        assert approved.returncode == 0, approved.stderr
        done = await peer.until(task_id, "completed")
        assert "pollInterval" not in done
        result = await peer.request("tasks/result", {"taskId": task_id})
        assert result["structuredContent"] == {"erased": "old-drafts"}
        assert result["_meta"][RELATED] == {"taskId": task_id}
        assert not result.get("isError")

        listed = await peer.request("tasks/list")
        assert [item["taskId"] for item in listed["tasks"]] == [task_id]
        with pytest.raises(RpcError) as refused:
            await peer.request("tasks/cancel", {"taskId": task_id})
        assert refused.value.code == -32602 and "terminal status 'completed'" in refused.value.message
        statuses = [n["params"]["status"] for n in peer.notifications if n["method"] == "notifications/tasks/status"]
        assert statuses[-1] == "completed" and "input_required" in statuses
    assert decisions(config) == [("confirmed", "cli", "ok")]


async def test_the_form_comes_through_tasks_result_and_its_answer_decides(config: Path, clock: Path) -> None:
    seen: list[dict[str, Any]] = []
    async with over_stdio(config, clock, forms=True, answer=accept_forms(seen)) as peer:
        task_id = (await peer.call_as_task("demo_erase", {"target": "tmp"}))["task"]["taskId"]
        await peer.until(task_id, "input_required")
        result = await peer.request("tasks/result", {"taskId": task_id})
        assert result["structuredContent"] == {"erased": "tmp"}
        [form] = seen
        assert form["_meta"][RELATED] == {"taskId": task_id}
        assert form["message"].startswith("Erase 'tmp'") and form["requestedSchema"]["required"] == ["confirm"]

    declined: list[dict[str, Any]] = []
    async with over_stdio(config, clock, forms=True, answer=accept_forms(declined, "decline")) as peer:
        task_id = (await peer.call_as_task("demo_erase", {"target": "keep"}))["task"]["taskId"]
        await peer.until(task_id, "input_required")
        refused = await peer.request("tasks/result", {"taskId": task_id})
        assert refused["isError"] is True
        assert json.loads(refused["content"][0]["text"])["error"]["kind"] == "declined_by_user"
        failed = await peer.get(task_id)
        assert failed["status"] == "failed" and failed["statusMessage"].startswith("declined_by_user:")
    assert decisions(config) == [
        ("confirmed", "elicitation:stdio", "ok"),
        ("declined", "elicitation:stdio", "declined_by_user"),
    ]


async def test_cancelling_a_task_withdraws_its_approval(config: Path, clock: Path) -> None:
    async with over_stdio(config, clock) as peer:
        task_id = (await peer.call_as_task("demo_erase", {"target": "cancelled"}))["task"]["taskId"]
        await peer.until(task_id, "input_required")
        approval_id = only_pending(config)
        cancelled = await peer.request("tasks/cancel", {"taskId": task_id})
        assert cancelled["status"] == "cancelled" and cancelled["taskId"] == task_id
        assert [item["status"] for item in approvals(config, "--all") if item["id"] == approval_id] == ["withdrawn"]
        late = cli_in_process(config, "approvals", "approve", approval_id)
        assert late.returncode != 0  # nothing is left to approve
        assert (await peer.get(task_id))["status"] == "cancelled"
        with pytest.raises(RpcError) as again:
            await peer.request("tasks/cancel", {"taskId": task_id})
        assert again.value.code == -32602
        with pytest.raises(RpcError) as no_result:
            await peer.request("tasks/result", {"taskId": task_id})
        assert no_result.value.code == -32602
    assert ("demo.erase", "ok") not in [(row["tool"], row["outcome"]) for row in audit(config)]


async def test_a_task_outlives_its_server(config: Path, clock: Path) -> None:
    async with over_stdio(config, clock) as peer:
        task_id = (await peer.call_as_task("demo_erase", {"target": "across-restarts"}))["task"]["taskId"]
        await peer.until(task_id, "input_required")
    approval_id = only_pending(config)  # the server has stopped; the approval still waits
    assert cli_in_process(config, "approvals", "approve", approval_id).returncode == 0
    async with over_stdio(config, clock) as peer:
        done = await peer.until(task_id, "completed")
        assert done["taskId"] == task_id
        result = await peer.request("tasks/result", {"taskId": task_id})
        assert result["structuredContent"] == {"erased": "across-restarts"}
    # Approved while no server ran: the next one finds the approval ready, as for a call made again.
    assert decisions(config) == [("approved_out_of_band", "cli", "ok")]


async def test_what_cannot_be_a_task_is_refused_as_the_spec_says(config: Path, clock: Path) -> None:
    async with over_stdio(config, clock) as peer:
        with pytest.raises(RpcError) as low:
            await peer.call_as_task("demo_echo", {"text": "hi"})
        assert low.value.code == -32601 and "taskSupport" in low.value.message
        plain = await peer.request("tools/call", {"name": "demo_echo", "arguments": {"text": "hi"}})
        assert plain["structuredContent"] == {"echo": "hello: hi"}
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            with pytest.raises(RpcError) as unknown:
                await peer.request(method, {"taskId": "task-unknown"})
            assert unknown.value.code == -32602, method
        with pytest.raises(RpcError) as modern_only:
            await peer.request("tasks/update", {"taskId": "task-unknown", "inputResponses": {}})
        assert modern_only.value.code == -32601
        with pytest.raises(RpcError) as cursor:
            await peer.request("tasks/list", {"cursor": "never-given"})
        assert cursor.value.code == -32602


async def test_a_task_ends_when_its_approval_expires_and_is_forgotten_after_its_ttl(config: Path, clock: Path) -> None:
    async with over_stdio(config, clock) as peer:
        task = (await peer.call_as_task("demo_erase", {"target": "unanswered"}))["task"]
        await peer.until(task["taskId"], "input_required")
        clock.write_text(str(TTL_SECONDS + 1), encoding="utf-8")
        failed = await peer.until(task["taskId"], "failed")
        assert "timed out" in failed["statusMessage"]
        clock.write_text(str(task["ttl"] / 1000 + 1), encoding="utf-8")
        with pytest.raises(RpcError) as gone:
            await peer.get(task["taskId"])
        assert gone.value.code == -32602
        assert (await peer.request("tasks/list"))["tasks"] == []


async def test_a_tasks_result_obeys_the_result_budget(tmp_path: Path, clock: Path) -> None:
    config = demo_config(tmp_path, "max_result_tokens = 1000\n")
    seen: list[dict[str, Any]] = []
    async with over_stdio(config, clock, forms=True, answer=accept_forms(seen)) as peer:
        target = "x" * 12_000
        task_id = (await peer.call_as_task("demo_erase", {"target": target}))["task"]["taskId"]
        result = await peer.request("tasks/result", {"taskId": task_id})
        text = "".join(block["text"] for block in result["content"] if block["type"] == "text")
        assert len(text) + len(json.dumps(result["structuredContent"])) <= 4000
        assert "result budget" in text and result["structuredContent"]["erased"].startswith("xxx")


async def test_a_terminal_command_runs_as_a_task_and_reports_progress_on_it(tmp_path: Path, clock: Path) -> None:
    config = demo_config(
        tmp_path, '[terminal]\nenabled = true\nallow = ["echo"]\nisolation = "none"\n', servers='["terminal"]'
    )
    (tmp_path / "data" / "files").mkdir(parents=True)
    async with over_stdio(config, clock, forms=True) as peer:
        call = {"name": "terminal_execute", "arguments": {"argv": ["echo", "long job"]}, "task": {}}
        created = await peer.request("tools/call", {**call, "_meta": {"progressToken": "job-1"}})
        task_id = created["task"]["taskId"]
        await peer.until(task_id, "input_required")
        result = await peer.request("tasks/result", {"taskId": task_id})
        assert result["structuredContent"]["stdout"] == "long job\n" and result["_meta"][RELATED] == {"taskId": task_id}
        progress = [n["params"] for n in peer.notifications if n["method"] == "notifications/progress"]
        assert progress and progress[0]["progressToken"] == "job-1" and progress[0]["message"] == "running echo"
        assert all(item["_meta"][RELATED] == {"taskId": task_id} for item in progress)
