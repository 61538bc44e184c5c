"""The audit log: one row per call, written in batches, never lost to one row the store refuses.

The rows of calls that finish in the same turn of the event loop share one transaction. A batch
the store refuses for a reason other than being down (a value it cannot take) is written again row
by row, so one bad row fails its own call and no other. A row that still cannot be written goes to
the local spool (`mcp_tools.state.spool`) if its call changed something, and waits there for the
next write, or for `/readyz`, which says that rows wait until they are in the store.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_tools.state.errors import StateStoreUnavailable
from mcp_tools.state.storable import storable_value

if TYPE_CHECKING:
    from mcp_tools.state.spool import AuditSpool

AUDIT_COLUMNS = (
    "ts, transport, principal, tool, args, risk, decision, approval_id, duration_ms, outcome, answered_by, account"
)
INSERT_AUDIT = f"INSERT INTO audit ({AUDIT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
logger = logging.getLogger("mcp_tools.state")


def iso_time(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


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
    # The channel whose answer decided a high-risk call: `elicitation:stdio`, `terminal`, `page`,
    # `cli`, `telegram:@ada (42)`; None when nobody was asked.
    answered_by: str | None = None
    # The upstream accounts the call acted as, by label (`work`; `default, work` for every account
    # at once); None for a tool without accounts. A label, never an address or a credential.
    account: str | None = None

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
            "answered_by": self.answered_by,
            "account": self.account,
        }


def _values(row: AuditRow) -> tuple[Any, ...]:
    return (
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
        row.answered_by,
        row.account,
    )


class AuditLog:
    """The audit half of a state store (`StateStore` supplies the connections)."""

    # rows handed to `append_audit` in this turn of the event loop, and (the event their write
    # sets, what each row's write raised, by its place in the queue)
    _audit_queue: list[AuditRow]
    _audit_flushed: tuple[Any, list[Exception | None]] | None = None
    # Where rows wait that the store could not take (`mcp_tools.state.spool`).
    audit_spool: AuditSpool | None = None

    def _transaction(self) -> contextlib.AbstractContextManager[Any]:
        raise NotImplementedError

    def _reading(self) -> contextlib.AbstractContextManager[Any]:
        raise NotImplementedError

    def _appending(self) -> contextlib.AbstractContextManager[Any]:
        raise NotImplementedError

    def record(self, row: AuditRow) -> None:
        failure = self._insert_audit([row])[0]
        if failure is not None:
            raise failure

    async def append_audit(self, row: AuditRow) -> None:
        """Write one audit row, returning once it is written; the rows of calls that finish in the
        same turn of the event loop share one transaction (one commit for a burst of calls).

        The first call of a turn yields once, so that the others queue theirs, then writes them
        all; the others wait for that write. Each raises what the write of its own row raised (a
        row that was not written is never reported as written, and one row the store refuses
        fails no other)."""
        import anyio

        if self._audit_flushed is not None:
            place = len(self._audit_queue)
            self._audit_queue.append(row)
            flushed, failures = self._audit_flushed
            await flushed.wait()
            failure = failures[place]
            if failure is not None:
                raise failure
            return
        self._audit_queue = [row]
        flushed, failures = self._audit_flushed = (anyio.Event(), [])
        try:
            await anyio.lowlevel.cancel_shielded_checkpoint()
        finally:
            batch, self._audit_queue = self._audit_queue, []
            self._audit_flushed = None
            try:
                failures.extend(self._insert_audit(batch))
            except BaseException as exc:  # every waiter learns it, then it goes on
                failures[:] = [exc if isinstance(exc, Exception) else StateStoreUnavailable(str(exc))] * len(batch)
                raise
            finally:
                flushed.set()
        failure = failures[0]
        if failure is not None:
            raise failure

    def spool_audit(self, row: AuditRow) -> bool:
        """Keep the row of a call that ran while the store could not take it, to be written with
        the next row that is; False where there is no spool."""
        if self.audit_spool is None:
            return False
        self.audit_spool.keep(storable_value(dataclasses.asdict(row)))
        return True

    def audit_waiting(self) -> int:
        """How many rows still wait in the spool after trying to write them now (0: none)."""
        if self.audit_spool is None or not self.audit_spool.pending:
            return 0
        self._replay_spool()
        return self.audit_spool.count() if self.audit_spool.pending else 0

    def _insert_audit(self, rows: list[AuditRow]) -> list[Exception | None]:
        """Write the rows; what each one's write raised (None: written). Raises
        StateStoreUnavailable, for every row, while the store cannot be reached."""
        failures = self._write_audit_rows(rows)
        if self.audit_spool is not None and self.audit_spool.pending:  # rows wait: the store may take them now
            self._replay_spool()
        return failures

    def _replay_spool(self) -> None:
        assert self.audit_spool is not None
        with contextlib.suppress(StateStoreUnavailable):  # gone again: they wait for the next write

            def write(kept: list[dict[str, Any]]) -> list[dict[str, Any]]:
                failures = self._write_audit_rows([AuditRow(**row) for row in kept])
                return [row for row, failure in zip(kept, failures, strict=True) if failure is not None]

            self.audit_spool.replay(write)

    def _write_audit_rows(self, rows: list[AuditRow]) -> list[Exception | None]:
        """One transaction for the rows; if the store refuses it for anything but being down, each
        row again on its own, so that only the rows it cannot take fail."""
        values = [_values(row) for row in rows]
        try:
            self._insert_values(values)
        except StateStoreUnavailable:
            raise
        except Exception as exc:
            if len(values) == 1:
                return [exc]
            logger.warning("the state store refused a batch of %d audit rows; writing them one by one", len(values))
            return [self._insert_one(value) for value in values]
        return [None] * len(values)

    def _insert_one(self, value: tuple[Any, ...]) -> Exception | None:
        try:
            self._insert_values([value])
        except StateStoreUnavailable:
            raise
        except Exception as exc:
            return exc
        return None

    def _insert_values(self, values: list[tuple[Any, ...]]) -> None:
        if len(values) == 1:  # one insert races with nothing: no lock beyond the row's own
            with self._appending() as db:
                db.execute(INSERT_AUDIT, values[0])
            return
        with self._transaction() as db:  # a burst: one commit
            for value in values:
                db.execute(INSERT_AUDIT, value)

    def tail(self, limit: int = 20) -> list[AuditRow]:
        with self._reading() as db:
            rows = db.execute(f"SELECT {AUDIT_COLUMNS} FROM audit ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [
            AuditRow(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], r[7], r[8], r[9], r[10], r[11])
            for r in reversed(rows)
        ]
