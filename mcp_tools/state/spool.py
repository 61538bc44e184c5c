"""Audit rows kept on local disk while the shared state store cannot take them.

A medium or high call checks that the store answers before it runs (its audit row must be
writable), but the database can go down between that check and the row. The call has then
changed something: withholding its result would tell the model it did not run, and dropping the
row would lose what happened. The row waits in `<state_dir>/audit-spool.jsonl` instead (written
with fsync, mode 0600, arguments already redacted) and goes into the store with the next row that
is written, from whichever process of this state dir writes it first. A crash between that write
and the file's removal can write a spooled row twice; it never loses one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SPOOL_FILE = "audit-spool.jsonl"


class AuditSpool:
    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def pending(self) -> bool:
        """Rows wait here (a stat: cheap enough to ask before every write)."""
        return self.path.exists()

    def keep(self, row: dict[str, Any]) -> None:
        line = json.dumps(row, ensure_ascii=True, separators=(",", ":")) + "\n"
        with self._locked() as fd:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)

    def count(self) -> int:
        """How many rows wait."""
        with self._locked() as fd, open(fd, encoding="utf-8", closefd=False) as spooled:
            return sum(1 for line in spooled if line.strip())

    def replay(self, write: Callable[[list[dict[str, Any]]], list[dict[str, Any]] | None]) -> int:
        """Hand every waiting row to `write`, which returns the rows the store refused; forget
        the others. How many went."""
        if not self.pending:
            return 0
        with self._locked() as fd:
            with open(fd, encoding="utf-8", closefd=False) as spooled:
                rows = [json.loads(line) for line in spooled if line.strip()]
            refused = write(rows) if rows else []  # raises while the store is still down: all stay
            if not refused:
                self.path.unlink(missing_ok=True)
                return len(rows)
            os.ftruncate(fd, 0)  # the refused stay, in order, for the next try (O_APPEND writes at the end)
            kept = "".join(json.dumps(row, ensure_ascii=True, separators=(",", ":")) + "\n" for row in refused)
            os.write(fd, kept.encode("utf-8"))
            os.fsync(fd)
        return len(rows) - len(refused)

    @contextmanager
    def _locked(self) -> Iterator[int]:
        """The spool opened for appending, locked against the other processes of this state dir.

        A process that waited for the lock while another replayed and removed the file would hold
        a file nobody reads any more: it opens the path again until the locked file is the one there.
        """
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                _lock(fd)
                if self._is_at_path(fd):
                    break
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
        try:
            yield fd
        finally:
            os.close(fd)  # closing releases the lock

    def _is_at_path(self, fd: int) -> bool:
        """The open file is the one at the path (not one a replay removed meanwhile, whose path
        another process may be removing or have created anew while this one waited)."""
        try:
            there = os.stat(self.path)
        except FileNotFoundError:
            return False
        held = os.fstat(fd)
        return (there.st_dev, there.st_ino) == (held.st_dev, held.st_ino)


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # Windows: one process per state dir is the supported shape there
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
