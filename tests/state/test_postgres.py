"""The PostgreSQL state store: numbered migrations, choosing it by config, credentials kept secret."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import anyio
import psycopg
import pytest

from mcp_tools.core.config import ConfigError, parse_config
from mcp_tools.policy.decisions import Decisions
from mcp_tools.state import open_state_store
from mcp_tools.state.postgres import PostgresStateStore, migrations
from mcp_tools.state.sqlite import PolicyStore
from mcp_tools.state.store import StateStoreUnavailable
from mcp_tools.util.secrets import known_secrets
from tests.postgres import PostgresServer, free_port
from tests.processes import ROOT, demo_config, run_cli

SECRET = "s" * 40


def schema_versions(url: str) -> list[int]:
    with psycopg.connect(url) as connection:
        return [row[0] for row in connection.execute("SELECT version FROM schema_version ORDER BY version")]


def test_migrations_are_numbered_and_applied_once(postgres_url: str) -> None:
    numbers = [version for version, _, _ in migrations()]
    assert numbers == sorted(set(numbers)) and numbers[0] == 1
    PostgresStateStore(postgres_url).close()
    PostgresStateStore(postgres_url).close()  # a restart finds the schema in place
    assert schema_versions(postgres_url) == numbers


def test_replicas_starting_together_migrate_once(postgres_url: str) -> None:
    barrier = threading.Barrier(4)
    failures: list[BaseException] = []

    def start() -> None:
        barrier.wait()
        try:
            PostgresStateStore(postgres_url, pool_size=1).close()
        except BaseException as exc:  # pragma: no cover - the failure is the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert schema_versions(postgres_url) == [version for version, _, _ in migrations()]


def test_a_database_from_a_newer_release_is_refused(postgres_url: str) -> None:
    PostgresStateStore(postgres_url).close()
    with psycopg.connect(postgres_url) as connection:
        connection.execute("INSERT INTO schema_version VALUES (9999, '9999_future.sql', 0)")
    with pytest.raises(RuntimeError, match="newer than this mcp-tools knows"):
        PostgresStateStore(postgres_url)


def test_a_failed_migration_leaves_nothing_half_done(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """All migrations run in one transaction: a broken one rolls back the ones before it too."""
    broken = [*migrations(), (9998, "9998_broken.sql", "CREATE TABLE half_done (x INT); SELECT no_such_column;")]
    monkeypatch.setattr("mcp_tools.state.postgres.migrations", lambda: broken)
    with pytest.raises(RuntimeError, match="could not be migrated"):
        PostgresStateStore(postgres_url)
    with psycopg.connect(postgres_url) as connection:
        tables = {row[0] for row in connection.execute("SELECT tablename FROM pg_tables WHERE schemaname='public'")}
    assert tables == set()


def test_the_url_in_the_environment_picks_postgresql(postgres_url: str, tmp_path: Path) -> None:
    environ = {
        "MCP_TOOLS_STATE_URL": postgres_url,
        "MCP_TOOLS_STATE_SECRET": SECRET,
        "MCP_TOOLS_STATE_DIR": str(tmp_path),
    }
    store = open_state_store(parse_config({}, environ))
    try:
        assert isinstance(store, PostgresStateStore)
        assert not (tmp_path / "policy.sqlite3").exists()
    finally:
        store.close()


def test_without_a_url_the_state_stays_in_the_sqlite_file(tmp_path: Path) -> None:
    store = open_state_store(parse_config({"server": {"state_dir": str(tmp_path)}}, {}))
    assert isinstance(store, PolicyStore) and store.path == tmp_path / "policy.sqlite3"


def test_postgresql_without_a_shared_secret_refuses_to_start(postgres_url: str) -> None:
    with pytest.raises(ConfigError, match=r"\[state\] secret"):
        open_state_store(parse_config({"state": {"url": postgres_url}}, {}))
    with pytest.raises(ConfigError, match="at least 32 bytes"):
        open_state_store(parse_config({"state": {"url": postgres_url, "secret": "short"}}, {}))


def test_only_postgresql_urls_are_accepted() -> None:
    with pytest.raises(ConfigError, match="postgresql://"):
        parse_config({"state": {"url": "mysql://u:p@db/x"}}, {})
    with pytest.raises(ConfigError, match="postgresql://"):
        parse_config({}, {"MCP_TOOLS_STATE_URL": "sqlite:///x"}).state_url()


def test_the_password_in_the_url_never_reaches_an_error_message(postgres_server: PostgresServer) -> None:
    """ATTACK: a down database must not print the URL, credentials included, into logs or results."""
    password = "hunter2-Xq9-very-secret"
    url = f"postgresql://mcp:{password}@127.0.0.1:{free_port()}/nothing"
    config = parse_config({"state": {"url": url, "secret": SECRET, "connect_timeout_seconds": 1}}, {})
    with pytest.raises(StateStoreUnavailable) as caught:
        open_state_store(config)
    assert password not in str(caught.value)
    assert known_secrets.scrub(f"connecting to {url}") == known_secrets.scrub("connecting to " + url)
    assert password not in known_secrets.scrub(f"connecting to {url} failed")


def test_a_wrong_password_is_refused_without_echoing_it(postgres_server: PostgresServer) -> None:
    url = postgres_server.url().replace(postgres_server.password, "wrong-password-123456")
    config = parse_config({"state": {"url": url, "secret": SECRET, "connect_timeout_seconds": 2}}, {})
    with pytest.raises(StateStoreUnavailable, match="cannot be reached") as caught:
        open_state_store(config)
    assert "wrong-password-123456" not in str(caught.value)


def shared_config(tmp_path: Path, machine: str, url: str, secret: str | None = SECRET) -> Path:
    """A config of one machine (its own state dir) whose state lives in the shared database."""
    (tmp_path / machine).mkdir(exist_ok=True)
    state = f'\n[state]\nurl = "{url}"\n' + (f'secret = "{secret}"\n' if secret else "")
    return demo_config(tmp_path / machine, extra=state)


def test_an_approval_asked_on_one_machine_is_granted_and_used_on_another(postgres_url: str, tmp_path: Path) -> None:
    first, second = shared_config(tmp_path, "a", postgres_url), shared_config(tmp_path, "b", postgres_url)
    asked = run_cli(first, "call", "demo.erase", "--args", '{"target": "t"}', "--json")
    approval_id = json.loads(asked.stdout)["error"]["approval_id"]
    assert approval_id in run_cli(second, "approvals", "list").stdout
    assert run_cli(second, "approvals", "approve", approval_id).returncode == 0
    retried = run_cli(second, "call", "demo.erase", "--args", '{"target": "t"}', "--json")
    assert retried.returncode == 0, retried.stdout + retried.stderr
    again = run_cli(first, "call", "demo.erase", "--args", '{"target": "t"}', "--json")
    assert json.loads(again.stdout)["error"]["kind"] == "approval_required"  # used once, by one machine
    audit = [json.loads(line) for line in run_cli(first, "audit", "--json").stdout.splitlines()]
    assert len([row for row in audit if row["tool"] == "demo.erase"]) == 3
    assert not (tmp_path / "a" / "state" / "policy.sqlite3").exists()


def test_the_cli_refuses_a_shared_database_without_a_shared_secret(postgres_url: str, tmp_path: Path) -> None:
    config = shared_config(tmp_path, "a", postgres_url, secret=None)
    result = run_cli(config, "call", "demo.echo", "--args", '{"text": "hi"}')
    assert result.returncode == 2 and "[state] secret" in result.stderr
    assert postgres_url.split(":")[2].split("@")[0] not in result.stderr + result.stdout


@pytest.mark.anyio
async def test_a_decision_on_another_replica_wakes_a_waiting_call_at_once(postgres_url: str) -> None:
    """LISTEN/NOTIFY, not the poll: the poll here is a minute, the answer must come within a second."""
    here, there = PostgresStateStore(postgres_url), PostgresStateStore(postgres_url)
    try:
        decisions = Decisions(here, ttl_seconds=600, poll_interval=60)
        approval = here.request_approval(
            tool="demo.erase",
            args_sha256="d",
            args_display={},
            summary="Erase",
            risk="high",
            principal="p",
            ttl_seconds=600,
        )

        async def answer_elsewhere() -> None:
            await anyio.sleep(0.3)
            await anyio.to_thread.run_sync(lambda: Decisions(there, 600).decide(approval.id, True, "page"))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(answer_elsewhere)
                started = time.monotonic()
                assert await decisions.wait(approval.id, 30) == "approved"
        assert time.monotonic() - started < 1.3
    finally:
        here.close()
        there.close()


def test_without_a_url_neither_psycopg_nor_prometheus_is_imported(tmp_path: Path) -> None:
    """Start-up of the single-machine default pays for none of the shared-state machinery."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from mcp_tools.cli import main\n"
        "from mcp_tools.servers import CATALOG\n"
        "CATALOG['demo'] = 'tests.demo_namespace'\n"
        f"main(['--config', {str(demo_config(tmp_path))!r}, 'tools', '--json'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('psycopg', 'psycopg_pool', 'prometheus_client')))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
