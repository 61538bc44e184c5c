"""The outermost stage: every call, run or not, leaves one audit row, built from the verdict the
rest of the chain returns, and one count in the metrics."""

from __future__ import annotations

import logging
import time
from dataclasses import replace

from mcp_tools.core.config import PolicySettings
from mcp_tools.core.tooling import Risk
from mcp_tools.policy.accounts import audited_account
from mcp_tools.policy.calls import (
    BoundTool,
    Call,
    Caller,
    CallOutcome,
    Decision,
    Verdict,
    failure_outcome,
    store_unavailable,
)
from mcp_tools.policy.redact import redact
from mcp_tools.state.store import AuditRow, StateStore, StateStoreUnavailable
from mcp_tools.util import metrics

logger = logging.getLogger("mcp_tools.policy")
LABELS = {risk: risk.label for risk in Risk}  # the audit row's words for each risk, made once

CANCELLED = {"error": {"kind": "cancelled"}}


class Audit:
    """Writes the call's row (batched with the calls finishing beside it) and answers only once
    it is kept: a result whose row cannot be kept is not given out (`unavailable`), except that
    of a call that may have changed something, whose row waits in the local spool."""

    def __init__(self, settings: PolicySettings, store: StateStore) -> None:
        self.settings = settings
        self.store = store

    def applies(self, tool: BoundTool, nested: bool, scoped: bool = False) -> bool:
        return True

    async def leave(self, call: Call, verdict: Verdict) -> Verdict:
        if verdict.outcome is None or verdict.outcome.ask_later is not None:
            return verdict  # asked in the transport's round trip: the retried call leaves the row
        if not await self.append(call.caller, call.name, verdict, call.started, account_of(call)):
            # Only a low call gets here with the store down (anything else checked it before it
            # ran), and a low call changes nothing: a result without its audit row is not given out.
            logger.warning("%s answered unavailable: its audit row could not be written", call.name)
            verdict = replace(verdict, outcome=failure_outcome(store_unavailable()))
        return verdict

    async def append(
        self, caller: Caller, tool: str, verdict: Verdict, started: float, account: str | None = None
    ) -> bool:
        """Write the row; False when the state store cannot keep it (nor the spool, where it may)."""
        row = self.row(caller, tool, verdict, started, account)
        try:
            await self.store.append_audit(row)
        except Exception as exc:
            return self.not_written(row, verdict, exc)
        return True

    def record_now(
        self, caller: Caller, tool: str, verdict: Verdict, started: float, account: str | None = None
    ) -> bool:
        """Write the row at once (a cancelled call cannot wait for the batch)."""
        row = self.row(caller, tool, verdict, started, account)
        try:
            self.store.record(row)
        except Exception as exc:
            return self.not_written(row, verdict, exc)
        return True

    def withdrawn(self, call: Call, approval_id: str | None) -> None:
        """The row of a call the client cancelled while the person was being asked."""
        cancelled = CallOutcome(text="", structured=CANCELLED, is_error=True)
        verdict = call.ends(cancelled, decision=Decision.WITHDRAWN, approval_id=approval_id)
        self.record_now(call.caller, call.name, verdict, call.started, account_of(call))

    def row(self, caller: Caller, tool: str, verdict: Verdict, started: float, account: str | None = None) -> AuditRow:
        """The row, counted in the metrics as it is made; `account`: the accounts the call acted as."""
        answer = verdict.outcome
        error = answer.structured.get("error") if answer and answer.is_error and answer.structured else None
        outcome = error["kind"] if error else "ok"
        risk = LABELS[verdict.risk] if verdict.risk else None
        elapsed = time.perf_counter() - started
        metrics.current().call(tool, risk, outcome, elapsed)
        return AuditRow(
            ts=time.time(),
            transport=caller.transport,
            principal=caller.principal,
            tool=tool,
            args=redact(verdict.args, self.settings.audit_max_chars),
            risk=risk,
            decision=verdict.decision.value,
            approval_id=verdict.approval_id,
            duration_ms=(time.perf_counter() - started) * 1000,
            outcome=outcome,
            answered_by=verdict.answered_by,
            account=account,
        )

    def not_written(self, row: AuditRow, verdict: Verdict, exc: Exception) -> bool:
        """Whether the call's answer may go out without its row in the store.

        A call that may have changed something (medium or high, run after the store answered its
        check) keeps its row in the local spool and its answer, since withholding it would tell the
        model it did not run; anything else, or a row the spool cannot keep either, gets False (the
        caller answers `unavailable`): no call is reported done without its row kept durably."""
        if not isinstance(exc, StateStoreUnavailable):
            logger.error("the state store refused the audit row for %s", row.tool, exc_info=exc)
        if verdict.ran and verdict.risk is not None and verdict.risk > Risk.LOW and self.spooled(row):
            logger.warning("%s ran but its audit row could not be stored; it waits in the local spool", row.tool)
            return True
        return False

    def spooled(self, row: AuditRow) -> bool:
        try:
            return self.store.spool_audit(row)
        except OSError as exc:  # the disk too: the caller answers unavailable
            logger.error("could not keep the audit row of %s in the spool: %s", row.tool, exc.strerror or exc)
            return False


def account_of(call: Call) -> str | None:
    """The accounts a call acted as, as its tool resolved them (None before its arguments were
    valid, or for a tool without accounts)."""
    return None if call.tool.spec.accounts is None else audited_account(call.tool.spec, call.args)
