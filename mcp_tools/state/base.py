"""What every state store is built on: the connections its queries run on.

An engine (`mcp_tools.state.sqlite`, `mcp_tools.state.postgres`) supplies connections through
`_transaction` (writes: one at a time across every process) and `_reading`; the parts of the
store (approvals, sessions, enabled tools, limits, the audit log) write each query once, with `?`
placeholders, against them.
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    @property
    def description(self) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    def execute(self, sql: str, params: Any = (), /) -> Cursor: ...


class StoreBase:
    """The plumbing every part of the store shares; an engine fills it in."""

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

    def _keyed_transaction(self, key: str) -> contextlib.AbstractContextManager[Connection]:
        """A transaction that is the only one holding `key` (SQLite: the only writer at all)."""
        return self._transaction()
