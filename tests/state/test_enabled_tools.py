"""A principal's enabled toolsets are stored by principal and namespace, two columns: states
written when the two were one newline-joined key keep every row."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

from mcp_tools.state.postgres import PostgresStateStore, migrations
from mcp_tools.state.sqlite import PolicyStore
from mcp_tools.state.store import StateStore

OpenStore = Callable[..., StateStore]


def test_each_namespace_endpoint_keeps_its_own_set(open_store: OpenStore) -> None:
    first, second = open_store(), open_store()
    first.enable_tools("ada", {"notes.search"}, namespace="notes")
    first.enable_tools("ada", {"gmail.send"})
    assert second.enabled_tools("ada", namespace="notes") == {"notes.search"}
    assert second.enabled_tools("ada") == {"gmail.send"}
    second.enable_tools("ada", {"notes.read"}, namespace="notes")
    assert first.enabled_tools("ada", namespace="notes") == {"notes.search", "notes.read"}


def test_attack_a_principal_named_with_a_newline_cannot_reach_anothers_namespace_set(open_store: OpenStore) -> None:
    store = open_store()
    store.enable_tools("ada", {"notes.delete"}, namespace="notes")
    assert store.enabled_tools("ada\nnotes", namespace="") == set()
    assert store.enabled_tools("ada\nnotes") == set()  # taken whole, not split into ada on the notes endpoint
    store.enable_tools("ada\nnotes", {"demo.echo"}, namespace="")
    assert store.enabled_tools("ada", namespace="notes") == {"notes.delete"}


OLD_ROWS = [("ada\nnotes", "notes.search"), ("ada", "gmail.send"), ("bob@issuer\nline\ngmail", "gmail.read")]


def test_a_sqlite_state_of_the_combined_key_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "policy.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE enabled_tools (principal TEXT NOT NULL, tool TEXT NOT NULL, PRIMARY KEY (principal, tool))"
        )
        db.executemany("INSERT INTO enabled_tools VALUES (?, ?)", OLD_ROWS)
    store = PolicyStore(path)
    try:
        assert store.enabled_tools("ada", namespace="notes") == {"notes.search"}
        assert store.enabled_tools("ada", namespace="") == {"gmail.send"}
        assert store.enabled_tools("bob@issuer\nline", namespace="gmail") == {"gmail.read"}
    finally:
        store.close()
    PolicyStore(path).close()  # migrated once: opening again changes nothing
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM enabled_tools").fetchone()[0] == 3


def test_a_postgresql_state_of_the_combined_key_keeps_its_rows(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as db:  # the schema of the version before
        db.execute(
            "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "applied DOUBLE PRECISION NOT NULL)"
        )
        for version, name, sql in migrations():
            if version < 8:
                db.execute(sql)
                db.execute("INSERT INTO schema_version VALUES (%s, %s, %s)", (version, name, time.time()))
        for row in OLD_ROWS:
            db.execute("INSERT INTO enabled_tools VALUES (%s, %s)", row)
    store = PostgresStateStore(postgres_url, pool_size=2)
    try:
        assert store.enabled_tools("ada", namespace="notes") == {"notes.search"}
        assert store.enabled_tools("ada", namespace="") == {"gmail.send"}
        assert store.enabled_tools("bob@issuer\nline", namespace="gmail") == {"gmail.read"}
        store.enable_tools("ada", {"gmail.send"})  # the new key holds: no duplicate
        assert store.enabled_tools("ada") == {"gmail.send"}
    finally:
        store.close()
