"""The state in PostgreSQL, shared by every replica of one deployment (psycopg 3 with a pool).

The schema is the numbered migrations of `mcp_tools.state.migrations` (SQLite applies the same
ones), applied in one transaction at start under an advisory lock (replicas that start together
migrate once) and recorded in `schema_version`.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from mcp_tools.state import migrations as schema
from mcp_tools.state.errors import StateStoreError, StateStoreUnavailable
from mcp_tools.state.sqlite import FetchedRows
from mcp_tools.state.storable import storable_params
from mcp_tools.state.store import StateStore
from mcp_tools.util import metrics
from mcp_tools.util.secrets import known_secrets

MIGRATION_LOCK = 0x6D6370746F6F6C73  # "mcptools": one migrator at a time across replicas
NOTIFY_CHANNEL = "mcp_tools_approvals"
LOCK_APPROVALS = "LOCK TABLE approvals IN SHARE ROW EXCLUSIVE MODE"
LISTEN_CHECK_SECONDS = 1.0
IDLE_CHECK_SECONDS = 2.0
# A statement answered this recently shows the database is up as well as a ping would: the
# check before a medium or high call (its audit row must be writable) costs no round trip then.
ANSWERED_RECENTLY_SECONDS = 0.25
logger = logging.getLogger("mcp_tools.state")


def migrations() -> list[tuple[int, str, str]]:
    """`(version, file name, sql)` for every numbered migration, in order, as PostgreSQL runs it."""
    return [(migration.version, migration.name, migration.sql("postgresql")) for migration in schema.migrations()]


def apply_migrations(connection: psycopg.Connection[Any]) -> list[int]:
    """Bring the schema up to date in one transaction; the versions this call applied."""
    known = migrations()
    applied_now = []
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        connection.execute(schema.SCHEMA_VERSION)
        done = {row[0] for row in connection.execute("SELECT version FROM schema_version").fetchall()}
        schema.refuse_newer(done, max((version for version, _, _ in known), default=0))
        for version, name, sql in known:
            if version in done:
                continue
            connection.execute(sql, prepare=False)  # many statements: never one prepared statement
            connection.execute("INSERT INTO schema_version VALUES (%s, %s, %s)", (version, name, time.time()))
            applied_now.append(version)
    return applied_now


class _Translated:
    """A psycopg connection that takes the store's `?` placeholders."""

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self._connection = connection

    def execute(self, sql: str, params: Any = ()) -> Any:
        return self._connection.execute(_placeholders(sql), storable_params(params))

    def transaction(self) -> Any:
        return self._connection.transaction()


class _Batch:
    """The statements of one locked transaction, bound here and sent together as one query.

    Each statement is held until one of them is read, or until the COMMIT: a transaction whose
    rows are read once it has committed is one message each way. (A pipeline of prepared
    statements sends each as its own packet, and on one machine every packet wakes the server's
    process as a round trip would.) The values are bound by psycopg's client-side binding, the
    same quoting as its `ClientCursor`."""

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self._cursor = psycopg.ClientCursor(connection)
        self._held: list[tuple[str, _Answer | None]] = [("BEGIN", None), (LOCK_APPROVALS, None)]
        self.began = False  # whether BEGIN went out (a ROLLBACK then has something to end)

    def execute(self, sql: str, params: Any = ()) -> _Answer:
        answer = _Answer(self)
        self._held.append((self._cursor.mogrify(_placeholders(sql), storable_params(params)), answer))
        return answer

    def send(self) -> None:
        """Send what is held, in one query, and hand each statement its answer."""
        held, self._held = self._held, []
        if not held:
            return
        cursor = self._cursor
        self.began = True
        cursor.execute(";\n".join(statement for statement, _ in held))  # bound already: sent as written
        for index, (_, answer) in enumerate(held):
            if index:
                cursor.nextset()
            if answer is not None:
                answer.take(cursor)

    def commit(self) -> None:
        self._held.append(("COMMIT", None))
        self.send()


class _Answer:
    """What one statement of a batch answered; reading it before the batch went out sends it."""

    __slots__ = ("_batch", "_rows")

    def __init__(self, batch: _Batch) -> None:
        self._batch = batch
        self._rows: FetchedRows | None = None

    def take(self, cursor: psycopg.ClientCursor[Any]) -> None:
        self._rows = FetchedRows(cursor)

    def _answered(self) -> FetchedRows:
        if self._rows is None:
            self._batch.send()
        assert self._rows is not None
        return self._rows

    @property
    def rowcount(self) -> int:
        return int(self._answered().rowcount)

    @property
    def description(self) -> Any:
        return self._answered().description

    def fetchone(self) -> Any:
        return self._answered().fetchone()

    def fetchall(self) -> list[Any]:
        return self._answered().fetchall()

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


_TRANSLATED: dict[str, str] = {}


def _placeholders(sql: str) -> str:
    translated = _TRANSLATED.get(sql)
    if translated is None:
        translated = _TRANSLATED[sql] = sql.replace("?", "%s")
    return translated


