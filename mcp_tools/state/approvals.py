"""Approvals: who asked to run which exact call, what the person answered, and its use.

Who asked over what and who answered live beside `approvals` (`approval_meta`), and every change of
an approval's status leaves a numbered event, written by the database's own triggers, so no code
path and no process can skip it: servers, the page and Telegram follow the events to learn what
another process decided.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
from dataclasses import dataclass
from typing import Any, Literal

from mcp_tools.state.audit import iso_time
from mcp_tools.state.base import StoreBase

ApprovalStatus = Literal["pending", "approved", "denied", "consumed", "expired", "withdrawn"]

APPROVED_FOR_CALL = (
    "SELECT {columns} FROM approvals WHERE tool=? AND args_sha256=? AND principal=? AND status='approved' "
    "AND expires>? ORDER BY created LIMIT 1"
)
DECIDED_BY_OF_ROW = "(SELECT decided_by FROM approval_meta WHERE approval_meta.approval_id=approvals.id)"
NOTE_ORIGIN = (
    "INSERT INTO approval_meta (approval_id, transport, client) VALUES (?, ?, ?) "
    "ON CONFLICT (approval_id) DO UPDATE SET transport=excluded.transport, client=excluded.client"
)
PENDING_SAME = "tool=? AND principal=? AND status='pending' AND expires>? AND args_sha256=?"
# The approval a call's principal may use (the oldest) and the newest denial of the same call,
# each with who answered; one read for the two questions every high-risk call asks first.
PRIOR_ANSWERS = (
    f"SELECT * FROM (SELECT approvals.*, {DECIDED_BY_OF_ROW} FROM approvals WHERE tool=? AND args_sha256=? "
    "AND principal=? AND status='approved' AND expires>? ORDER BY created LIMIT 1) AS ready UNION ALL "
    f"SELECT * FROM (SELECT approvals.*, {DECIDED_BY_OF_ROW} FROM approvals WHERE tool=? AND args_sha256=? "
    "AND status='denied' AND expires>? ORDER BY decided DESC LIMIT 1) AS denied"
)
APPROVAL_ID_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"


@dataclass(frozen=True)
class Approval:
    id: str
    tool: str
    args_sha256: str
    args_display: dict[str, Any]
    summary: str
    risk: str
    principal: str
    created: float
    expires: float
    status: ApprovalStatus
    decided: float | None
    consumed: float | None
    # Set on a new request only: an earlier approval of the same principal for the same arguments
    # whose target has changed since (another summary or version), so it no longer covers the call.
    superseded: Approval | None = None
    # Set by `consume_approval`: who answered (`approval_meta.decided_by`), read with the check.
    decided_by: str | None = None

    def effective_status(self, now: float) -> ApprovalStatus:
        if self.status in ("pending", "approved") and now >= self.expires:
            return "expired"
        return self.status

    def as_dict(self, now: float) -> dict[str, Any]:
        return {
            "id": self.id,
            "tool": self.tool,
            "summary": self.summary,
            "arguments": self.args_display,
            "risk": self.risk,
            "principal": self.principal,
            "created": iso_time(self.created),
            "expires": iso_time(self.expires),
            "status": self.effective_status(now),
        }


@dataclass(frozen=True)
class PriorAnswers:
    """What the person already said about one exact call (`StateStore.prior_answers`)."""

    ready_id: str | None  # an approved approval the call's principal may use
    ready_decided_by: str | None
    denial: Approval | None  # the newest unexpired denial, with who gave it


def new_approval_id() -> str:
    return "apr-" + "".join(secrets.choice(APPROVAL_ID_ALPHABET) for _ in range(10))


class Approvals(StoreBase):
    """The approvals part of the state store."""

    def request_approval(
        self,
        *,
        tool: str,
        args_sha256: str,
        args_display: dict[str, Any],
        summary: str,
        risk: str,
        principal: str,
        ttl_seconds: float,
        origin: tuple[str, str | None] | None = None,
    ) -> Approval:
        """A pending approval for exactly this call; the principal's unexpired pending one is reused.

        The same read (one round trip) finds an open approval for the same arguments shown but
        another binding (the target changed since): the new one says it supersedes it. `origin`,
        (transport, client), is noted as `note_origin` would, in the same transaction."""
        now = self.clock()
        shown = json.dumps(args_display, ensure_ascii=False)
        approval_id = new_approval_id()
        pending_same = (tool, principal, now, args_sha256)
        # Every statement is written so that none depends on what an earlier one read: a database
        # server gets them, and the COMMIT, in one round trip, and they are read once committed.
        with self._transaction() as db:
            open_ones = db.execute(
                "SELECT * FROM approvals WHERE tool=? AND principal=? AND status IN ('pending','approved') "
                "AND expires>? AND (args_sha256=? OR args_display=?) ORDER BY created DESC LIMIT 8",
                (tool, principal, now, args_sha256, shown),
            )
            reusable = db.execute(
                f"SELECT * FROM approvals WHERE {PENDING_SAME} ORDER BY created DESC LIMIT 1", pending_same
            )
            db.execute(
                "INSERT INTO approvals SELECT ?,?,?,?,?,?,?,?,?,'pending',NULL,NULL "
                f"WHERE NOT EXISTS (SELECT 1 FROM approvals WHERE {PENDING_SAME})",
                (
                    approval_id,
                    tool,
                    args_sha256,
                    shown,
                    summary,
                    risk,
                    principal,
                    now,
                    now + ttl_seconds,
                    *pending_same,
                ),
            )
            if origin is not None:
                db.execute(
                    "INSERT INTO approval_meta (approval_id, transport, client) SELECT id, ?, ? FROM approvals "
                    f"WHERE {PENDING_SAME} ORDER BY created DESC LIMIT 1 ON CONFLICT (approval_id) DO UPDATE "
                    "SET transport=excluded.transport, client=excluded.client",
                    (*origin, *pending_same),
                )
        found = [approval_of_row(row) for row in open_ones.fetchall()]
        superseded = next((a for a in found if a.args_sha256 != args_sha256), None)
        reused = reusable.fetchone()
        if reused is not None:
            return dataclasses.replace(approval_of_row(reused), superseded=superseded)
        # What was written, without reading it back (a round trip to a database server).
        return Approval(
            approval_id,
            tool,
            args_sha256,
            json.loads(shown),
            summary,
            risk,
            principal,
            now,
            now + ttl_seconds,
            "pending",
            None,
            None,
            superseded,
        )

    def prior_answers(self, tool: str, args_sha256: str, principal: str) -> PriorAnswers:
        """What the person already said about this exact call, in one read: the approval its
        principal may use, and the latest unexpired denial."""
        now = self.clock()
        with self._reading() as db:
            rows = db.execute(PRIOR_ANSWERS, (tool, args_sha256, principal, now, tool, args_sha256, now)).fetchall()
        ready = next((row for row in rows if row[9] == "approved"), None)
        denied = next((row for row in rows if row[9] == "denied"), None)
        return PriorAnswers(
            ready_id=None if ready is None else ready[0],
            ready_decided_by=None if ready is None else ready[12],
            denial=None if denied is None else dataclasses.replace(approval_of_row(denied), decided_by=denied[12]),
        )

    def consume_approval(
        self, tool: str, args_sha256: str, principal: str, prior: PriorAnswers | None = None
    ) -> Approval | None:
        """Atomically mark one approved, unexpired approval for this exact call as used.

        Only the principal that asked for it may use it: an approval asked for over HTTP with
        one token is no use to a session holding another. With `prior` (read just before), a call
        that has none takes no further look.
        """
        if prior is None:  # most calls have none: a read, without the write lock
            prior = self.prior_answers(tool, args_sha256, principal)
        if prior.ready_id is None:
            return None
        now = self.clock()
        with self._transaction() as db:  # one statement under the write lock: the check and the use
            used = db.execute(
                "UPDATE approvals SET status='consumed', consumed=? "
                f"WHERE id=({APPROVED_FOR_CALL.format(columns='id')}) AND status='approved' RETURNING *",
                (now, tool, args_sha256, principal, now),
            )
        row = used.fetchone()  # read once committed: the COMMIT goes with the statement
        if row is None:
            return None
        consumed = approval_of_row(row)
        # Who answered cannot change once decided: the check read it, unless a race used that one
        # and this call another.
        decided_by = prior.ready_decided_by if consumed.id == prior.ready_id else self.decided_by(consumed.id)
        return dataclasses.replace(consumed, decided_by=decided_by)

    def decide_approval(self, approval_id: str, approve: bool, ttl_seconds: float) -> Approval:
        """The person's answer; only a pending, unexpired approval can be decided."""
        return self.decide(approval_id, approve, ttl_seconds, decided_by=None)

    def decide(self, approval_id: str, approve: bool, ttl_seconds: float, decided_by: str | None) -> Approval:
        """Like `decide_approval`, recording who answered in the same transaction.

        The write lock makes the check and the update one step across threads and processes:
        when the page, Telegram and the CLI answer at once, exactly one of them wins.
        """
        now = self.clock()
        status = "approved" if approve else "denied"
        with self._transaction() as db:  # the check is the update's own: one round trip with its COMMIT
            changed = db.execute(
                "UPDATE approvals SET status=?, decided=?, expires=CASE WHEN expires>? THEN expires ELSE ? END "
                "WHERE id=? AND status='pending' AND expires>? RETURNING *",
                (status, now, now + ttl_seconds, now + ttl_seconds, approval_id, now),
            )
            if decided_by is not None:
                db.execute(
                    "INSERT INTO approval_meta (approval_id, decided_by) SELECT id, ? FROM approvals "
                    "WHERE id=? AND status=? AND decided=? "
                    "ON CONFLICT (approval_id) DO UPDATE SET decided_by=excluded.decided_by",
                    (decided_by, approval_id, status, now),
                )
        row = changed.fetchone()
        if row is not None:
            return approval_of_row(row)
        current = self.get_approval(approval_id)  # nothing changed: say why
        if current is None:
            raise LookupError(f"no approval with id {approval_id}")
        found = current.effective_status(now)
        raise ValueError(f"approval {approval_id} is {found}; only a pending approval can be decided")

    def consume_approval_id(self, approval_id: str) -> Approval | None:
        """Use one approved, unexpired approval by its id (the call that asked for it waited)."""
        now = self.clock()
        with self._transaction() as db:
            used = db.execute(
                "UPDATE approvals SET status='consumed', consumed=? WHERE id=? AND status='approved' AND expires>? "
                "RETURNING *",
                (now, approval_id, now),
            )
        row = used.fetchone()
        return None if row is None else approval_of_row(row)

    def withdraw_approval(self, approval_id: str) -> bool:
        """The call that asked went away (cancelled): its pending approval can no longer be decided."""
        with self._transaction() as db:
            return (
                db.execute(
                    "UPDATE approvals SET status='withdrawn', decided=? WHERE id=? AND status='pending'",
                    (self.clock(), approval_id),
                ).rowcount
                == 1
            )

    def note_origin(self, approval_id: str, transport: str, client: str | None = None) -> None:
        """Remember over which transport, and from which client, the call that asked came."""
        with self._appending() as db:  # one statement: atomic without the approvals lock
            db.execute(NOTE_ORIGIN, (approval_id, transport, client))

    def decided_by(self, approval_id: str) -> str | None:
        """Who answered an approval (`page`, `cli`, `telegram:@ada (42)`), if that was recorded."""
        return self.approval_meta([approval_id]).get(approval_id, {}).get("decided_by")

    def approval_meta(self, approval_ids: list[str]) -> dict[str, dict[str, str | None]]:
        """`{id: {"transport", "decided_by", "client"}}` for the approvals that have any."""
        if not approval_ids:
            return {}
        marks = ",".join("?" * len(approval_ids))
        with self._reading() as db:
            rows = db.execute(
                f"SELECT approval_id, transport, decided_by, client FROM approval_meta WHERE approval_id IN ({marks})",
                approval_ids,
            ).fetchall()
        return {row[0]: {"transport": row[1], "decided_by": row[2], "client": row[3]} for row in rows}

    def events_since(self, seq: int, limit: int = 200) -> list[tuple[int, str, str]]:
        """`(seq, approval_id, status)` for every status change after `seq`, oldest first."""
        with self._reading() as db:
            return [
                (row[0], row[1], row[2])
                for row in db.execute(
                    "SELECT seq, approval_id, status FROM approval_events WHERE seq>? ORDER BY seq LIMIT ?",
                    (seq, limit),
                ).fetchall()
            ]

    def last_event(self) -> int:
        with self._reading() as db:
            row = db.execute("SELECT MAX(seq) FROM approval_events").fetchone()
        return int(row[0] or 0)

    def get_approval(self, approval_id: str) -> Approval | None:
        with self._reading() as db:
            row = db.execute("SELECT * FROM approvals WHERE id=?", (approval_id,)).fetchone()
        return None if row is None else approval_of_row(row)

    def count_pending(self, principal: str | None = None) -> int:
        """How many approvals wait for an answer (pending and unexpired), of one principal if given."""
        with self._reading() as db:
            row = db.execute(
                "SELECT COUNT(*) FROM approvals WHERE status='pending' AND expires>? "
                "AND (CAST(? AS TEXT) IS NULL OR principal=?)",
                (self.clock(), principal, principal),
            ).fetchone()
        return int(row[0])

    def pending_approvals(self, offset: int = 0, limit: int = 25, principal: str | None = None) -> list[Approval]:
        """One page of the approvals that wait for an answer, newest first, of one principal if given."""
        with self._reading() as db:
            rows = db.execute(
                "SELECT * FROM approvals WHERE status='pending' AND expires>? "
                "AND (CAST(? AS TEXT) IS NULL OR principal=?) "
                "ORDER BY created DESC, id LIMIT ? OFFSET ?",
                (self.clock(), principal, principal, limit, offset),
            ).fetchall()
        return [approval_of_row(row) for row in rows]

    def list_approvals(self, include_done: bool = False, limit: int = 50) -> list[Approval]:
        now = self.clock()
        with self._reading() as db:
            if include_done:
                rows = db.execute("SELECT * FROM approvals ORDER BY created DESC LIMIT ?", (limit,))
            else:
                rows = db.execute(
                    "SELECT * FROM approvals WHERE status IN ('pending','approved') AND expires>? "
                    "ORDER BY created DESC LIMIT ?",
                    (now, limit),
                )
            return [approval_of_row(row) for row in rows.fetchall()]


def approval_of_row(row: tuple[Any, ...]) -> Approval:
    return Approval(
        id=row[0],
        tool=row[1],
        args_sha256=row[2],
        args_display=json.loads(row[3]),
        summary=row[4],
        risk=row[5],
        principal=row[6],
        created=row[7],
        expires=row[8],
        status=row[9],
        decided=row[10],
        consumed=row[11],
    )
