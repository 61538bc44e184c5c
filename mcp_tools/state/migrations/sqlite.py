"""The numbered migrations applied to an SQLite file (PostgreSQL's runner is in
`mcp_tools.state.postgres`)."""

from __future__ import annotations

import sqlite3
import time

from mcp_tools.state.migrations import SCHEMA_VERSION, Migration, legacy, migrations, refuse_newer, statements


def apply_sqlite(db: sqlite3.Connection) -> list[int]:
    """Bring an SQLite file (a connection in autocommit mode) up to date in one transaction; the
    versions this call applied. A file from before numbered migrations is adopted first
    (`mcp_tools.state.migrations.legacy`)."""
    known = migrations()
    newest = max((migration.version for migration in known), default=0)
    if _recorded(db) == {migration.version for migration in known}:
        return []  # up to date: no write lock taken
    db.execute("BEGIN IMMEDIATE")  # one migrator at a time; the others find the work done
    try:
        adopting = legacy.is_legacy(db)
        db.execute(SCHEMA_VERSION)
        done = {row[0] for row in db.execute("SELECT version FROM schema_version").fetchall()}
        refuse_newer(done, newest)
        applied = []
        if adopting:
            adopted = legacy.adopt(db, known)
            done.update(migration.version for migration in adopted)
            applied.extend(_record(db, adopted))
        for migration in known:
            if migration.version in done:
                continue
            for statement in statements(migration.sql("sqlite")):
                db.execute(statement)
            applied.extend(_record(db, [migration]))
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return applied


def _recorded(db: sqlite3.Connection) -> set[int]:
    """The versions the file records (none before it has `schema_version`)."""
    try:
        return {row[0] for row in db.execute("SELECT version FROM schema_version").fetchall()}
    except sqlite3.OperationalError:  # no such table
        return set()


def _record(db: sqlite3.Connection, done: list[Migration]) -> list[int]:
    for migration in done:
        db.execute("INSERT INTO schema_version VALUES (?, ?, ?)", (migration.version, migration.name, time.time()))
    return [migration.version for migration in done]
