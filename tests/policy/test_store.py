"""Approvals and audit rows in SQLite and in PostgreSQL: single use, exact match, expiry, concurrent consumers."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from mcp_tools.state.sqlite import PolicyStore
from mcp_tools.state.store import AuditRow, PriorAnswers, StateStore

OpenStore = Callable[..., StateStore]


def request(
    store: StateStore,
    digest: str = "d1",
    tool: str = "x.erase",
    principal: str = "local",
    origin: tuple[str, str | None] | None = None,
):
    return store.request_approval(
        tool=tool,
        args_sha256=digest,
        args_display={"target": "t"},
        summary="Erase t",
        risk="high",
        principal=principal,
        ttl_seconds=600,
        origin=origin,
    )


def test_pending_approval_is_reused_for_the_same_call(open_store: OpenStore) -> None:
    store = open_store()
    first = request(store)
    assert request(store).id == first.id
    assert request(store, digest="d2").id != first.id
    assert request(store, tool="x.other").id != first.id


def test_only_an_approved_approval_is_consumed_and_only_once(open_store: OpenStore) -> None:
    store = open_store()
    approval = request(store)
    assert store.consume_approval("x.erase", "d1", "local") is None  # still pending
    store.decide_approval(approval.id, approve=True, ttl_seconds=600)
    assert store.consume_approval("x.erase", "d2", "local") is None  # other arguments
    assert store.consume_approval("x.other", "d1", "local") is None  # other tool
    assert store.consume_approval("x.erase", "d1", "local").id == approval.id
    assert store.consume_approval("x.erase", "d1", "local") is None
    with pytest.raises(ValueError, match="consumed"):
        store.decide_approval(approval.id, approve=True, ttl_seconds=600)


def test_an_approval_serves_only_the_principal_that_asked_for_it(open_store: OpenStore) -> None:
    store = open_store()
    asked_by_laptop = request(store, principal="laptop")
    assert request(store, principal="phone").id != asked_by_laptop.id  # each principal waits on its own
    store.decide_approval(asked_by_laptop.id, approve=True, ttl_seconds=600)
    assert store.consume_approval("x.erase", "d1", "phone") is None
    assert store.consume_approval("x.erase", "d1", "laptop").id == asked_by_laptop.id


def test_concurrent_consumers_get_one_approval_once(open_store: OpenStore) -> None:
    setup = open_store()
    setup.decide_approval(request(setup).id, approve=True, ttl_seconds=600)
    stores = [open_store() for _ in range(8)]  # separate connections, as separate processes would have
    wins: list[str] = []
    barrier = threading.Barrier(len(stores))

    def consume(store: StateStore) -> None:
        barrier.wait()
        consumed = store.consume_approval("x.erase", "d1", "local")
        if consumed is not None:
            wins.append(consumed.id)

    threads = [threading.Thread(target=consume, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(wins) == 1


def test_expired_approvals_can_be_neither_decided_nor_used(open_store: OpenStore) -> None:
    now = [1000.0]
    store = open_store(clock=lambda: now[0])
    approval = request(store)
    now[0] += 601
    with pytest.raises(ValueError, match="expired"):
        store.decide_approval(approval.id, approve=True, ttl_seconds=600)
    other = request(store)
    assert other.id != approval.id
    store.decide_approval(other.id, approve=True, ttl_seconds=600)
    now[0] += 601
    assert store.consume_approval("x.erase", "d1", "local") is None
    assert store.list_approvals() == []
    assert {a.effective_status(now[0]) for a in store.list_approvals(include_done=True)} == {"expired"}


def test_unknown_approval_id(open_store: OpenStore) -> None:
    store = open_store()
    with pytest.raises(LookupError):
        store.decide_approval("apr-nope", approve=True, ttl_seconds=600)


def test_audit_rows_round_trip_in_order(open_store: OpenStore) -> None:
    store = open_store()
    for index in range(3):
        store.record(AuditRow(float(index), "stdio", "local", "x.y", {"i": index}, "low", "ran", None, 1.5, "ok"))
    rows = open_store().tail(2)  # what another process reads
    assert [row.args["i"] for row in rows] == [1, 2]
    assert rows[0].as_dict()["time"] == "1970-01-01T00:00:01Z"
    assert rows[0].duration_ms == 1.5


def test_the_sqlite_state_file_is_private(tmp_path: Path) -> None:
    PolicyStore(tmp_path / "p.db")
    assert (tmp_path / "p.db").stat().st_mode & 0o777 == 0o600


def test_timestamps_keep_sub_second_precision(open_store: OpenStore) -> None:
    """Expiry compares seconds since 1970 with fractions: a 4-byte float would round them by minutes."""
    now = [1_795_000_000.25]
    store = open_store(clock=lambda: now[0])
    approval = request(store)
    assert store.get_approval(approval.id).created == 1_795_000_000.25  # type: ignore[union-attr]


def test_racing_requests_for_one_call_share_one_pending_approval(open_store: OpenStore) -> None:
    """Two replicas asking at once for the same call must not make two approvals for the person."""
    stores = [open_store() for _ in range(6)]
    barrier = threading.Barrier(len(stores))
    ids: list[str] = []

    def ask(store: StateStore) -> None:
        barrier.wait()
        ids.append(request(store).id)

    threads = [threading.Thread(target=ask, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(ids) == 6 and len(set(ids)) == 1


def test_events_are_numbered_in_commit_order_across_connections(open_store: OpenStore) -> None:
    """A follower reads events after its cursor: a number that committed late would be skipped."""
    stores = [open_store() for _ in range(4)]
    barrier = threading.Barrier(len(stores))

    def churn(index: int) -> None:
        barrier.wait()
        for round_ in range(5):
            approval = request(stores[index], digest=f"{index}-{round_}")
            stores[index].decide_approval(approval.id, approve=True, ttl_seconds=600)
            stores[index].consume_approval_id(approval.id)

    threads = [threading.Thread(target=churn, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    events = stores[0].events_since(0, limit=1000)
    assert len(events) == 4 * 5 * 3
    assert [seq for seq, _, _ in events] == sorted(seq for seq, _, _ in events)
    by_approval: dict[str, list[str]] = {}
    for _, approval_id, status in events:
        by_approval.setdefault(approval_id, []).append(status)
    assert set(map(tuple, by_approval.values())) == {("pending", "approved", "consumed")}


OLD_AUDIT_SCHEMA = """
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, transport TEXT NOT NULL, principal TEXT NOT NULL,
    tool TEXT NOT NULL, args TEXT NOT NULL, risk TEXT, decision TEXT NOT NULL, approval_id TEXT,
    duration_ms REAL NOT NULL, outcome TEXT NOT NULL
);
INSERT INTO audit (ts, transport, principal, tool, args, risk, decision, approval_id, duration_ms, outcome)
VALUES (1.0, 'stdio', 'local', 'x.erase', '{}', 'high', 'confirmed', NULL, 1.5, 'ok');
"""


def test_an_audit_log_written_before_answered_by_existed_is_migrated(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "p.db"
    with sqlite3.connect(path) as old:
        old.executescript(OLD_AUDIT_SCHEMA)
    stores = [PolicyStore(path) for _ in range(3)]  # every process opening it migrates, or finds it done
    stores[0].record(
        AuditRow(2.0, "http", "laptop", "x.erase", {}, "high", "approved_out_of_band", "apr-1", 2.0, "ok", "page")
    )
    rows = stores[1].tail(10)
    assert [(row.decision, row.answered_by) for row in rows] == [("confirmed", None), ("approved_out_of_band", "page")]
    assert rows[0].as_dict()["answered_by"] is None and rows[1].as_dict()["answered_by"] == "page"


def test_who_decided_an_approval_is_kept_with_it(open_store: OpenStore) -> None:
    store = open_store()
    approval = request(store)
    assert store.decided_by(approval.id) is None
    store.decide(approval.id, True, 600, decided_by="telegram:@ada (42)")
    assert store.decided_by(approval.id) == "telegram:@ada (42)"
    used = store.consume_approval("x.erase", "d1", "local")
    assert used is not None and used.decided_by == "telegram:@ada (42)"  # read with the check, no extra look


def test_where_a_call_came_from_is_noted_with_its_approval_new_or_reused(open_store: OpenStore) -> None:
    store = open_store()
    asked = request(store, origin=("stdio", "Claude Desktop"))
    noted = store.approval_meta([asked.id])[asked.id]
    assert noted == {"transport": "stdio", "decided_by": None, "client": "Claude Desktop"}
    assert request(store, origin=("http", None)).id == asked.id
    assert store.approval_meta([asked.id])[asked.id] == {"transport": "http", "decided_by": None, "client": None}


@pytest.mark.anyio
async def test_concurrent_audit_rows_are_each_written_before_their_call_returns(open_store: OpenStore) -> None:
    """Rows of calls finishing together share a transaction; none is lost, none returns unwritten."""
    import anyio

    store = open_store()
    written_on_return: list[bool] = []

    async def one_call(index: int) -> None:
        await store.append_audit(
            AuditRow(float(index), "http", "laptop", "x.y", {"i": index}, "low", "ran", None, 1, "ok")
        )
        written_on_return.append(any(row.args["i"] == index for row in store.tail(100)))

    async with anyio.create_task_group() as group:
        for index in range(40):
            group.start_soon(one_call, index)
    assert written_on_return == [True] * 40
    assert sorted(row.args["i"] for row in open_store().tail(100)) == list(range(40))


def test_the_answering_channel_is_kept_in_the_audit_row(open_store: OpenStore) -> None:
    store = open_store()
    store.record(
        AuditRow(2.0, "http", "laptop", "x.erase", {}, "high", "approved_out_of_band", "apr-1", 2.0, "ok", "page")
    )
    assert [row.answered_by for row in open_store().tail(10)] == ["page"]


def test_pending_approvals_of_one_principal(open_store: OpenStore) -> None:
    store = open_store()
    request(store, digest="a", principal="ada")
    request(store, digest="b", principal="bob")
    assert store.count_pending() == 2 and store.count_pending("ada") == 1 and store.count_pending("eve") == 0
    assert [approval.principal for approval in store.pending_approvals(principal="bob")] == ["bob"]


def test_an_approval_card_ticket_opens_its_approval_once(open_store: OpenStore) -> None:
    from mcp_tools.state.store import TicketRefused

    store = open_store()
    approval = request(store)
    store.issue_ticket(approval, "t" * 64, ttl_seconds=600)
    other = open_store()  # another process checks it
    assert other.check_ticket(approval.id, "t" * 64, "local", use=False, max_failures=5).id == approval.id
    with pytest.raises(TicketRefused, match="does not match"):
        other.check_ticket(approval.id, "t" * 64, "someone-else", use=True, max_failures=5)
    assert other.check_ticket(approval.id, "t" * 64, "local", use=True, max_failures=5).id == approval.id
    with pytest.raises(TicketRefused, match="used already"):
        store.check_ticket(approval.id, "t" * 64, "local", use=True, max_failures=5)


def test_wrong_tickets_lock_the_card_out_of_an_approval(open_store: OpenStore) -> None:
    from mcp_tools.state.store import TicketRefused

    store = open_store()
    approval = request(store)
    store.issue_ticket(approval, "t" * 64, ttl_seconds=600)
    for _ in range(3):
        with pytest.raises(TicketRefused, match="does not match"):
            store.check_ticket(approval.id, "w" * 64, "local", use=False, max_failures=3)
    with pytest.raises(TicketRefused, match="too many wrong tickets"):
        store.check_ticket(approval.id, "t" * 64, "local", use=True, max_failures=3)


def test_a_page_session_keeps_its_principal(open_store: OpenStore) -> None:
    store = open_store()
    store.add_page_session("c" * 64, 600, principal="ada")
    store.add_page_session("o" * 64, 600)
    assert open_store().page_session("c" * 64)[1] == "ada"  # type: ignore[index]
    assert open_store().page_session("o" * 64)[1] is None  # type: ignore[index]


@pytest.mark.anyio
async def test_every_call_of_a_failed_audit_batch_learns_its_row_was_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch that cannot be written fails for every call in it, not only for the one that wrote it:
    a result whose audit row is missing must not be given out."""
    import anyio

    from mcp_tools.state.store import StateStoreUnavailable

    store = PolicyStore(tmp_path / "p.db")

    def store_down(rows: list[AuditRow]) -> None:
        raise StateStoreUnavailable("the database is down")

    monkeypatch.setattr(store, "_insert_audit", store_down)
    failed: list[int] = []

    async def one_call(index: int) -> None:
        try:
            await store.append_audit(AuditRow(float(index), "http", "laptop", "x.y", {}, "low", "ran", None, 1, "ok"))
        except StateStoreUnavailable:
            failed.append(index)

    async with anyio.create_task_group() as group:
        for index in range(10):
            group.start_soon(one_call, index)
    assert sorted(failed) == list(range(10))


