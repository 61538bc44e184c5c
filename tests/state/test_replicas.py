"""Two `serve --http` replicas share one PostgreSQL database behind Debian's nginx, which
round-robins requests between them (2026-07-28 clients have no session to stick to)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager, suppress
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import psycopg
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.harness import elicitation_handler, failure, ok
from tests.nginx import nginx, upstreams_used
from tests.postgres import PostgresServer
from tests.processes import (
    DEMO_ENTRY,
    ROOT,
    bearer,
    child_env,
    cli_in_process,
    demo_config,
    free_port,
    http_server,
    run_cli,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
TOKEN = "tok-laptop-0123456789"
SECRET = "replicas-share-this-secret-of-32-bytes"


def replica_config(tmp_path: Path, name: str, url: str, wait_seconds: int) -> Path:
    (tmp_path / name).mkdir(parents=True, exist_ok=True)
    extra = (
        # the person answers this token's forms: a form's yes counts (docs/policy.md)
        f'[http.tokens.laptop]\ntoken = "{TOKEN}"\nperson_answers_forms = true\n'
        f'[state]\nurl = "{url}"\nsecret = "{SECRET}"\n'
        f"[approvals]\nwait_seconds = {wait_seconds}\n"
        '[approvals.notify]\ncommand = ["true"]\n'  # someone is told, so a call may wait for the answer
    )
    return demo_config(tmp_path / name, extra)


@pytest.fixture
def replicas(
    request: pytest.FixtureRequest, postgres_url: str, tmp_path: Path
) -> Iterator[tuple[str, list[Path], list[str]]]:
    """nginx's URL, the replicas' configs and their own URLs; `wait_seconds` from the test's
    `wait` mark (default 0)."""
    marker = request.node.get_closest_marker("wait")
    wait_seconds = marker.args[0] if marker else 0
    configs = [replica_config(tmp_path, name, postgres_url, wait_seconds) for name in ("a", "b")]
    ports = [free_port(), free_port()]
    with ExitStack() as stack:
        direct = [
            stack.enter_context(http_server(config, port=port)) for config, port in zip(configs, ports, strict=True)
        ]
        base = stack.enter_context(nginx(tmp_path / "nginx", [f"127.0.0.1:{port}" for port in ports]))
        yield base, configs, direct


@asynccontextmanager
async def client(base: str, elicit: bool = False) -> AsyncIterator[Client]:
    """A 2026-07-28 client; with `elicit` it can show a confirmation form (and accepts)."""
    async with (
        httpx2.AsyncClient(headers=bearer(TOKEN), timeout=60) as http,
        Client(
            streamable_http_client(base + "/mcp", http_client=http),  # type: ignore[arg-type]
            mode="2026-07-28",
            elicitation_callback=elicitation_handler("accept" if elicit else None),
        ) as connected,
    ):
        yield connected


def audit(config: Path) -> list[dict]:
    result = cli_in_process(config, "audit", "--json", "--tail", "5000")
    return [json.loads(line) for line in result.stdout.splitlines()]


async def test_an_approval_granted_with_the_cli_is_used_once_by_whichever_replica(
    replicas: tuple[str, list[Path], list[str]], tmp_path: Path
) -> None:
    base, (config_a, config_b), _ = replicas
    arguments = {"target": "shared"}
    async with client(base) as mcp:
        asked = failure(await mcp.call_tool("demo_erase", arguments))
        assert asked["kind"] == "approval_required"
        assert cli_in_process(config_b, "approvals", "approve", asked["approval_id"]).returncode == 0
        results = [await mcp.call_tool("demo_erase", arguments) for _ in range(4)]
        echoes = [ok(await mcp.call_tool("demo_echo", {"text": str(i)})) for i in range(6)]
    ran = [result for result in results if not result.is_error]
    assert len(ran) == 1 and ran[0].structured_content == {"erased": "shared"}
    assert {failure(result)["kind"] for result in results if result.is_error} == {"approval_required"}
    assert len(echoes) == 6
    used = {address for address in upstreams_used(tmp_path / "nginx") if address != "-"}
    assert len(used) == 2, f"nginx sent everything to {used}"  # both replicas answered calls
    rows = audit(config_a)
    assert sum(1 for row in rows if row["tool"] == "demo.echo") == 6  # every call, from both replicas
    assert [row["decision"] for row in rows if row["tool"] == "demo.erase"].count("approved_out_of_band") == 1


@pytest.mark.wait(30)
async def test_a_decision_elsewhere_wakes_the_call_waiting_on_a_replica(
    replicas: tuple[str, list[Path], list[str]], postgres_url: str
) -> None:
    base, (_, config_b), _ = replicas
    with psycopg.connect(postgres_url, autocommit=True) as listener:
        listener.execute("LISTEN mcp_tools_approvals")
        async with client(base) as mcp, anyio.create_task_group() as group:
            outcome: dict[str, object] = {}

            async def call() -> None:
                outcome["result"] = await mcp.call_tool("demo_erase", {"target": "waited"})

            group.start_soon(call)
            # The new approval's notification says which one to answer: no polling of the list.
            notice = await anyio.to_thread.run_sync(lambda: next(listener.notifies(timeout=30)))
            decided = anyio.current_time()
            approved = await anyio.to_thread.run_sync(run_cli, config_b, "approvals", "approve", notice.payload)
            assert approved.returncode == 0
        assert ok(outcome["result"]) == {"erased": "waited"}  # type: ignore[arg-type]
        assert anyio.current_time() - decided < 10


async def test_a_request_state_is_accepted_once_by_any_replica_and_refused_on_replay(
    replicas: tuple[str, list[Path], list[str]],
) -> None:
    """ATTACK: the answered requestState replayed to either replica asks again instead of running."""
    _, (config_a, _), (replica_a, replica_b) = replicas
    arguments = {"target": "sealed"}
    async with client(replica_a, elicit=True) as at_a, client(replica_b, elicit=True) as at_b:
        asked = await at_a.session.call_tool("demo_erase", arguments, allow_input_required=True)
        assert isinstance(asked, types.InputRequiredResult) and asked.request_state
        answers = {key: types.ElicitResult(action="accept", content={"confirm": True}) for key in asked.input_requests}
        answered = {"input_responses": answers, "request_state": asked.request_state, "allow_input_required": True}
        ran = await at_b.session.call_tool("demo_erase", arguments, **answered)  # sealed by A, opened by B
        assert isinstance(ran, types.CallToolResult) and ran.structured_content == {"erased": "sealed"}
        for replayed_at in (at_a, at_b):
            replay = await replayed_at.session.call_tool("demo_erase", arguments, **answered)
            assert isinstance(replay, types.InputRequiredResult)  # asked again: nothing ran
    erased = [row for row in audit(config_a) if row["tool"] == "demo.erase" and row["outcome"] == "ok"]
    assert len(erased) == 1


@contextmanager
def killable_replica(config: Path, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """`serve --http` whose process the test may SIGKILL; yields once it is healthy."""
    process = subprocess.Popen(
        [sys.executable, DEMO_ENTRY, "--config", str(config), "serve", "--http", "--port", str(port)],
        env=child_env(),
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with anyio.from_thread.start_blocking_portal() as portal:
            portal.call(wait_healthy, f"http://127.0.0.1:{port}")
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


async def wait_healthy(base: str) -> None:
    with anyio.fail_after(30):
        async with httpx2.AsyncClient() as http:
            while True:
                with suppress(httpx2.HTTPError):
                    if (await http.get(base + "/healthz", timeout=1)).status_code == 200:
                        return
                await anyio.sleep(0.1)


async def test_a_replica_killed_under_load_loses_no_approval_and_no_audit_row(
    postgres_url: str, tmp_path: Path
) -> None:
    configs = [replica_config(tmp_path, name, postgres_url, 0) for name in ("a", "b")]
    ports = [free_port(), free_port()]
    answered: list[str] = []
    with (
        killable_replica(configs[0], ports[0]) as victim,
        killable_replica(configs[1], ports[1]),
        nginx(tmp_path / "nginx", [f"127.0.0.1:{port}" for port in ports]) as base,
    ):
        async with client(f"http://127.0.0.1:{ports[0]}") as at_victim:
            asked = failure(await at_victim.call_tool("demo_erase", {"target": "survives"}))
        enough = anyio.Event()

        async def load(worker: int) -> None:
            for attempt in range(400):
                if enough.is_set():
                    return
                try:
                    async with client(base) as mcp:
                        while not enough.is_set():
                            text = f"w{worker}-{attempt}-{len(answered)}"
                            if not (await mcp.call_tool("demo_echo", {"text": text})).is_error:
                                answered.append(text)
                                if len(answered) == 30:
                                    victim.kill()  # SIGKILL: no shutdown, no flush
                                if len(answered) >= 80:
                                    enough.set()
                except Exception:  # the killed replica's requests fail; a new client goes on
                    await anyio.sleep(0.05)

        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                for worker in range(6):
                    group.start_soon(load, worker)
        assert victim.poll() is not None and len(answered) >= 80
        assert cli_in_process(configs[1], "approvals", "approve", asked["approval_id"]).returncode == 0
        async with client(base) as mcp:
            assert ok(await mcp.call_tool("demo_erase", {"target": "survives"})) == {"erased": "survives"}
    audited = {row["arguments"].get("text") for row in audit(configs[1]) if row["tool"] == "demo.echo"}
    missing = [text for text in answered if text not in audited]
    assert missing == [], f"{len(missing)} answered calls have no audit row"


async def test_the_database_stopped_and_started_under_load(tmp_path: Path) -> None:
    """Calls in the gap answer `unavailable`, the replicas recover by themselves, and every call
    that was answered has its audit row."""
    database = PostgresServer()
    database.start()
    try:
        url = database.create_database()
        configs = [replica_config(tmp_path, name, url, 0) for name in ("a", "b")]
        ports = [free_port(), free_port()]
        answered: list[str] = []
        kinds: list[str] = []
        gap_seen, recovered = anyio.Event(), anyio.Event()
        with ExitStack() as stack:
            direct = [stack.enter_context(http_server(c, port=p)) for c, p in zip(configs, ports, strict=True)]
            base = stack.enter_context(nginx(tmp_path / "nginx", [f"127.0.0.1:{port}" for port in ports]))

            async def load(worker: int) -> None:
                async with client(base) as mcp:
                    for index in range(10_000):
                        if recovered.is_set() and len(answered) >= 60:
                            return
                        text = f"w{worker}-{index}"
                        result = await mcp.call_tool("demo_echo", {"text": text})
                        if result.is_error:
                            kinds.append(failure(result)["kind"])
                            gap_seen.set()
                            await anyio.sleep(0.05)
                        else:
                            answered.append(text)

            async def outage() -> None:
                while len(answered) < 20:
                    await anyio.sleep(0.05)
                await anyio.to_thread.run_sync(database.stop)
                await gap_seen.wait()
                await anyio.to_thread.run_sync(database.start)
                async with httpx2.AsyncClient() as http:
                    for replica in direct:  # each replica comes back by itself: nobody restarts it
                        while (await http.get(replica + "/readyz")).status_code != 200:
                            await anyio.sleep(0.2)
                recovered.set()

            with anyio.fail_after(150):
                async with anyio.create_task_group() as group:
                    group.start_soon(outage)
                    for worker in range(4):
                        group.start_soon(load, worker)
        assert kinds and set(kinds) == {"unavailable"}
        audited = {row["arguments"].get("text") for row in audit(configs[0]) if row["tool"] == "demo.echo"}
        assert [text for text in answered if text not in audited] == []
    finally:
        database.close()