class PostgresStateStore(StateStore):
    """Approvals, decisions, events and the audit log in one database several replicas share."""

    engine = "postgresql"

    def __init__(self, url: str, pool_size: int = 8, connect_timeout: float = 5.0, clock: Any = time.time) -> None:
        self.url = url
        self.clock = clock
        self.connect_timeout = connect_timeout
        self._listeners: list[Callable[[], None]] = []
        self._listener: threading.Thread | None = None
        self._closed = threading.Event()
        self._last_used: dict[int, float] = {}
        self._last_answer = float("-inf")
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            timeout=connect_timeout,
            # Every statement prepared on its first use: the pool hands out its connections in
            # turn, so at the default (prepared on the fifth use) most ran unprepared, each parsed
            # and planned again by the server.
            kwargs={"connect_timeout": max(1, round(connect_timeout)), "autocommit": True, "prepare_threshold": 0},
            check=self._check_if_idle,
            open=False,
            name="mcp-tools-state",
        )
        try:
            self._pool.open(wait=True, timeout=connect_timeout)
            with self._pool.connection() as connection:
                apply_migrations(connection)
        except (psycopg.OperationalError, PoolTimeout) as exc:
            self._pool.close()
            raise StateStoreUnavailable(describe_failure(exc)) from None
        except psycopg.Error as exc:
            self._pool.close()
            raise StateStoreError(
                known_secrets.scrub(f"the PostgreSQL state schema could not be migrated: {exc}")
            ) from None
        except BaseException:
            self._pool.close()
            raise

    def close(self) -> None:
        self._closed.set()  # the listener notices within LISTEN_CHECK_SECONDS; nobody waits for it
        self._pool.close()

    def listen(self, callback: Callable[[], None]) -> bool:
        """Wake `callback` on every approval change any replica commits (LISTEN/NOTIFY)."""
        self._listeners.append(callback)
        if self._listener is None:
            self._listener = threading.Thread(target=self._listen, name="mcp-tools-state-listen", daemon=True)
            self._listener.start()
        return True

    def _listen(self) -> None:
        """One connection that LISTENs; reconnects after the database comes back, and then wakes
        everyone once, since notifications sent while it was away are lost."""
        while not self._closed.is_set():
            try:
                with psycopg.connect(
                    self.url, autocommit=True, connect_timeout=max(1, round(self.connect_timeout))
                ) as connection:
                    connection.execute(f"LISTEN {NOTIFY_CHANNEL}")
                    self._wake()
                    while not self._closed.is_set():
                        for _ in connection.notifies(timeout=LISTEN_CHECK_SECONDS):
                            self._wake()
            except psycopg.Error:
                logger.debug("state notifications lost; reconnecting", exc_info=True)
                self._closed.wait(LISTEN_CHECK_SECONDS)

    def _wake(self) -> None:
        for callback in list(self._listeners):
            try:
                callback()
            except Exception:  # one broken follower must not silence the others
                logger.debug("state listener failed", exc_info=True)

    def _check_if_idle(self, connection: psycopg.Connection[Any]) -> None:
        """Test a connection the pool hands out only when it sat idle (the database may have
        restarted meanwhile): a busy server pays no extra round trip per query."""
        last = self._last_used.get(id(connection))
        if last is None or time.monotonic() - last > IDLE_CHECK_SECONDS:
            ConnectionPool.check_connection(connection)

    @contextmanager
    def _pooled(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection of the pool; a database that cannot be reached is StateStoreUnavailable."""
        started = time.perf_counter()
        try:
            with self._pool.connection() as connection:
                try:
                    yield connection
                    self._last_answer = time.monotonic()
                finally:
                    self._last_used[id(connection)] = time.monotonic()
        except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as exc:
            raise StateStoreUnavailable(describe_failure(exc)) from None
        finally:
            metrics.current().store(self.engine, time.perf_counter() - started)

    @contextmanager
    def _connection(self) -> Iterator[_Translated]:
        """One statement at a time (autocommit: one round trip each)."""
        with self._pooled() as connection:
            yield _Translated(connection)

    def ping(self) -> None:
        if time.monotonic() - self._last_answer < ANSWERED_RECENTLY_SECONDS:
            return
        with self._reading() as db:
            db.execute("SELECT 1").fetchone()

    @contextmanager
    def _transaction(self) -> Iterator[_Batch]:
        """Writes of approvals: one transaction under the table lock, one writer at a time as BEGIN
        IMMEDIATE gives SQLite, so the check and the change are one step and events commit in
        order. BEGIN, the lock and the statements go out together (`_Batch`)."""
        with self._pooled() as connection:
            batch = _Batch(connection)
            try:
                yield batch
                batch.commit()
            except BaseException:
                if batch.began:
                    with contextlib.suppress(psycopg.Error):
                        connection.execute("ROLLBACK")
                raise

    @contextmanager
    def _keyed_transaction(self, key: str) -> Iterator[_Translated]:
        """A transaction serialised with others of the same key only (an advisory lock), never
        with approvals."""
        with self._connection() as db, db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (key,))
            yield db

    def _reading(self) -> Any:
        return self._connection()


def describe_failure(exc: BaseException) -> str:
    """Why the database cannot be used, without the URL's credentials."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return known_secrets.scrub(f"the PostgreSQL state store cannot be reached: {reason}")
