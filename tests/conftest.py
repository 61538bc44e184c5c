"""Shared fixtures: the anyio backend, the test-only `demo` namespace, result checking, the fake Google,
the state stores (SQLite and a real PostgreSQL server)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from mcp_tools.servers import CATALOG
from mcp_tools.state.sqlite import PolicyStore
from mcp_tools.state.store import StateStore
from mcp_tools.util.secrets import known_secrets
from tests.postgres import PostgresServer
from tests.results import check_call_result
from tests.servers.fake_google import FakeCalendar, FakeDocs, FakeDrive, FakeGmail, FakeGoogle, FakeSheets, FakeTasks
from tests.system_packages import remember_config

# With `-n`, pytest-xdist hands each worker this many tests at a time at most (its default is a
# quarter of the suite per worker at the start), so no worker is left with a long queue while
# the other idles at the end.
SCHEDULED_AT_ONCE = 8


def pytest_configure(config: pytest.Config) -> None:
    remember_config(config)  # the first run installs packages for minutes: each install says so on the terminal
    if getattr(config.option, "maxschedchunk", "absent") is None:
        config.option.maxschedchunk = SCHEDULED_AT_ONCE


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked `slow` run first (in their order; the rest keep theirs): on two workers a
    test of twenty seconds started last would leave one worker idle for all that time."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def demo_namespace(monkeypatch: pytest.MonkeyPatch) -> str:
    """Make the `demo` namespace selectable, for tests of the core alone."""
    monkeypatch.setitem(CATALOG, "demo", "tests.demo_namespace")
    return "demo"


async def _listed_tool(client: Client, name: str) -> types.Tool | None:
    """The tool as this connection's tools/list advertises it (listed once per client)."""
    listed: dict[str, types.Tool] | None = client.__dict__.get("_checked_tools")
    if listed is None or name not in listed:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        client.__dict__["_checked_tools"] = listed
    return listed.get(name)


@pytest.fixture(autouse=True, scope="session")
def results_validate_against_their_schemas() -> Iterator[None]:
    """Every `tools/call` a test makes through the SDK's real client (in process, stdio or
    HTTP) is checked as a validating client would: success against the tool's advertised
    `outputSchema`, errors against the one error shape (`tests/results.py`)."""
    plain_call = Client.call_tool

    async def checked_call(self: Client, name: str, *args: Any, **kwargs: Any) -> types.CallToolResult:
        result = await plain_call(self, name, *args, **kwargs)
        check_call_result(await _listed_tool(self, name), name, result)
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Client, "call_tool", checked_call)
        yield


@pytest.fixture(autouse=True)
def forget_known_secrets() -> None:
    """Each test starts with no known secrets: they are process-wide and would leak across tests."""
    known_secrets.clear()


@pytest.fixture
def google() -> Iterator[FakeGoogle]:
    """A fake Google on 127.0.0.1; a request the real API would refuse fails the test."""
    fake = FakeGoogle().start()
    try:
        yield fake
    finally:
        fake.stop()
    assert fake.violations == [], f"requests Google would refuse: {fake.violations}"


@pytest.fixture
def gmail(google: FakeGoogle) -> FakeGmail:
    return FakeGmail(google)


@pytest.fixture
def drive(google: FakeGoogle) -> FakeDrive:
    return FakeDrive(google)


@pytest.fixture
def docs(google: FakeGoogle) -> FakeDocs:
    return FakeDocs(google)


@pytest.fixture
def sheets(google: FakeGoogle) -> FakeSheets:
    return FakeSheets(google)


@pytest.fixture
def tasks(google: FakeGoogle) -> FakeTasks:
    """Google Tasks on the fake Google, with one default list ("My Tasks")."""
    return FakeTasks(google)


@pytest.fixture
def gcal(google: FakeGoogle) -> FakeCalendar:
    return FakeCalendar(google)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """Debian's PostgreSQL on 127.0.0.1 for the whole session, in a temporary data directory."""
    server = PostgresServer()
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh database on the session's PostgreSQL server, dropped when the test ends."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


@pytest.fixture(params=["sqlite", "postgresql"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., StateStore]]:
    """Opens state stores over one database, each with its own connections (as separate
    processes would have): the SQLite file of one machine, then a PostgreSQL database."""
    opened: list[StateStore] = []
    if request.param == "sqlite":

        def new(clock: Any = time.time) -> StateStore:
            opened.append(PolicyStore(tmp_path / "policy.sqlite3", clock=clock))
            return opened[-1]

    else:
        from mcp_tools.state.postgres import PostgresStateStore

        url = request.getfixturevalue("postgres_url")

        def new(clock: Any = time.time) -> StateStore:
            opened.append(PostgresStateStore(url, pool_size=4, clock=clock))
            return opened[-1]

    try:
        yield new
    finally:
        for store in opened:
            store.close()
