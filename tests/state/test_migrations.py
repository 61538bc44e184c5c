"""One set of numbered migrations, applied by SQLite and PostgreSQL alike: recorded, refused when
newer than the code, safe to start twice at once, and an SQLite file of the last release before
them upgrades in place with every row kept."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.state.migrations import Migration, migrations, statements
from mcp_tools.state.sqlite import PolicyStore
from mcp_tools.state.store import AuditRow, StateStore, StateStoreError

OpenStore = Callable[..., StateStore]
FIXTURES = Path(__file__).parent / "fixtures"


def versions(store: StateStore) -> list[int]:
    with store.reading() as db:
        return [row[0] for row in db.execute("SELECT version FROM schema_version ORDER BY version").fetchall()]


def columns_of(store: StateStore) -> dict[str, set[str]]:
    """Every table of the store and its columns, read from the engine's own catalogue."""
    found: dict[str, set[str]] = {}
    with store.reading() as db:
        if store.engine == "sqlite":
            tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()]
            for table in tables:
                if not table.startswith("sqlite_"):
                    found[table] = {row[1] for row in db.execute(f"PRAGMA table_info({table})").fetchall()}
        else:
            rows = db.execute(
                "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema='public'"
            ).fetchall()
            for table, column in rows:
                found.setdefault(table, set()).add(column)
    return found


def test_every_migration_reads_as_each_engine_runs_it() -> None:
    known = migrations()
    assert [m.version for m in known] == list(range(1, len(known) + 1))  # numbered, none missing
    for migration in known:
        for engine in ("postgresql", "sqlite"):
            assert "-- [" not in migration.sql(engine), migration.name
        sqlite = migration.sql("sqlite")
        assert "GENERATED ALWAYS AS IDENTITY" not in sqlite and "plpgsql" not in sqlite
        assert list(statements(sqlite)), migration.name


def test_engine_blocks_keep_what_each_engine_needs() -> None:
    migration = Migration(1, "0001_x.sql", "A;\n-- [postgresql]\nB;\n-- [sqlite]\nC;\n-- [both]\nD DOUBLE PRECISION;\n")
    assert migration.sql("postgresql") == "A;\nB;\nD DOUBLE PRECISION;\n"
    assert migration.sql("sqlite") == "A;\nC;\nD REAL;\n"
    with pytest.raises(ValueError, match="no such engine"):
        migration.sql("mysql")


def test_a_trigger_is_one_statement_with_its_semicolons() -> None:
    script = (
        "CREATE TABLE t (x);\n-- a note; with a semicolon\n"
        "CREATE TRIGGER g AFTER INSERT ON t BEGIN\n  SELECT 1;\n  SELECT 2;\nEND;\n"
    )
    found = list(statements(script))
    assert len(found) == 2 and found[0] == "CREATE TABLE t (x);"
    assert "CREATE TRIGGER g" in found[1] and found[1].endswith("SELECT 2;\nEND;")


def test_both_engines_build_the_same_tables_and_record_every_version(tmp_path: Path, postgres_url: str) -> None:
    from mcp_tools.state.postgres import PostgresStateStore

    sqlite, postgres = PolicyStore(tmp_path / "policy.sqlite3"), PostgresStateStore(postgres_url, pool_size=1)
    try:
        numbers = [m.version for m in migrations()]
        assert versions(sqlite) == versions(postgres) == numbers
        assert columns_of(sqlite) == columns_of(postgres)
        assert {"approvals", "audit", "telegram_messages", "oauth_grants", "enabled_tools"} <= set(columns_of(sqlite))
    finally:
        sqlite.close()
        postgres.close()


def test_opening_again_applies_nothing(open_store: OpenStore) -> None:
    first = open_store()
    applied = versions(first)
    first.close()
    assert versions(open_store()) == applied


def test_processes_starting_together_on_a_new_database_migrate_once(open_store: OpenStore) -> None:
    barrier = threading.Barrier(4)
    failures: list[BaseException] = []
    opened: list[StateStore] = []

    def start() -> None:
        barrier.wait()
        try:
            opened.append(open_store())
        except BaseException as exc:  # pragma: no cover - the failure is the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert versions(opened[0]) == [m.version for m in migrations()]


def test_a_database_newer_than_the_code_is_refused(open_store: OpenStore) -> None:
    with open_store().transaction() as db:
        db.execute("INSERT INTO schema_version VALUES (?, ?, ?)", (9999, "9999_future.sql", 0.0))
    with pytest.raises(StateStoreError, match=r"schema version 9999, newer than this mcp-tools knows \(\d+\)"):
        open_store()


