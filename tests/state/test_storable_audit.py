"""Text either store would refuse never costs a call its audit row.

PostgreSQL's text rejects NUL, and neither engine takes a lone surrogate. A refused call keeps the
tool name as it was written, so a call to `"nope\\u0000"` finishing beside real calls used to make
their shared audit transaction fail, and the real calls ran with no row."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from mcp_tools.composition.app import build_app
from mcp_tools.transports.http import build_http_app
from mcp_tools.transports.mcp_server import build_server
from tests.harness import make_config, ok

pytestmark = pytest.mark.anyio

AWKWARD_NAMES = ["nope\u0000", "nope\u0000\u0000x"]


@pytest.fixture(params=["sqlite", "postgresql"])
def state_settings(request: pytest.FixtureRequest) -> dict[str, object]:
    if request.param == "sqlite":
        return {}
    return {"url": request.getfixturevalue("postgres_url"), "secret": "s" * 32}


async def test_a_refused_awkward_name_beside_real_writes_costs_them_no_audit_row(
    tmp_path: Path, state_settings: dict[str, object]
) -> None:
    root = tmp_path / "files"
    root.mkdir()
    settings = {"server": {"servers": ["files"]}, "files": {"root": str(root)}, "state": state_settings}
    app = build_app(make_config(tmp_path, settings))
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_http_app(app, "127.0.0.1")), base_url="http://t")
    try:
        async with app.running(), Client(build_server(app, "test")) as client:
            written: dict[str, bool] = {}

            async def write(number: int) -> None:
                result = await client.call_tool("files_write", {"path": f"f{number}.txt", "content": "x"})
                written[f"f{number}.txt"] = not result.is_error

            async def refused(name: str) -> None:
                result = await client.call_tool(name, {"a\u0000": "b\ud800"})
                assert result.is_error

            async with anyio.create_task_group() as group:
                for number in range(4):
                    group.start_soon(write, number)
                for name in AWKWARD_NAMES:
                    group.start_soon(refused, name)
            assert all(written.values()) and len(written) == 4
            assert (await http.get("/readyz")).status_code == 200
        rows = app.store.tail(50)
        logged = sorted(row.args["path"] for row in rows if row.tool == "files.write")
        assert logged == sorted(path for path in written if (root / path).exists())
        assert len(logged) == 4
        refused_tools = [row.tool for row in rows if row.decision == "denied"]
        assert "nope\\u0000" in refused_tools  # the name as written, NUL shown, not dropped
        assert all("\x00" not in tool for tool in refused_tools)
        spool = tmp_path / "state" / "audit-spool.jsonl"
        assert not spool.exists()
    finally:
        await http.aclose()
        app.store.close()


def refuse_rows_of(app: object, tool: str) -> None:
    """Make the store refuse audit rows of one tool (as a value it cannot take would)."""
    store = app.store  # type: ignore[attr-defined]
    if store.engine == "postgresql":
        import psycopg

        with psycopg.connect(store.url, autocommit=True) as db:
            db.execute(f"ALTER TABLE audit ADD CONSTRAINT refused CHECK (tool <> '{tool}') NOT VALID")
    else:
        with store.transaction() as db:
            db.execute(
                f"CREATE TRIGGER refused BEFORE INSERT ON audit WHEN NEW.tool = '{tool}' "
                "BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )


def accept_rows_again(app: object) -> None:
    store = app.store  # type: ignore[attr-defined]
    if store.engine == "postgresql":
        import psycopg

        with psycopg.connect(store.url, autocommit=True) as db:
            db.execute("ALTER TABLE audit DROP CONSTRAINT refused")
    else:
        with store.transaction() as db:
            db.execute("DROP TRIGGER refused")


async def test_a_row_the_store_refuses_waits_in_the_spool_and_readyz_says_so(
    tmp_path: Path, state_settings: dict[str, object], demo_namespace: str
) -> None:
    settings = {"server": {"servers": ["demo"]}, "state": state_settings}
    app = build_app(make_config(tmp_path, settings))
    spool = tmp_path / "state" / "audit-spool.jsonl"
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_http_app(app, "127.0.0.1")), base_url="http://t")
    try:
        async with app.running(), Client(build_server(app, "test")) as client:
            refuse_rows_of(app, "demo.note")
            answers: dict[str, bool] = {}

            async def note(key: str) -> None:
                answers[key] = ok(await client.call_tool("demo_note", {"key": key, "text": "kept"})) is not None

            async def echo(text: str) -> None:
                answers[text] = not (await client.call_tool("demo_echo", {"text": text})).is_error

            async with anyio.create_task_group() as group:  # one batch: the refused row fails no other
                group.start_soon(note, "n1")
                group.start_soon(echo, "e1")
                group.start_soon(echo, "e2")
            assert answers == {"n1": True, "e1": True, "e2": True}
            assert app.services["demo"].notes == {"n1": "kept"}
            assert spool.exists() and '"n1"' in spool.read_text()
            ready = await http.get("/readyz")
            assert ready.status_code == 503 and "1 audit rows wait" in ready.json()["reason"]
            assert sorted(row.args["text"] for row in app.store.tail(50) if row.tool == "demo.echo") == ["e1", "e2"]

            accept_rows_again(app)
            assert (await http.get("/readyz")).status_code == 200  # it wrote them
            assert not spool.exists()
        assert [(row.tool, row.args.get("key")) for row in app.store.tail(50) if row.tool == "demo.note"] == [
            ("demo.note", "n1")
        ]
    finally:
        await http.aclose()
        app.store.close()


async def test_a_low_call_whose_row_the_store_refuses_is_answered_unavailable(
    tmp_path: Path, state_settings: dict[str, object], demo_namespace: str
) -> None:
    settings = {"server": {"servers": ["demo"]}, "state": state_settings}
    app = build_app(make_config(tmp_path, settings))
    try:
        async with app.running(), Client(build_server(app, "test")) as client:
            refuse_rows_of(app, "demo.echo")
            result = await client.call_tool("demo_echo", {"text": "t"})
            assert result.is_error and "state store" in str(result.content)
    finally:
        app.store.close()
