"""Every table of the state takes any text a caller can send, on both engines.

NUL (PostgreSQL's text refuses it), lone surrogates (UTF-8 cannot hold them), bidi controls, very
long text, backslashes, quotes, and text that is not JSON in the columns that hold JSON: each is
stored, made storable the same way on both engines, and found again by what it was written as."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_tools.approvals.telegram import Ledger, SentMessage
from mcp_tools.state.oauth import OAuthStore
from mcp_tools.state.storable import storable_text
from mcp_tools.state.store import AuditRow, StateStore

SPECIAL = [
    "\x00",
    "a\x00b",
    "\ud800",
    "\udfff",
    "\ud83d\ude00",  # a pair written as two code points: still two lone surrogates to UTF-8
    "\udcff\x00\\u0000",
    "\u202e\u2066bidi\u2069\u202c",
    "\\",
    "\\\\\\",
    "'\"`;--",
    "{not json",
    '{"a": ',
    "\ufeff\u200b\u2028\u2029",
    "\U0010ffff\U0001f600",
    "x" * 20_000,
    "\x00" * 300,
    "",
]
AWKWARD = st.one_of(
    st.sampled_from(SPECIAL),
    st.text(alphabet=st.characters(exclude_categories=()), max_size=40),
)
serial = itertools.count()


def same_json(stored: Any, written: Any) -> bool:
    """JSON text keeps any string (NUL and surrogates as escapes): what comes back is what went in,
    up to a surrogate pair read back as the one character it spells."""
    return json.dumps(stored) == json.dumps(written)


@pytest.fixture
def store(open_store: Callable[..., StateStore]) -> StateStore:
    return open_store()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=AWKWARD)
def test_approvals_tickets_events_and_origins_take_any_text(store: StateStore, text: str) -> None:
    n = next(serial)
    tool, principal = f"{text}{n}", f"p{text}{n}"
    approval = store.request_approval(
        tool=tool,
        args_sha256=text,
        args_display={text: [text, {"k": text}]},
        summary=text,
        risk="high",
        principal=principal,
        ttl_seconds=600,
        origin=(text, text),
    )
    stored = store.get_approval(approval.id)
    assert stored is not None
    assert (stored.tool, stored.summary, stored.principal) == tuple(map(storable_text, (tool, text, principal)))
    assert same_json(stored.args_display, {text: [text, {"k": text}]})
    assert store.approval_meta([approval.id])[approval.id]["transport"] == storable_text(text)
    ticket = f"t{n}{text}"
    store.issue_ticket(approval, ticket, 600)
    assert store.check_ticket(approval.id, ticket, principal, use=False, max_failures=5).id == approval.id
    store.decide(approval.id, True, 600, decided_by=text)
    assert store.decided_by(approval.id) == storable_text(text)
    used = store.consume_approval(tool, text, principal)
    assert used is not None and used.id == approval.id
    assert any(event[1] == approval.id for event in store.events_since(0, 10_000))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=AWKWARD)
def test_audit_page_sessions_toolsets_rates_and_nonces_take_any_text(store: StateStore, text: str) -> None:
    n = next(serial)
    row = AuditRow(1.0, text, text, text, {text: text, "k": [text]}, text, text, text, 1.0, text, text)
    store.record(row)
    [back] = store.tail(1)
    assert back.tool == storable_text(text) and back.answered_by == storable_text(text)
    assert same_json(back.args, {text: text, "k": [text]})
    cookie = f"c{n}{text}"
    store.add_page_session(cookie, 600, principal=text)
    session = store.page_session(cookie)
    assert session is not None and session[1] == storable_text(text)
    store.enable_tools(f"{text}{n}", {text, "x"}, namespace=text)
    assert store.enabled_tools(f"{text}{n}", text) == {storable_text(text), "x"}
    assert store.spend_calls(f"{text}{n}", 1, 100) is None
    assert store.use_nonce(f"{text}{n}", 600) and not store.use_nonce(f"{text}{n}", 600)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=AWKWARD)
def test_oauth_rows_and_the_telegram_ledger_take_any_text(
    store: StateStore, text: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    n = next(serial)
    oauth = OAuthStore(store)
    client_id = f"{text}{n}"
    oauth.put_client(client_id, {"name": text, text: text})
    assert same_json(oauth.get_client(client_id), {"name": text, text: text})
    oauth.put_request(f"r{n}", {"client_id": client_id, "text": text}, 600)
    assert same_json(oauth.take_request(f"r{n}"), {"client_id": client_id, "text": text})
    oauth.put_grant(f"g{n}", "access", client_id, text, {"scope": text}, 600)
    grant = oauth.get_grant(f"g{n}", "access")
    assert grant is not None and same_json(grant[0], {"scope": text})
    ledger = Ledger(store)  # in the store's own tables, on either engine
    message = SentMessage(text, 1, n, text, 9e9)
    ledger.record(f"nonce{n}", message)  # nonces are the server's own (hex); the rest is text
    found = ledger.by_nonce(f"nonce{n}")
    assert found is not None and found.text == storable_text(text) and found.approval_id == storable_text(text)
    assert ledger.knows(text)
