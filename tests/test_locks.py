"""The lock that tells its holder somebody waits: what a bulk notes index commits on."""

from __future__ import annotations

import threading

from mcp_tools.util.locks import WaitAwareLock


def test_the_holder_sees_a_thread_blocked_on_the_lock_and_the_sign_clears_once_it_is_in() -> None:
    lock = WaitAwareLock()
    got_it = threading.Event()
    release_it = threading.Event()

    def take() -> None:
        with lock:
            got_it.set()
            release_it.wait(5)

    with lock:
        assert not lock.waiting.is_set()
        taker = threading.Thread(target=take)
        taker.start()
        assert lock.waiting.wait(5)  # the other thread is blocked on it now
        assert not got_it.is_set()
    assert got_it.wait(5)
    assert not lock.waiting.is_set()  # nobody waits any more: it holds the lock
    release_it.set()
    taker.join(5)


def test_it_is_reentrant_and_its_own_holder_never_counts_as_waiting() -> None:
    lock = WaitAwareLock()
    with lock, lock:
        assert lock.acquire(blocking=False)
        lock.release()
        assert not lock.waiting.is_set()
    assert lock.acquire(blocking=False)
    lock.release()


def test_a_try_that_gives_up_leaves_no_waiting_sign() -> None:
    lock = WaitAwareLock()
    answers: list[bool] = []
    with lock:
        for blocking, timeout in ((False, -1), (True, 0.01)):
            thread = threading.Thread(target=lambda b=blocking, t=timeout: answers.append(lock.acquire(b, t)))
            thread.start()
            thread.join(5)
        assert answers == [False, False]
        assert not lock.waiting.is_set()


def test_a_holder_that_lets_waiters_in_does_not_take_the_lock_back_before_them() -> None:
    lock = WaitAwareLock()
    release_it = threading.Event()

    def take() -> None:
        with lock:
            release_it.wait(5)

    lock.acquire()
    taker = threading.Thread(target=take)
    taker.start()
    assert lock.waiting.wait(5)
    lock.release()
    lock.let_waiters_in(5)
    assert not lock.acquire(blocking=False)  # the waiter has it now
    release_it.set()
    taker.join(5)
    assert lock.acquire(blocking=False)
    lock.release()
    lock.let_waiters_in(5)  # nobody waits: returns at once
