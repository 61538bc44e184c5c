"""The policy's state: pending approvals, decisions and their events, the audit log.

`StateStore` is the interface and holds every query; `PolicyStore` keeps it in one SQLite file in
the state dir (the default), `mcp_tools.state.postgres.PostgresStateStore` in a PostgreSQL
database that several replicas share. Several processes share either (a server, and
`mcp-tools approvals approve` run by the person), so every change is one short transaction.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from mcp_tools import metrics

ApprovalStatus = Literal["pending", "approved", "denied", "consumed", "expired", "withdrawn"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS approvals (
    id TEXT PRIMARY KEY,
    tool TEXT NOT NULL,
    args_sha256 TEXT NOT NULL,
    args_display TEXT NOT NULL,
    summary TEXT NOT NULL,
    risk TEXT NOT NULL,
    principal TEXT NOT NULL,
    created REAL NOT NULL,
    expires REAL NOT NULL,
    status TEXT NOT NULL,
    decided REAL,
    consumed REAL
);
CREATE INDEX IF NOT EXISTS approvals_lookup ON approvals (tool, args_sha256, status);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    transport TEXT NOT NULL,
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    args TEXT NOT NULL,
    risk TEXT,
    decision TEXT NOT NULL,
    approval_id TEXT,
    duration_ms REAL NOT NULL,
    outcome TEXT NOT NULL
);
"""
# Who asked over what and who answered live beside `approvals`, and every change of an approval's
# status leaves a numbered event (written by triggers, so no code path and no process can skip
# it): servers, the page and Telegram follow the events to learn what another process decided.
APPROVAL_EVENTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS approval_meta (
    approval_id TEXT PRIMARY KEY,
    transport TEXT,
    decided_by TEXT,
    client TEXT
);
CREATE TABLE IF NOT EXISTS approval_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    approval_id TEXT NOT NULL,
    status TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS approval_created AFTER INSERT ON approvals BEGIN
    INSERT INTO approval_events (approval_id, status) VALUES (NEW.id, NEW.status);
END;
CREATE TRIGGER IF NOT EXISTS approval_status_changed AFTER UPDATE OF status ON approvals
WHEN NEW.status != OLD.status BEGIN
    INSERT INTO approval_events (approval_id, status) VALUES (NEW.id, NEW.status);
