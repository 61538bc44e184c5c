"""MCP tasks as state: a call a client asked to run as a task, its status and its result.

A task lives in the state store beside the approvals (the SQLite file, or the PostgreSQL database
the replicas share; its table is migration 0012), so it survives a restart and any replica
answers for it. Every read names the principal: another principal's task id is as unknown as
one never made. A task is kept until its `expires` (creation plus its ttl), then forgotten.

The runner that executes a task holds a lease (`lease_owner`, `lease_until`) and renews it while it
runs; a task whose lease ran out (its process stopped) is taken over by the next replica that sees
it. The arguments, which the call needs again after a restart, are sealed under `[state] secret`
when one is set (always so on PostgreSQL).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

from mcp_tools.state.store import StateStore

TERMINAL = ("completed", "failed", "cancelled")
OPEN = "status IN ('working','input_required')"
COLUMNS = (
    "id, principal, endpoint, transport, client, tool, arguments, status, status_message, created, updated, "
    "ttl_ms, expires, approval_id, question, result, is_error, error, lease_owner, lease_until, scoped"
)


@dataclass(frozen=True)
class TaskRow:
    id: str
    principal: str
    endpoint: str
    transport: str
    client: str | None
    tool: str
    arguments: str
    status: str
    status_message: str | None
    created: float
    updated: float
    ttl_ms: int
    expires: float
    approval_id: str | None
    question: str | None
    result: str | None
    is_error: bool
    error: str | None
    lease_owner: str | None
    lease_until: float
    scoped: bool = False  # made under OAuth scopes, which live only in the request that made it

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def result_json(self) -> dict[str, Any] | None:
        return None if self.result is None else dict(json.loads(self.result))

    def error_json(self) -> dict[str, Any] | None:
        return None if self.error is None else dict(json.loads(self.error))


def _row(values: Any) -> TaskRow:
    fields = list(values)
    fields[16], fields[20] = bool(fields[16]), bool(fields[20])
    return TaskRow(*fields)


def new_task_id() -> str:
    """Unguessable (192 random bits): an id is never enough to reach a task, but it must not be guessable."""
    return "task-" + secrets.token_urlsafe(24)


class TaskStore:
    """The tasks table in the state store; every method is one short transaction (call from a thread)."""

    def __init__(self, state: StateStore, key: bytes | None = None) -> None:
        self.state = state
        self.key = key

    def clock(self) -> float:
        return float(self.state.clock())

    # -- arguments ------------------------------------------------------------------------

    def seal_arguments(self, arguments: dict[str, Any]) -> str:
        if self.key is None:
            return json.dumps(arguments, ensure_ascii=False)
        from mcp_tools.state.sealed import seal

        return json.dumps(seal(arguments, self.key))

    def open_arguments(self, row: TaskRow) -> dict[str, Any]:
        """The call's arguments; ValueError when they were sealed under another secret."""
        from mcp_tools.state.sealed import is_sealed, unseal

        stored = json.loads(row.arguments)
        if is_sealed(stored):
            if self.key is None:
                raise ValueError("the task's arguments were sealed under a [state] secret this server lacks")
            return unseal(stored, self.key)
        if not isinstance(stored, dict):
            raise ValueError("the task's arguments are not an object")
        return stored

    # -- the life of a task ---------------------------------------------------------------

    def create(
        self,
        *,
        principal: str,
        endpoint: str,
        transport: str,
        client: str | None,
        tool: str,
        arguments: dict[str, Any],
        ttl_ms: int,
        owner: str,
        lease_seconds: float,
        message: str,
        scoped: bool = False,
    ) -> TaskRow:
        """A new `working` task, leased to `owner`; durable when this returns."""
        now = self.clock()
        row = TaskRow(
            id=new_task_id(),
            principal=principal,
            endpoint=endpoint,
            transport=transport,
            client=client,
            tool=tool,
            arguments=self.seal_arguments(arguments),
            status="working",
            status_message=message,
            created=now,
            updated=now,
            ttl_ms=ttl_ms,
            expires=now + ttl_ms / 1000,
            approval_id=None,
            question=None,
            result=None,
            is_error=False,
            error=None,
            lease_owner=owner,
            lease_until=now + lease_seconds,
            scoped=scoped,
        )
        values = [getattr(row, name.strip()) for name in COLUMNS.split(",")]
        values[16], values[20] = int(row.is_error), int(row.scoped)
        with self.state.transaction() as db:
            db.execute(f"INSERT INTO mcp_tasks ({COLUMNS}) VALUES ({','.join('?' * len(values))})", tuple(values))
        return row

    def get(self, task_id: str, principal: str) -> TaskRow | None:
        """The principal's task, or None: unknown, another principal's, or past its ttl."""
        with self.state.reading() as db:
            found = db.execute(
                f"SELECT {COLUMNS} FROM mcp_tasks WHERE id=? AND principal=? AND expires>?",
                (task_id, principal, self.clock()),
            ).fetchone()
        return None if found is None else _row(found)

    def open_count(self, principal: str) -> int:
        """How many of the principal's tasks are still open."""
        with self.state.reading() as db:
            found = db.execute(
                f"SELECT COUNT(*) FROM mcp_tasks WHERE principal=? AND {OPEN} AND expires>?", (principal, self.clock())
            ).fetchone()
        return int(found[0])

    def row(self, task_id: str) -> TaskRow | None:
        """A task by id alone, for its runner."""
        with self.state.reading() as db:
            found = db.execute(f"SELECT {COLUMNS} FROM mcp_tasks WHERE id=?", (task_id,)).fetchone()
        return None if found is None else _row(found)

    def page(self, principal: str, cursor: str | None, limit: int) -> tuple[list[TaskRow], str | None]:
        """The principal's live tasks, oldest first, `limit` at a time; ValueError for a cursor it never got."""
        now = self.clock()
        with self.state.reading() as db:
            if cursor is None:
                rows = db.execute(
                    f"SELECT {COLUMNS} FROM mcp_tasks WHERE principal=? AND expires>? ORDER BY created, id LIMIT ?",
                    (principal, now, limit + 1),
                ).fetchall()
            else:
                after = db.execute(
                    "SELECT created FROM mcp_tasks WHERE id=? AND principal=?", (cursor, principal)
                ).fetchone()
                if after is None:
                    raise ValueError("unknown cursor")
                rows = db.execute(
                    f"SELECT {COLUMNS} FROM mcp_tasks WHERE principal=? AND expires>? "
                    "AND (created>? OR (created=? AND id>?)) ORDER BY created, id LIMIT ?",
                    (principal, now, after[0], after[0], cursor, limit + 1),
                ).fetchall()
        found = [_row(row) for row in rows]
        return found[:limit], (found[limit - 1].id if len(found) > limit else None)

    def waiting(self, task_id: str, approval_id: str, question: str, message: str) -> bool:
        """The task waits for the person's answer to `approval_id` (`input_required`)."""
        return self._update(
            task_id,
            "status='input_required', approval_id=?, question=?, status_message=?",
            (approval_id, question, message),
        )

    def working(self, task_id: str, message: str) -> bool:
        return self._update(task_id, "status='working', status_message=?", (message,))

    def note(self, task_id: str, message: str) -> bool:
        """A new status message (progress) without a change of status."""
        return self._update(task_id, "status_message=?", (message,))

    def finish(self, task_id: str, result: dict[str, Any], is_error: bool, message: str) -> bool:
        """The call's result; False when the task had already ended (a cancelled task stays cancelled)."""
        return self._update(
            task_id,
            "status='completed', result=?, is_error=?, status_message=?, lease_owner=NULL",
            (json.dumps(result, ensure_ascii=False), int(is_error), message),
        )

    def fail(self, task_id: str, error: dict[str, Any], message: str) -> bool:
        """A JSON-RPC error ended the call (not a tool's error result: that completes it)."""
        return self._update(
            task_id,
            "status='failed', error=?, status_message=?, lease_owner=NULL",
            (json.dumps(error, ensure_ascii=False), message),
        )

    def cancel(self, task_id: str, principal: str, message: str) -> TaskRow | None:
        """Cancel the principal's open task; None when it was not open (terminal, unknown or expired)."""
        now = self.clock()
        with self.state.transaction() as db:
            changed = db.execute(
                "UPDATE mcp_tasks SET status='cancelled', status_message=?, updated=?, lease_owner=NULL "
                f"WHERE id=? AND principal=? AND expires>? AND {OPEN} RETURNING {COLUMNS}",
                (message, now, task_id, principal, now),
            )
        found = changed.fetchone()
        return None if found is None else _row(found)

    def _update(self, task_id: str, assignments: str, values: tuple[Any, ...]) -> bool:
        with self.state.transaction() as db:
            changed = db.execute(
                f"UPDATE mcp_tasks SET {assignments}, updated=? WHERE id=? AND {OPEN} RETURNING id",
                (*values, self.clock(), task_id),
            )
        return changed.fetchone() is not None

    # -- leases ---------------------------------------------------------------------------

    def claim(self, task_id: str, owner: str, lease_seconds: float, endpoint: str = "") -> TaskRow | None:
        """Take over an open task of `endpoint` whose lease ran out (its runner's process stopped);
        None if another runner holds it."""
        now = self.clock()
        with self.state.transaction() as db:
            taken = db.execute(
                f"UPDATE mcp_tasks SET lease_owner=?, lease_until=? WHERE id=? AND endpoint=? AND {OPEN} "
                f"AND expires>? AND (lease_until<=? OR lease_owner IS NULL OR lease_owner=?) RETURNING {COLUMNS}",
                (owner, now + lease_seconds, task_id, endpoint, now, now, owner),
            )
        found = taken.fetchone()
        return None if found is None else _row(found)

    def orphans(self, endpoint: str, limit: int = 100) -> list[str]:
        """Open tasks of this endpoint that nobody runs now."""
        now = self.clock()
        with self.state.reading() as db:
            rows = db.execute(
                f"SELECT id FROM mcp_tasks WHERE endpoint=? AND {OPEN} AND expires>? AND lease_until<=? "
                "ORDER BY created LIMIT ?",
                (endpoint, now, now, limit),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def renew(self, owner: str, lease_seconds: float) -> None:
        with self.state.transaction() as db:
            db.execute(
                f"UPDATE mcp_tasks SET lease_until=? WHERE lease_owner=? AND {OPEN}",
                (self.clock() + lease_seconds, owner),
            )

    def release(self, owner: str) -> None:
        """Hand this runner's open tasks to whoever looks next (a clean shutdown)."""
        with self.state.transaction() as db:
            db.execute(f"UPDATE mcp_tasks SET lease_until=0, lease_owner=NULL WHERE lease_owner=? AND {OPEN}", (owner,))

    def purge(self) -> int:
        """Forget tasks past their ttl."""
        with self.state.transaction() as db:
            gone = db.execute("DELETE FROM mcp_tasks WHERE expires<=?", (self.clock(),))
        return int(gone.rowcount)