def test_a_failed_sqlite_migration_leaves_nothing_half_done(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = [*migrations(), Migration(9998, "9998_broken.sql", "CREATE TABLE half_done (x INT);\nSELECT nope;\n")]
    monkeypatch.setattr("mcp_tools.state.migrations.sqlite.migrations", lambda: broken)
    with pytest.raises(StateStoreError, match="could not be migrated: no such column: nope"):
        PolicyStore(tmp_path / "policy.sqlite3")
    with sqlite3.connect(tmp_path / "policy.sqlite3") as db:
        assert db.execute("SELECT name FROM sqlite_master").fetchall() == []


# -- a state file of the last release before numbered SQLite migrations ----------------------

RELEASE_ROWS: dict[str, list[tuple[Any, ...]]] = {
    "approvals": [
        (
            "apr-pending",
            "demo.erase",
            "h1",
            '{"target": "a"}',
            "Erase a",
            "high",
            "local",
            1.0,
            9e12,
            "pending",
            None,
            None,
        ),
        (
            "apr-used",
            "demo.erase",
            "h2",
            '{"target": "b"}',
            "Erase b",
            "high",
            "laptop",
            2.0,
            9e12,
            "consumed",
            3.0,
            4.0,
        ),
    ],
    "audit": [
        (
            1,
            5.0,
            "http",
            "laptop",
            "demo.erase",
            '{"target": "b"}',
            "high",
            "approved_out_of_band",
            "apr-used",
            2.5,
            "ok",
            "page",
        )
    ],
    "approval_meta": [("apr-used", "http", "page", "claude-code")],
    "approval_tickets": [("t" * 64, "apr-pending", "local", "demo.erase", "h1", 1.0, 9e12, None)],
    "approval_ticket_failures": [("apr-pending", 2)],
    "page_logins": [("l" * 64, 9e12, None)],
    "page_sessions": [("c" * 64, 9e12, "laptop")],
    "enabled_tools": [("laptop", "notes", "notes.delete"), ("laptop", "", "files.mkdir")],
    "request_state_nonces": [(hashlib.sha256(b"nonce-1").hexdigest(), 9e12)],
    "rate_calls": [("laptop", 6.0)],
    "oauth_clients": [("client-1", '{"client_id": "client-1"}', 1.0, 2.0)],
    "oauth_requests": [("r" * 64, "{}", 9e12, "client-1")],
    "oauth_grants": [("g" * 64, "refresh", "client-1", "family-1", "{}", 9e12, None, None)],
}
TELEGRAM_ROWS: dict[str, list[tuple[Any, ...]]] = {
    "telegram_messages": [("m" * 64, "apr-pending", 4242, 100, "Approve?", 9e12, 0)],
    "telegram_state": [("offset", "1017")],
}


def release_state_dir(tmp_path: Path) -> Path:
    """A state dir as the last release left it: its schema (captured in the fixture files), a row
    in every table, the events its triggers wrote, and the Telegram ledger in its own file."""
    state = tmp_path / "state"
    state.mkdir()
    for file, schema, rows in (
        ("policy.sqlite3", "policy_release_schema.sql", RELEASE_ROWS),
        ("telegram.sqlite3", "telegram_release_schema.sql", TELEGRAM_ROWS),
    ):
        with sqlite3.connect(state / file) as db:
            db.executescript((FIXTURES / schema).read_text())
            for table, values in rows.items():
                db.executemany(f"INSERT INTO {table} VALUES ({','.join('?' * len(values[0]))})", values)
    return state


def table_rows(path: Path, tables: list[str]) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(path) as db:
        return {table: sorted(db.execute(f"SELECT * FROM {table}").fetchall(), key=repr) for table in tables}


def test_a_state_file_of_the_last_release_upgrades_in_place_with_every_row(tmp_path: Path) -> None:
    state = release_state_dir(tmp_path)
    path = state / "policy.sqlite3"
    tables = [*RELEASE_ROWS, "approval_events"]
    before = table_rows(path, tables)
    assert len(before["approval_events"]) == 2  # the release's triggers numbered the inserts

    stores = [PolicyStore(path) for _ in range(2)]  # the second finds the work done
    try:
        store = stores[1]
        assert versions(store) == [m.version for m in migrations()]
        after = table_rows(path, tables)
        # nothing lost, nothing changed; the audit rows gained the account they acted as (none)
        assert after.pop("audit") == [(*row, None) for row in before["audit"]]
        assert after == {table: rows for table, rows in before.items() if table != "audit"}
        assert store.get_approval("apr-pending").status == "pending"  # type: ignore[union-attr]
        assert [(row.decision, row.answered_by) for row in store.tail()] == [("approved_out_of_band", "page")]
        assert store.enabled_tools("laptop", namespace="notes") == {"notes.delete"}
        assert store.page_session("c" * 64) == (9e12, "laptop")
        assert not store.use_nonce("nonce-1", 60)  # still a replay
        store.decide_approval("apr-pending", approve=True, ttl_seconds=600)  # the events go on numbering
        assert store.events_since(2) == [(3, "apr-pending", "approved")]
        store.record(AuditRow(7.0, "stdio", "local", "demo.echo", {}, "low", "ran", None, 1.0, "ok"))
        assert [row.tool for row in store.tail()] == ["demo.erase", "demo.echo"]  # AUTOINCREMENT goes on

        from mcp_tools.approvals.telegram import Ledger
        from mcp_tools.state.oauth import OAuthStore

        assert OAuthStore(store).has_consented("client-1")
        ledger = Ledger.for_state(store, state)  # the ledger file's rows move into the state file
        assert ledger.offset() == 1017 and ledger.open_approvals() == [("apr-pending", 9e12)]
        assert not (state / "telegram.sqlite3").exists() and (state / "telegram.sqlite3.imported").exists()
        assert Ledger.for_state(stores[0], state).offset() == 1017
    finally:
        for opened in stores:
            opened.close()


def test_an_upgraded_file_has_what_a_new_one_has(tmp_path: Path) -> None:
    upgraded = PolicyStore(release_state_dir(tmp_path) / "policy.sqlite3")
    new = PolicyStore(tmp_path / "new.sqlite3")
    try:
        assert columns_of(upgraded) == columns_of(new)
        with upgraded.reading() as old_db, new.reading() as new_db:
            query = "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
            assert set(old_db.execute(query).fetchall()) == set(new_db.execute(query).fetchall())
    finally:
        upgraded.close()
        new.close()
