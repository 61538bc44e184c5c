"""The audit spool: rows of calls that ran while the database was down wait on local disk, and
none is lost while processes append and replay at once."""

from __future__ import annotations

import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.state.spool import AuditSpool
from mcp_tools.state.store import StateStoreUnavailable


def test_kept_rows_are_replayed_once_in_order_and_the_file_is_private(tmp_path: Path) -> None:
    spool = AuditSpool(tmp_path / "audit-spool.jsonl")
    assert not spool.pending and spool.replay(lambda rows: None) == 0
    spool.keep({"tool": "files.write", "n": 1})
    spool.keep({"tool": "files.write", "n": 2, "text": "ünïcode"})
    assert spool.pending and stat.S_IMODE(spool.path.stat().st_mode) == 0o600
    written: list[dict[str, Any]] = []
    assert spool.replay(written.extend) == 2
    assert [row["n"] for row in written] == [1, 2] and written[1]["text"] == "ünïcode"
    assert not spool.pending and spool.replay(written.extend) == 0 and len(written) == 2


def test_rows_stay_when_the_store_is_still_down(tmp_path: Path) -> None:
    spool = AuditSpool(tmp_path / "audit-spool.jsonl")
    spool.keep({"n": 1})

    def down(rows: list[dict[str, Any]]) -> None:
        raise StateStoreUnavailable("the PostgreSQL state store cannot be reached")

    with pytest.raises(StateStoreUnavailable):
        spool.replay(down)
    written: list[dict[str, Any]] = []
    assert spool.replay(written.extend) == 1 and written == [{"n": 1}]


def test_no_row_is_lost_while_writers_append_and_another_replays(tmp_path: Path) -> None:
    """A writer that waited for the lock while the file was replayed and removed must not append to
    the removed file: it opens the path again."""
    spool = AuditSpool(tmp_path / "audit-spool.jsonl")
    written: list[dict[str, Any]] = []
    writers_done = threading.Event()

    def writer(number: int) -> None:
        for index in range(100):
            spool.keep({"writer": number, "index": index})

    def replayer() -> None:
        while not writers_done.is_set():
            spool.replay(written.extend)

    replaying = threading.Thread(target=replayer)
    replaying.start()
    writers = [threading.Thread(target=writer, args=(number,)) for number in range(4)]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    writers_done.set()
    replaying.join()
    spool.replay(written.extend)
    assert sorted((row["writer"], row["index"]) for row in written) == [(w, i) for w in range(4) for i in range(100)]
