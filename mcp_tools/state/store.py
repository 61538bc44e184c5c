"""`StateStore`: everything the server keeps between calls and shares between processes.

It is composed of one part per thing kept: approvals and their events (`approvals`), sign-ins and
approval-card tickets (`sessions`), the tools each principal enabled (`enabled`), counters of calls
and requestState nonces (`limits`), the audit log (`audit`) and the Google accounts each
principal signed in (`google_tokens`). The OAuth server's tables have
their own interface over the same store (`mcp_tools.state.oauth`). An engine supplies the
connections: `mcp_tools.state.sqlite.PolicyStore` (one SQLite file, the default) or
`mcp_tools.state.postgres.PostgresStateStore` (a database several replicas share). Both build
their schema from the numbered migrations of `mcp_tools.state.migrations`.
"""

from __future__ import annotations

from mcp_tools.state.approvals import Approval, Approvals, ApprovalStatus, PriorAnswers, new_approval_id
from mcp_tools.state.audit import AuditLog, AuditRow, iso_time
from mcp_tools.state.base import Connection, Cursor
from mcp_tools.state.enabled import EnabledTools
from mcp_tools.state.errors import StateStoreError, StateStoreUnavailable
from mcp_tools.state.google_tokens import GoogleTokens
from mcp_tools.state.limits import Limits
from mcp_tools.state.sessions import MAX_LIVE_TICKETS, Sessions, TicketRefused

__all__ = [
    "MAX_LIVE_TICKETS",
    "Approval",
    "ApprovalStatus",
    "AuditRow",
    "Connection",
    "Cursor",
    "PriorAnswers",
    "StateStore",
    "StateStoreError",
    "StateStoreUnavailable",
    "TicketRefused",
    "iso_time",
    "new_approval_id",
]


class StateStore(Approvals, Sessions, EnabledTools, Limits, GoogleTokens, AuditLog):
    """Approvals, sign-ins, enabled tools, limits, audit rows and Google tokens; safe to share between threads
    and processes.

    Queries are written once, with `?` placeholders; an implementation supplies connections
    through `_transaction` (writes: one at a time across every process) and `_reading`. The
    cursors of a transaction can be read after it commits: a transaction that reads only then
    is one round trip to a database server.
    """
