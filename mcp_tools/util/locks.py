"""A re-entrant lock that tells its holder when another thread waits for it.

Bulk work that holds a lock across many steps (the notes index commits a reconcile in large
transactions) can then let a waiting reader in at once, instead of making it wait for a fixed
batch: large batches when nobody waits, short waits when somebody does.
"""

from __future__ import annotations

import threading
from types import TracebackType


class WaitAwareLock:
    """`threading.RLock` plus `waiting`: an event set while a thread is blocked acquiring it."""

    __slots__ = ("_count_lock", "_lock", "_nobody_waits", "_waiting", "waiting")

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._count_lock = threading.Lock()
        self._waiting = 0
        self.waiting = threading.Event()
        self._nobody_waits = threading.Event()
        self._nobody_waits.set()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if self._lock.acquire(False):  # free, or already ours: the common case costs nothing more
            return True
        if not blocking:
            return False
        with self._count_lock:
            self._waiting += 1
            self.waiting.set()
            self._nobody_waits.clear()
        try:
            return self._lock.acquire(True, timeout)
        finally:
            with self._count_lock:
                self._waiting -= 1
                if not self._waiting:
                    self.waiting.clear()
                    self._nobody_waits.set()

    def release(self) -> None:
        self._lock.release()

    def let_waiters_in(self, timeout: float) -> None:
        """After releasing it: wait, at most `timeout` seconds, until the threads that waited have had it.

        A released lock is not handed to a waiter: without this, a holder that takes it straight
        back (the next batch) can keep a waiting thread out for another turn, or several."""
        self._nobody_waits.wait(timeout)

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._lock.release()
