"""Tasks over the real `serve --http`, both protocol versions, with a client written from the spec.

The person answers on the approvals page while the client polls; a task belongs to the token that
made it (another token's task id is unknown, and its list holds its own tasks only); a token whose
client shows forms to the person answers the form inline on 2026-07-28 (`tasks/update`), and one
that does not gets no form (its task waits for the page).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.approvals.helpers import approvals, audit
from tests.processes import cli_in_process, demo_config, free_port, http_server
from tests.tasks.rpc import CLOCK_ENTRY, EXTENSION, LEGACY, MODERN, RpcError, accept_forms, over_http

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
LAPTOP, PHONE = "tok-laptop-0123456789", "tok-phone-9876543210"
TOKENS = f'[http.tokens]\nlaptop = "{LAPTOP}"\n[http.tokens.phone]\ntoken = "{PHONE}"\nperson_answers_forms = true\n'


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp_path = tmp_path_factory.mktemp("tasks-http")
    clock = tmp_path / "clock"
    clock.write_text("0", encoding="utf-8")
    port = free_port()
    config = demo_config(tmp_path, f"[http]\nport = {port}\n" + TOKENS)
    with http_server(config, port=port, entry=CLOCK_ENTRY, startup=120, TASKS_TEST_CLOCK=str(clock)) as base:
        yield base, config


def pending_for(config: Path, target: str) -> str:
    [found] = [
        item["id"]
        for item in approvals(config)
        if item["status"] == "pending" and item["arguments"]["target"] == target
    ]
    return str(found)


async def approve_on_the_page(base: str, config: Path, approval_id: str) -> None:
    link = cli_in_process(config, "approvals", "login", "--http").stdout.strip()
    async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as browser:
        assert (await browser.get(link)).status_code == 200
        page = await browser.get(f"{base}/approvals/")
        assert approval_id in page.text
        csrf = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        done = await browser.post(
            f"{base}/approvals/a/{approval_id}/approve", data={"csrf": csrf}, headers={"Origin": base}
        )
        assert done.status_code == 200, done.text


@pytest.mark.parametrize("version", [LEGACY, MODERN])
async def test_answered_on_the_page_while_the_client_polls(served: tuple[str, Path], version: str) -> None:
    base, config = served
    target = f"page-{version}"
    async with over_http(base + "/mcp", LAPTOP, version) as peer:
        created = await peer.call_as_task("demo_erase", {"target": target})
        task = created["task"] if version == LEGACY else created
        if version == MODERN:
            assert created["resultType"] == "task" and "ttlMs" in created and "ttl" not in created
        waiting = await peer.until(task["taskId"], "input_required")
        if version == MODERN:
            assert waiting["inputRequests"] == {}  # no form for a token whose forms the person does not see
        await approve_on_the_page(base, config, pending_for(config, target))
        if version == LEGACY:
            await peer.until(task["taskId"], "completed")
            result = await peer.request("tasks/result", {"taskId": task["taskId"]})
        else:
            result = (await peer.until(task["taskId"], "completed"))["result"]
        assert result["structuredContent"] == {"erased": target}
    rows = [row for row in audit(config) if row["tool"] == "demo.erase" and row["arguments"]["target"] == target]
    assert [(row["decision"], row["answered_by"], row["principal"]) for row in rows] == [
        ("confirmed", "page", "laptop")
    ]


@pytest.mark.parametrize("version", [LEGACY, MODERN])
async def test_another_tokens_task_id_is_unknown(served: tuple[str, Path], version: str) -> None:
    base, config = served
    async with over_http(base + "/mcp", LAPTOP, version) as laptop, over_http(base + "/mcp", PHONE, version) as phone:
        created = await laptop.call_as_task("demo_erase", {"target": f"mine-{version}"})
        task_id = (created["task"] if version == LEGACY else created)["taskId"]
        await laptop.until(task_id, "input_required")
        methods = ["tasks/get", "tasks/cancel"] + (["tasks/result"] if version == LEGACY else [])
        for method in methods:
            with pytest.raises(RpcError) as unknown:
                await phone.request(method, {"taskId": task_id})
            assert unknown.value.code == -32602 and "not found" in unknown.value.message, method
        if version == MODERN:
            accept = {
                f"confirm-{pending_for(config, f'mine-{version}')}": {"action": "accept", "content": {"confirm": True}}
            }
            with pytest.raises(RpcError) as update:
                await phone.request("tasks/update", {"taskId": task_id, "inputResponses": accept})
            assert update.value.code == -32602
        else:
            assert (await phone.request("tasks/list"))["tasks"] == []
            assert task_id in [task["taskId"] for task in (await laptop.request("tasks/list"))["tasks"]]
        assert (await laptop.get(task_id))["status"] == "input_required"  # nothing the phone did counted
        await laptop.request("tasks/cancel", {"taskId": task_id})


async def test_a_2026_client_that_shows_forms_answers_with_tasks_update(served: tuple[str, Path]) -> None:
    base, config = served
    async with over_http(base + "/mcp", PHONE, MODERN, forms=True) as phone:
        discovered = await phone.request("server/discover", {})
        assert EXTENSION in discovered["capabilities"]["extensions"]
        assert "tasks" not in discovered["capabilities"]  # the 2025-11-25 capability is not this version's
        created = await phone.call_as_task("demo_erase", {"target": "inline"})
        waiting = await phone.until(created["taskId"], "input_required")
        [(key, asked)] = waiting["inputRequests"].items()
        assert asked["method"] == "elicitation/create" and asked["params"]["mode"] == "form"
        assert asked["params"]["message"].startswith("Erase 'inline'")
        ignored = await phone.request(
            "tasks/update",
            {"taskId": created["taskId"], "inputResponses": {"confirm-apr-unknown": {"action": "accept"}}},
        )
        assert ignored["resultType"] == "complete"
        assert (await phone.get(created["taskId"]))["status"] == "input_required"
        answer = {key: {"action": "accept", "content": {"confirm": True}}}
        await phone.request("tasks/update", {"taskId": created["taskId"], "inputResponses": answer})
        done = await phone.until(created["taskId"], "completed")
        assert done["result"]["structuredContent"] == {"erased": "inline"} and done["resultType"] == "complete"

        declined = await phone.call_as_task("demo_erase", {"target": "refused"})
        waiting = await phone.until(declined["taskId"], "input_required")
        [key] = waiting["inputRequests"]
        await phone.request(
            "tasks/update", {"taskId": declined["taskId"], "inputResponses": {key: {"action": "decline"}}}
        )
        ended = await phone.until(declined["taskId"], "completed")  # a tool's error result completes a 2026 task
        assert ended["result"]["isError"] is True and "error" not in ended

        for method in ("tasks/result", "tasks/list"):
            with pytest.raises(RpcError) as gone:
                await phone.request(method, {"taskId": created["taskId"]})
            assert gone.value.code == -32601, method
        plain = await phone.call_as_task("demo_echo", {"text": "now"})
        assert plain["structuredContent"] == {"echo": "hello: now"}  # the server decides: no task for this one
    rows = [(row["decision"], row["answered_by"]) for row in audit(config) if row["tool"] == "demo.erase"]
    assert ("confirmed", "elicitation:http") in rows and ("declined", "elicitation:http") in rows


async def test_a_2026_client_without_the_extension_gets_no_task(served: tuple[str, Path]) -> None:
    base, _ = served
    async with over_http(base + "/mcp", PHONE, MODERN, forms=True) as phone:
        phone.capabilities = {"elicitation": {"form": {}}}
        asked = await phone.call_as_task("demo_erase", {"target": "no-tasks"})
        assert asked["resultType"] == "input_required"  # the confirmation round trip, as before
        with pytest.raises(RpcError) as missing:
            await phone.get("task-whatever")
        assert missing.value.code == -32021
        assert missing.value.data == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}


async def test_attack_a_token_whose_forms_the_person_does_not_see_cannot_answer_its_own_task(
    served: tuple[str, Path],
) -> None:
    """The laptop is a plain agent token: it reads its own task's status message (which names the
    approval), and answers the form itself, on both versions. Neither counts; the person decides."""
    base, config = served
    seen: list[dict[str, Any]] = []
    async with over_http(base + "/mcp", LAPTOP, MODERN, forms=True) as laptop:
        made = await laptop.call_as_task("demo_erase", {"target": "forged-2026"})
        waiting = await laptop.until(made["taskId"], "input_required")
        assert waiting["inputRequests"] == {}
        approval_id = pending_for(config, "forged-2026")
        assert approval_id in waiting["statusMessage"]
        forged = {f"confirm-{approval_id}": {"action": "accept", "content": {"confirm": True}}}
        await laptop.request("tasks/update", {"taskId": made["taskId"], "inputResponses": forged})
        assert (await laptop.get(made["taskId"]))["status"] == "input_required"
        await laptop.request("tasks/cancel", {"taskId": made["taskId"]})
    async with over_http(base + "/mcp", LAPTOP, LEGACY, forms=True, answer=accept_forms(seen)) as laptop:
        task_id = (await laptop.call_as_task("demo_erase", {"target": "forged-2025"}))["task"]["taskId"]
        await laptop.until(task_id, "input_required")
        async with anyio.create_task_group() as group:
            results: list[dict[str, Any]] = []

            async def wait_for_result() -> None:
                results.append(await laptop.request("tasks/result", {"taskId": task_id}))

            group.start_soon(wait_for_result)
            await approve_on_the_page(base, config, pending_for(config, "forged-2025"))
        assert results[0]["structuredContent"] == {"erased": "forged-2025"}
    assert seen == []  # the form was never sent to it
    rows = [row for row in audit(config) if row["tool"] == "demo.erase" and "forged" in row["arguments"]["target"]]
    assert [(row["decision"], row["answered_by"]) for row in rows] == [
        ("declined", "task:cancelled"),
        ("confirmed", "page"),
    ]


async def test_a_2025_client_that_shows_forms_is_asked_on_its_open_tasks_result(served: tuple[str, Path]) -> None:
    base, config = served
    seen: list[dict[str, Any]] = []
    async with over_http(base + "/mcp", PHONE, LEGACY, forms=True, answer=accept_forms(seen)) as phone:
        task_id = (await phone.call_as_task("demo_erase", {"target": "asked-on-the-stream"}))["task"]["taskId"]
        await phone.until(task_id, "input_required")
        result = await phone.request("tasks/result", {"taskId": task_id})
        assert result["structuredContent"] == {"erased": "asked-on-the-stream"}
    [form] = seen
    assert form["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    rows = [row for row in audit(config) if row["arguments"].get("target") == "asked-on-the-stream"]
    assert [(row["decision"], row["answered_by"], row["principal"]) for row in rows] == [
        ("confirmed", "elicitation:http", "phone")
    ]
