"""The state's schema: numbered SQL files that both engines apply, in order, once each.

A file `NNNN_what.sql` holds statements for PostgreSQL and SQLite alike. Where the engines differ
it has blocks: a line `-- [postgresql]` or `-- [sqlite]` starts statements for that engine alone,
`-- [both]` ends them. SQLite also reads two spellings of PostgreSQL's its own way
(`SQLITE_SPELLING`). A new table joins the schema as one more numbered file.

Each engine applies what is missing in one transaction (PostgreSQL under an advisory lock,
SQLite under BEGIN IMMEDIATE, so processes that start together migrate once) and records every
version in `schema_version`. A database with a version this code does not know is refused.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources

from mcp_tools.state.errors import StateStoreError

MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
BLOCK = re.compile(r"^-- \[(postgresql|sqlite|both)\]\s*$")
ENGINES = ("postgresql", "sqlite")
SCHEMA_VERSION = (
    "CREATE TABLE IF NOT EXISTS schema_version "
    "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied DOUBLE PRECISION NOT NULL)"
)
SQLITE_SPELLING = (
    ("BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "INTEGER PRIMARY KEY AUTOINCREMENT"),
    ("DOUBLE PRECISION", "REAL"),
)


@dataclass(frozen=True)
class Migration:
    version: int
    name: str  # the file's name, as `schema_version` records it
    text: str

    def sql(self, engine: str) -> str:
        """The statements of this migration for one engine."""
        if engine not in ENGINES:
            raise ValueError(f"no such engine: {engine}")
        kept = []
        current = "both"
        for line in self.text.splitlines():
            block = BLOCK.match(line)
            if block:
                current = block.group(1)
            elif current in ("both", engine):
                kept.append(line)
        sql = "\n".join(kept) + "\n"
        if engine == "sqlite":
            for postgres, sqlite in SQLITE_SPELLING:
                sql = sql.replace(postgres, sqlite)
        return sql


@functools.cache
def migrations() -> tuple[Migration, ...]:
    """Every numbered migration, in order (read once per process)."""
    found = []
    for entry in resources.files(__name__).iterdir():
        match = MIGRATION_NAME.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    found.sort(key=lambda migration: migration.version)
    return tuple(found)


def refuse_newer(done: set[int], newest: int) -> None:
    """Raise when the database was migrated by a newer mcp-tools than this one (`newest` is the
    last version this one knows)."""
    if done and max(done) > newest:
        raise StateStoreError(
            f"the state database has schema version {max(done)}, newer than this mcp-tools knows ({newest}); "
            "upgrade mcp-tools on this replica"
        )


def statements(sql: str) -> Iterator[str]:
    """The statements of a script one at a time (a trigger's body keeps its own semicolons)."""
    held: list[str] = []
    for line in sql.splitlines(keepends=True):
        held.append(line)
        text = "".join(held)
        if sqlite3.complete_statement(text):
            if text.strip() and not _only_comments(text):
                yield text.strip()
            held = []
    rest = "".join(held)
    if rest.strip() and not _only_comments(rest):
        raise ValueError(f"an incomplete statement ends the script: {rest.strip()[:80]}")


def _only_comments(text: str) -> bool:
    return all(not line.strip() or line.strip().startswith("--") for line in text.splitlines())
