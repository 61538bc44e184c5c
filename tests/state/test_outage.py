"""The database goes away and comes back: calls in the gap fail with `unavailable`, `/readyz` says
so, and the server recovers by itself with nothing acknowledged lost."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from mcp_tools.composition.app import build_app
from mcp_tools.transports.http import build_http_app
from mcp_tools.transports.mcp_server import build_server
from tests.harness import failure, make_config, ok
from tests.postgres import PostgresServer

pytestmark = pytest.mark.anyio


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A server of this test's own: stopping it must not disturb the session's."""
    server = PostgresServer()
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.mark.slow
async def test_calls_in_an_outage_are_unavailable_and_the_server_recovers(
    own_postgres: PostgresServer, tmp_path: Path, demo_namespace: str
) -> None:
    settings = {
        "server": {"servers": ["demo"]},
        "state": {"url": own_postgres.create_database(), "secret": "y" * 32, "connect_timeout_seconds": 1},
    }
    app = build_app(make_config(tmp_path, settings))
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_http_app(app, "127.0.0.1")), base_url="http://t")
    try:
        async with app.running(), Client(build_server(app, "test")) as client:
            assert ok(await client.call_tool("demo_echo", {"text": "before"})) == {"echo": "hello: before"}
            assert (await http.get("/readyz")).status_code == 200

            own_postgres.stop()
            error = failure(await client.call_tool("demo_echo", {"text": "gap"}))
            assert error["kind"] == "unavailable" and "state store" in error["message"]
            assert failure(await client.call_tool("demo_erase", {"target": "t"}))["kind"] == "unavailable"
            ready = await http.get("/readyz")
            assert ready.status_code == 503 and ready.json()["status"] == "unavailable"
            assert (await http.get("/healthz")).status_code == 200  # alive: restarting would not help

            own_postgres.start()
            # The pool reconnects with backoff; a load balancer waits on /readyz, and so does this.
            with anyio.fail_after(60):
                while (await http.get("/readyz")).status_code != 200:
                    await anyio.sleep(0.2)
            assert ok(await client.call_tool("demo_echo", {"text": "after"})) == {"echo": "hello: after"}
            assert (await http.get("/readyz")).status_code == 200
        echoed = [row.args.get("text") for row in app.store.tail(50) if row.tool == "demo.echo"]
        assert echoed == ["before", "after"]  # the gap's calls ran nothing, so nothing is missing
    finally:
        await http.aclose()
        app.store.close()


@pytest.mark.slow
async def test_a_call_that_ran_as_the_database_went_down_keeps_its_answer_and_its_audit_row(
    own_postgres: PostgresServer, tmp_path: Path, demo_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store answered the check before a medium call, then went down before its audit row. The
    call has changed something: the model is told so (not `unavailable`, which reads as "did not
    run"), and its row waits on local disk until the database is back, then joins the log."""
    from mcp_tools.state import postgres

    usual = postgres.ANSWERED_RECENTLY_SECONDS
    monkeypatch.setattr(postgres, "ANSWERED_RECENTLY_SECONDS", 3600.0)  # the check is the recent answer
    settings = {
        "server": {"servers": ["demo"]},
        "state": {"url": own_postgres.create_database(), "secret": "y" * 32, "connect_timeout_seconds": 1},
    }
    app = build_app(make_config(tmp_path, settings))
    spool = tmp_path / "state" / "audit-spool.jsonl"
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_http_app(app, "127.0.0.1")), base_url="http://t")
    try:
        async with app.running(), Client(build_server(app, "test")) as client:
            assert ok(await client.call_tool("demo_echo", {"text": "before"})) == {"echo": "hello: before"}
            own_postgres.stop()
            noted = await client.call_tool("demo_note", {"key": "k", "text": "written in the gap"})
            assert ok(noted) and app.services["demo"].notes == {"k": "written in the gap"}
            assert spool.exists() and "written in the gap" in spool.read_text()
            assert failure(await client.call_tool("demo_echo", {"text": "gap"}))["kind"] == "unavailable"

            monkeypatch.setattr(postgres, "ANSWERED_RECENTLY_SECONDS", usual)  # /readyz asks the database again
            own_postgres.start()
            with anyio.fail_after(60):
                while (await http.get("/readyz")).status_code != 200:
                    await anyio.sleep(0.2)
            assert ok(await client.call_tool("demo_echo", {"text": "after"})) == {"echo": "hello: after"}
        rows = [(row.tool, row.args.get("text"), row.decision) for row in app.store.tail(50)]
        assert ("demo.note", "written in the gap", "ran") in rows
        assert [text for tool, text, _ in rows if tool == "demo.echo"] == ["before", "after"]
        assert not spool.exists()
    finally:
        await http.aclose()
        app.store.close()
