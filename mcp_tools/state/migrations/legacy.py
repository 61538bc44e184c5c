"""SQLite files written before the schema was numbered: adopted once, with every row kept.

Such a file has no `schema_version`; releases before it wrote `CREATE TABLE IF NOT EXISTS` strings
on every start and added columns as they came (`ALTER TABLE ... ADD COLUMN`). Adopting it:
1. gives each table it has the columns later releases added (the same steps those releases took),
2. creates what it lacks (tables, indexes, triggers) as migrations 1 to `LAST_LEGACY` leave them,
3. records migrations 1 to `LAST_LEGACY` as applied; the ones after run as on any database.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence

from mcp_tools.state.migrations import Migration, statements

LAST_LEGACY = 11  # the schema of the last release before numbered SQLite migrations
KINDS = ("table", "index", "trigger")  # the order they are created in


def is_legacy(db: sqlite3.Connection) -> bool:
    """Whether the file holds tables but no record of migrations."""
    names = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()}
    return "schema_version" not in names and any(not name.startswith("sqlite_") for name in names)


def adopt(db: sqlite3.Connection, known: Sequence[Migration]) -> list[Migration]:
    """Bring a file from before numbered migrations to the schema of `LAST_LEGACY`; the
    migrations it now holds."""
    adopted = [migration for migration in known if migration.version <= LAST_LEGACY]
    _add_columns(db)
    have = {(row[0], row[1]) for row in db.execute("SELECT type, name FROM sqlite_master").fetchall()}
    for kind, name, sql in _shape(adopted):
        if (kind, name) not in have:
            db.execute(sql)
    return adopted


def _shape(adopted: list[Migration]) -> list[tuple[str, str, str]]:
    """`(type, name, sql)` of everything the adopted migrations create, read from a scratch
    database they were applied to: the schema is written once, in the migrations."""
    with contextlib.closing(sqlite3.connect(":memory:", isolation_level=None)) as scratch:
        for migration in adopted:
            for statement in statements(migration.sql("sqlite")):
                scratch.execute(statement)
        rows = scratch.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
    return sorted(rows, key=lambda row: KINDS.index(row[0]))


def _columns(db: sqlite3.Connection, table: str) -> set[str] | None:
    """The columns of a table; None when the file has no such table."""
    rows = db.execute(f"PRAGMA table_info({table})").fetchall()
    return {row[1] for row in rows} if rows else None


def _add_columns(db: sqlite3.Connection) -> None:
    """The columns releases added to tables they had created before; old rows keep their values."""
    for table, column in (
        ("audit", "answered_by TEXT"),
        ("page_sessions", "principal TEXT"),  # sessions signed in before a link could be for one principal
        ("approval_meta", "client TEXT"),  # before clients were remembered
        ("oauth_requests", "client_id TEXT"),
    ):
        columns = _columns(db, table)
        if columns is not None and column.split()[0] not in columns:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
    columns = _columns(db, "oauth_clients")
    if columns is not None and "consented" not in columns:  # a client holding tokens was consented to
        db.execute("ALTER TABLE oauth_clients ADD COLUMN consented REAL")
        if _columns(db, "oauth_grants") is not None:
            db.execute(
                "UPDATE oauth_clients SET consented=created WHERE client_id IN (SELECT client_id FROM oauth_grants)"
            )
    columns = _columns(db, "enabled_tools")
    if columns is not None and "namespace" not in columns:  # principal and namespace were one "\n"-joined key
        rows = db.execute("SELECT principal, tool FROM enabled_tools").fetchall()
        db.execute("DROP TABLE enabled_tools")
        db.execute(
            "CREATE TABLE enabled_tools (principal TEXT NOT NULL, namespace TEXT NOT NULL DEFAULT '', "
            "tool TEXT NOT NULL, PRIMARY KEY (principal, namespace, tool))"
        )
        for key, tool in rows:
            db.execute("INSERT OR IGNORE INTO enabled_tools VALUES (?, ?, ?)", (*_split_combined_key(key), tool))


def _split_combined_key(key: str) -> tuple[str, str]:
    """A row stored before principal and namespace were two columns: `principal + "\\n" + namespace`,
    split at its last newline (a namespace name has none)."""
    head, newline, tail = key.rpartition("\n")
    return (head, tail) if newline else (key, "")