END;
CREATE TABLE IF NOT EXISTS page_logins (
    token_sha256 TEXT PRIMARY KEY,
    expires REAL NOT NULL,
    used REAL
);
CREATE TABLE IF NOT EXISTS page_sessions (
    cookie_sha256 TEXT PRIMARY KEY,
    expires REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS enabled_tools (
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    PRIMARY KEY (principal, tool)
);
CREATE TABLE IF NOT EXISTS request_state_nonces (
    nonce_sha256 TEXT PRIMARY KEY,
    expires REAL NOT NULL
);
"""
AUDIT_COLUMNS = "ts, transport, principal, tool, args, risk, decision, approval_id, duration_ms, outcome"
APPROVAL_ID_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"


@dataclass(frozen=True)
class Approval:
    id: str
    tool: str
    args_sha256: str
    args_display: dict[str, Any]
    summary: str
    risk: str
    principal: str
    created: float
    expires: float
    status: ApprovalStatus
    decided: float | None
    consumed: float | None

    def effective_status(self, now: float) -> ApprovalStatus:
        if self.status in ("pending", "approved") and now >= self.expires:
            return "expired"
        return self.status

    def as_dict(self, now: float) -> dict[str, Any]:
        return {
            "id": self.id,
            "tool": self.tool,
            "summary": self.summary,
            "arguments": self.args_display,
            "risk": self.risk,
            "principal": self.principal,
            "created": iso_time(self.created),
            "expires": iso_time(self.expires),
            "status": self.effective_status(now),
        }


@dataclass(frozen=True)
class AuditRow:
    ts: float
    transport: str
    principal: str
    tool: str
    args: dict[str, Any]
    risk: str | None
    decision: str
    approval_id: str | None
    duration_ms: float
    outcome: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "time": iso_time(self.ts),
            "transport": self.transport,
            "principal": self.principal,
            "tool": self.tool,
            "arguments": self.args,
            "risk": self.risk,
            "decision": self.decision,
            "approval_id": self.approval_id,
            "duration_ms": round(self.duration_ms, 2),
            "outcome": self.outcome,
        }


def iso_time(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def new_approval_id() -> str:
    return "apr-" + "".join(secrets.choice(APPROVAL_ID_ALPHABET) for _ in range(10))


class Cursor(Protocol):
    rowcount: int

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    def execute(self, sql: str, params: Any = ()) -> Cursor: ...


class StateStoreError(RuntimeError):
    """The state store cannot be used: the message says why, without credentials."""


class StateStoreUnavailable(StateStoreError):
    """The state store cannot be reached (the database is down); nothing was changed."""


class StateStore:
    """Approvals and audit rows; safe to share between threads and processes.

    Queries are written once, with `?` placeholders; an implementation supplies connections
    through `_transaction` (writes: one at a time across every process) and `_reading`.
    """

    clock: Any
    engine: str = "sqlite"

    def close(self) -> None:
        raise NotImplementedError

    def ping(self) -> None:
        """Raise StateStoreUnavailable unless the store answers now (the SQLite file always does)."""

    def listen(self, callback: Any) -> bool:
        """Call `callback()` (from another thread) when another process changes an approval.

        False where the store cannot tell (SQLite): followers then poll."""
        return False

    def _transaction(self) -> contextlib.AbstractContextManager[Connection]:
        raise NotImplementedError

    def _reading(self) -> contextlib.AbstractContextManager[Connection]:
        raise NotImplementedError

    def transaction(self) -> contextlib.AbstractContextManager[Connection]:
        """For the state other modules keep here (the Telegram ledger): one writer at a time."""
        return self._transaction()

    def reading(self) -> contextlib.AbstractContextManager[Connection]:
        return self._reading()

    def _appending(self) -> contextlib.AbstractContextManager[Connection]:
        """For inserts that race with nothing (audit rows): no lock beyond the row's own."""
        return self._reading()

    # -- approvals -------------------------------------------------------------------------

    def request_approval(
        self,
        *,
        tool: str,
        args_sha256: str,
        args_display: dict[str, Any],
        summary: str,
        risk: str,
        principal: str,
        ttl_seconds: float,
    ) -> Approval:
        """A pending approval for exactly this call; the principal's unexpired pending one is reused."""
        now = self.clock()
        with self._transaction() as db:
            row = db.execute(
                "SELECT * FROM approvals WHERE tool=? AND args_sha256=? AND principal=? AND status='pending' "
                "AND expires>? ORDER BY created DESC LIMIT 1",
                (tool, args_sha256, principal, now),
            ).fetchone()
            if row is not None:
                return _approval(row)
            approval_id = new_approval_id()
            shown = json.dumps(args_display, ensure_ascii=False)
            db.execute(
                "INSERT INTO approvals VALUES (?,?,?,?,?,?,?,?,?,'pending',NULL,NULL)",
                (approval_id, tool, args_sha256, shown, summary, risk, principal, now, now + ttl_seconds),
            )
        # What was written, without reading it back (a round trip to a database server).
        return Approval(
            approval_id,
            tool,
            args_sha256,
            json.loads(shown),
            summary,
            risk,
            principal,
            now,
            now + ttl_seconds,
            "pending",
            None,
            None,
        )

    def consume_approval(self, tool: str, args_sha256: str, principal: str) -> Approval | None:
        """Atomically mark one approved, unexpired approval for this exact call as used.

        Only the principal that asked for it may use it: an approval asked for over HTTP with
        one token is no use to a session holding another.
        """
        now = self.clock()
        with self._transaction() as db:
            row = db.execute(
                "SELECT * FROM approvals WHERE tool=? AND args_sha256=? AND principal=? AND status='approved' "
                "AND expires>? ORDER BY created LIMIT 1",
                (tool, args_sha256, principal, now),
            ).fetchone()
            if row is None:
                return None
            updated = db.execute(
                "UPDATE approvals SET status='consumed', consumed=? WHERE id=? AND status='approved'",
                (now, row[0]),
            ).rowcount
            if updated != 1:  # pragma: no cover - guarded by the write lock
                return None
        return dataclasses.replace(_approval(row), status="consumed", consumed=now)

    def recent_denial(self, tool: str, args_sha256: str) -> Approval | None:
        """A denial the person made for this exact call that has not expired yet."""
        now = self.clock()
        with self._reading() as db:
            row = db.execute(
                "SELECT * FROM approvals WHERE tool=? AND args_sha256=? AND status='denied' AND expires>? "
                "ORDER BY decided DESC LIMIT 1",
                (tool, args_sha256, now),
            ).fetchone()
        return None if row is None else _approval(row)

    def decide_approval(self, approval_id: str, approve: bool, ttl_seconds: float) -> Approval:
        """The person's answer; only a pending, unexpired approval can be decided."""
        return self.decide(approval_id, approve, ttl_seconds, decided_by=None)

    def decide(self, approval_id: str, approve: bool, ttl_seconds: float, decided_by: str | None) -> Approval:
        """Like `decide_approval`, recording who answered in the same transaction.

        The write lock makes the check and the update one step across threads and processes:
        when the page, Telegram and the CLI answer at once, exactly one of them wins.
        """
        now = self.clock()
        with self._transaction() as db:
            row = db.execute("SELECT * FROM approvals WHERE id=?", (approval_id,)).fetchone()
            if row is None:
                raise LookupError(f"no approval with id {approval_id}")
            current = _approval(row)
            status = current.effective_status(now)
            if status != "pending":
                raise ValueError(f"approval {approval_id} is {status}; only a pending approval can be decided")
            db.execute(
                "UPDATE approvals SET status=?, decided=?, expires=? WHERE id=?",
                (
                    "approved" if approve else "denied",
                    now,
                    max(current.expires, now + ttl_seconds),
                    approval_id,
                ),
            )
            if decided_by is not None:
                db.execute(
                    "INSERT INTO approval_meta (approval_id, decided_by) VALUES (?, ?) "
                    "ON CONFLICT (approval_id) DO UPDATE SET decided_by=excluded.decided_by",
                    (approval_id, decided_by),
                )
        return dataclasses.replace(
            current,
            status="approved" if approve else "denied",
            decided=now,
            expires=max(current.expires, now + ttl_seconds),
        )

    def consume_approval_id(self, approval_id: str) -> Approval | None:
        """Use one approved, unexpired approval by its id (the call that asked for it waited)."""
        now = self.clock()
        with self._transaction() as db:
            row = db.execute(
                "UPDATE approvals SET status='consumed', consumed=? WHERE id=? AND status='approved' AND expires>? "
                "RETURNING *",
                (now, approval_id, now),
            ).fetchone()
        return None if row is None else _approval(row)

    def withdraw_approval(self, approval_id: str) -> bool:
        """The call that asked went away (cancelled): its pending approval can no longer be decided."""
        with self._transaction() as db:
            return (
                db.execute(
                    "UPDATE approvals SET status='withdrawn', decided=? WHERE id=? AND status='pending'",
                    (self.clock(), approval_id),
                ).rowcount
                == 1
            )

    def note_origin(self, approval_id: str, transport: str, client: str | None = None) -> None:
        """Remember over which transport, and from which client, the call that asked came."""
        with self._appending() as db:  # one statement: atomic without the approvals lock
            db.execute(
                "INSERT INTO approval_meta (approval_id, transport, client) VALUES (?, ?, ?) "
                "ON CONFLICT (approval_id) DO UPDATE SET transport=excluded.transport, client=excluded.client",
                (approval_id, transport, client),
            )

    def approval_meta(self, approval_ids: list[str]) -> dict[str, dict[str, str | None]]:
        """`{id: {"transport", "decided_by", "client"}}` for the approvals that have any."""
        if not approval_ids:
            return {}
        marks = ",".join("?" * len(approval_ids))
        with self._reading() as db:
            rows = db.execute(
                f"SELECT approval_id, transport, decided_by, client FROM approval_meta WHERE approval_id IN ({marks})",
                approval_ids,
            ).fetchall()
        return {row[0]: {"transport": row[1], "decided_by": row[2], "client": row[3]} for row in rows}

    def events_since(self, seq: int, limit: int = 200) -> list[tuple[int, str, str]]:
        """`(seq, approval_id, status)` for every status change after `seq`, oldest first."""
        with self._reading() as db:
            return [
                (row[0], row[1], row[2])
                for row in db.execute(
                    "SELECT seq, approval_id, status FROM approval_events WHERE seq>? ORDER BY seq LIMIT ?",
                    (seq, limit),
                ).fetchall()
            ]

    def last_event(self) -> int:
        with self._reading() as db:
            row = db.execute("SELECT MAX(seq) FROM approval_events").fetchone()
        return int(row[0] or 0)

    # -- page logins -----------------------------------------------------------------------

    def add_page_login(self, token_sha256: str, ttl_seconds: float) -> None:
        """A one-time login for the approvals page; only the token's hash is stored."""
        now = self.clock()
        with self._transaction() as db:
            db.execute("DELETE FROM page_logins WHERE expires<?", (now,))
            db.execute("INSERT INTO page_logins VALUES (?, ?, NULL)", (token_sha256, now + ttl_seconds))

    def use_page_login(self, token_sha256: str) -> bool:
        """True once for an unexpired login token; never again."""
        now = self.clock()
        with self._transaction() as db:
            return (
                db.execute(
                    "UPDATE page_logins SET used=? WHERE token_sha256=? AND used IS NULL AND expires>?",
                    (now, token_sha256, now),
                ).rowcount
                == 1
            )

    def add_page_session(self, cookie_sha256: str, ttl_seconds: float) -> float:
        """A signed-in browser (only its cookie's hash is stored); when it expires."""
        now = self.clock()
        with self._appending() as db:
            db.execute("DELETE FROM page_sessions WHERE expires<=?", (now,))
            db.execute("INSERT INTO page_sessions VALUES (?, ?)", (cookie_sha256, now + ttl_seconds))
        return now + ttl_seconds

    def page_session(self, cookie_sha256: str) -> float | None:
        """When the signed-in browser's session expires; None when it has or never was."""
        with self._reading() as db:
            row = db.execute(
                "SELECT expires FROM page_sessions WHERE cookie_sha256=? AND expires>?", (cookie_sha256, self.clock())
            ).fetchone()
        return None if row is None else float(row[0])

    def end_page_session(self, cookie_sha256: str) -> None:
        with self._appending() as db:
            db.execute("DELETE FROM page_sessions WHERE cookie_sha256=?", (cookie_sha256,))

    # -- toolsets a principal enabled (dynamic discovery) -----------------------------------

    def enabled_tools(self, principal: str) -> set[str]:
        with self._reading() as db:
            rows = db.execute("SELECT tool FROM enabled_tools WHERE principal=?", (principal,)).fetchall()
        return {row[0] for row in rows}

    def enable_tools(self, principal: str, tools: set[str]) -> None:
        """Add to the principal's enabled tools (canonical names); enabling only ever grows the set."""
        with self._appending() as db:
            for tool in sorted(tools):
                db.execute(
                    "INSERT INTO enabled_tools (principal, tool) VALUES (?, ?) "
                    "ON CONFLICT (principal, tool) DO NOTHING",
                    (principal, tool),
                )

    # -- requestState nonces ----------------------------------------------------------------

    def use_nonce(self, nonce: str, ttl_seconds: float) -> bool:
        """True the first time any process sees `nonce` within `ttl_seconds`; False for a replay."""
        now = self.clock()
        digest = hashlib.sha256(nonce.encode()).hexdigest()
        with self._appending() as db:
            db.execute("DELETE FROM request_state_nonces WHERE expires<?", (now,))
            inserted = db.execute(
                "INSERT INTO request_state_nonces (nonce_sha256, expires) VALUES (?, ?) "
                "ON CONFLICT (nonce_sha256) DO NOTHING",
                (digest, now + ttl_seconds),
            ).rowcount
        return inserted == 1

    def get_approval(self, approval_id: str) -> Approval | None:
        with self._reading() as db:
            row = db.execute("SELECT * FROM approvals WHERE id=?", (approval_id,)).fetchone()
        return None if row is None else _approval(row)

    def count_pending(self) -> int:
        """How many approvals wait for an answer (pending and unexpired)."""
        with self._reading() as db:
            row = db.execute(
                "SELECT COUNT(*) FROM approvals WHERE status='pending' AND expires>?", (self.clock(),)
            ).fetchone()
        return int(row[0])

    def pending_approvals(self, offset: int = 0, limit: int = 25) -> list[Approval]:
        """One page of the approvals that wait for an answer, newest first."""
        with self._reading() as db:
            rows = db.execute(
                "SELECT * FROM approvals WHERE status='pending' AND expires>? "
                "ORDER BY created DESC, id LIMIT ? OFFSET ?",
                (self.clock(), limit, offset),
            ).fetchall()
        return [_approval(row) for row in rows]

    def list_approvals(self, include_done: bool = False, limit: int = 50) -> list[Approval]:
        now = self.clock()
        with self._reading() as db:
            if include_done:
                rows = db.execute("SELECT * FROM approvals ORDER BY created DESC LIMIT ?", (limit,))
            else:
                rows = db.execute(
                    "SELECT * FROM approvals WHERE status IN ('pending','approved') AND expires>? "
                    "ORDER BY created DESC LIMIT ?",
                    (now, limit),
                )
            return [_approval(row) for row in rows.fetchall()]

    # -- audit -----------------------------------------------------------------------------

    def record(self, row: AuditRow) -> None:
        with self._appending() as db:
            db.execute(
                f"INSERT INTO audit ({AUDIT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    row.ts,
                    row.transport,
                    row.principal,
                    row.tool,
                    json.dumps(row.args, ensure_ascii=False),
                    row.risk,
                    row.decision,
                    row.approval_id,
                    row.duration_ms,
                    row.outcome,
                ),
            )

    def tail(self, limit: int = 20) -> list[AuditRow]:
        with self._reading() as db:
            rows = db.execute(
                f"SELECT {AUDIT_COLUMNS} FROM audit ORDER BY id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [
            AuditRow(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], r[7], r[8], r[9]) for r in reversed(rows)
        ]