def test_prior_answers_tell_an_approval_to_use_and_a_denial_in_one_look(open_store: OpenStore) -> None:
    store = open_store()
    assert store.prior_answers("x.erase", "d1", "local") == PriorAnswers(None, None, None)
    approved = request(store)
    store.decide(approved.id, True, 600, decided_by="cli")
    denied = request(store, digest="d2")
    store.decide(denied.id, False, 600, decided_by="page")
    ready = store.prior_answers("x.erase", "d1", "local")
    assert (ready.ready_id, ready.ready_decided_by, ready.denial) == (approved.id, "cli", None)
    assert store.prior_answers("x.erase", "d1", "laptop").ready_id is None  # another principal's to use
    refused = store.prior_answers("x.erase", "d2", "laptop")  # a denial holds for everyone
    assert refused.ready_id is None
    assert refused.denial is not None and (refused.denial.id, refused.denial.decided_by) == (denied.id, "page")


def test_the_first_answer_wins_and_a_later_one_changes_nothing_it_recorded(open_store: OpenStore) -> None:
    now = [1000.0]
    store = open_store(clock=lambda: now[0])
    approval = request(store)
    decided = store.decide(approval.id, True, 60, decided_by="page")
    assert (decided.status, decided.decided, decided.expires) == ("approved", 1000.0, 1600.0)  # the later expiry
    now[0] += 1
    with pytest.raises(ValueError, match="is approved; only a pending approval can be decided"):
        store.decide(approval.id, False, 60, decided_by="telegram:@mallory (7)")
    assert store.decided_by(approval.id) == "page"
    assert store.get_approval(approval.id).status == "approved"  # type: ignore[union-attr]
    short = request(store, digest="d2")
    assert store.decide(short.id, True, 5000, decided_by="cli").expires == 1001.0 + 5000


