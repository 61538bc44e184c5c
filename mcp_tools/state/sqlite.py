"""The state in one SQLite file of the state dir: the default, for one machine.

Several processes share the file (a server, and `mcp-tools approvals approve` run by the person):
WAL, and one writer at a time through BEGIN IMMEDIATE, so every change is one short transaction.
The schema is the numbered migrations of `mcp_tools.state.migrations`, as PostgreSQL's is.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcp_tools.state.base import Connection
from mcp_tools.state.errors import StateStoreError
from mcp_tools.state.migrations.sqlite import apply_sqlite
from mcp_tools.state.spool import SPOOL_FILE, AuditSpool
from mcp_tools.state.storable import storable_params
from mcp_tools.state.store import StateStore
from mcp_tools.util import metrics


class FetchedRows:
    """A statement's rows, read off its cursor as it ran, so they can be read after its
    transaction committed: SQLite commits no transaction while a statement of it is still being
    read, and a database server gets the COMMIT with the statements, in one round trip."""

    __slots__ = ("_rows", "description", "rowcount")

    def __init__(self, cursor: Any) -> None:
        self.description = cursor.description
        self._rows = cursor.fetchall() if cursor.description else []
        self.rowcount = cursor.rowcount  # after the rows: a RETURNING statement counts as it is read

    def fetchone(self) -> Any:
        return self._rows.pop(0) if self._rows else None

    def fetchall(self) -> list[Any]:
        rows, self._rows = self._rows, []
        return rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class _ReadAsItRuns:
    """The connection of an SQLite transaction, each statement's rows read as it runs."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, params: Any = (), /) -> FetchedRows:
        return FetchedRows(self._db.execute(sql, storable_params(params)))


class _Storable:
    """The SQLite connection outside a transaction, every value bound made storable."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, params: Any = (), /) -> sqlite3.Cursor:
        return self._db.execute(sql, storable_params(params))


class SqliteFile:
    """One SQLite file of the state dir, shared by threads and processes: WAL, and one writer at a
    time through BEGIN IMMEDIATE."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        with contextlib.suppress(OSError):  # not every file system keeps modes
            path.chmod(0o600)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        started = time.perf_counter()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield _ReadAsItRuns(self._db)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        metrics.current().store("sqlite", time.perf_counter() - started)

    @contextmanager
    def _reading(self) -> Iterator[_Storable]:
        started = time.perf_counter()
        with self._lock:
            yield _Storable(self._db)
        metrics.current().store("sqlite", time.perf_counter() - started)

    # Audit rows race with nothing: one statement outside any transaction, as a read is.
    _appending = _reading

    def transaction(self) -> contextlib.AbstractContextManager[Connection]:
        return self._transaction()

    def reading(self) -> contextlib.AbstractContextManager[Connection]:
        return self._reading()


class PolicyStore(SqliteFile, StateStore):
    """The state in one SQLite file: the default, for one machine."""

    def __init__(self, path: Path, clock: Any = time.time) -> None:
        super().__init__(path)
        self.clock = clock
        self.audit_spool = AuditSpool(path.parent / SPOOL_FILE)
        try:
            apply_sqlite(self._db)
        except sqlite3.Error as exc:
            self._db.close()
            raise StateStoreError(f"the SQLite state file {path} could not be migrated: {exc}") from None
        except BaseException:
            self._db.close()
            raise