class SqliteFile:
    """One SQLite file of the state dir, shared by threads and processes: WAL, and one writer at a
    time through BEGIN IMMEDIATE."""

    def __init__(self, path: Path, schema: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(schema)
        with contextlib.suppress(OSError):  # not every file system keeps modes
            path.chmod(0o600)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        started = time.perf_counter()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        metrics.current().store("sqlite", time.perf_counter() - started)

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        started = time.perf_counter()
        with self._lock:
            yield self._db
        metrics.current().store("sqlite", time.perf_counter() - started)

    def transaction(self) -> contextlib.AbstractContextManager[Connection]:
        return self._transaction()

    def reading(self) -> contextlib.AbstractContextManager[Connection]:
        return self._reading()


class PolicyStore(SqliteFile, StateStore):
    """The state in one SQLite file: the default, for one machine."""

    def __init__(self, path: Path, clock: Any = time.time) -> None:
        super().__init__(path, SCHEMA + APPROVAL_EVENTS_SCHEMA)
        self.clock = clock
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(approval_meta)")}
        if "client" not in columns:  # a state file from before clients were remembered
            self._db.execute("ALTER TABLE approval_meta ADD COLUMN client TEXT")


def _approval(row: tuple[Any, ...]) -> Approval:
    return Approval(
        id=row[0],
        tool=row[1],
        args_sha256=row[2],
        args_display=json.loads(row[3]),
        summary=row[4],
        risk=row[5],
        principal=row[6],
        created=row[7],
        expires=row[8],
        status=row[9],
        decided=row[10],
        consumed=row[11],
    )