HOSTILE_VALUES = [
    "it's",
    "'; DROP TABLE approvals; --",
    "back\\slash \\' and \\\\",
    "$$ dollar $tag$ quotes $$",
    "percent %s %(name)s and ? marks",
    "ünïcödé, emoji \U0001f431 and a right-to-left \u202e mark",
    "semicolon; COMMIT; BEGIN",
]


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_attack_values_that_look_like_sql_are_stored_and_matched_as_written(open_store: OpenStore, value: str) -> None:
    """Approval writes go out bound (client-side where a transaction is sent as one query): a value
    is data, whatever quotes, escapes, placeholders or statements it holds."""
    store = open_store()
    asked = store.request_approval(
        tool="x.erase",
        args_sha256=value,
        args_display={"target": value},
        summary=value,
        risk="high",
        principal=value,
        ttl_seconds=600,
        origin=(value, value),
    )
    assert store.decide(asked.id, True, 600, decided_by=value).status == "approved"
    used = store.consume_approval("x.erase", value, value)
    assert used is not None and used.id == asked.id and used.decided_by == value
    assert (used.summary, used.principal, used.args_display) == (value, value, {"target": value})
    assert store.approval_meta([asked.id])[asked.id] == {"transport": value, "decided_by": value, "client": value}
    assert len(store.list_approvals(include_done=True)) == 1  # nothing else was run
