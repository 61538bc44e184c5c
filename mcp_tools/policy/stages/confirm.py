"""The confirmation of a high-risk call: a matching approval already given is used up; else the
person is asked in the client (`Asker`), or an approval is stored, announced on the out-of-band
channels, and the call waits for the answer there, or answers `approval_required`. After an
answer that took the person time, the target is looked at again, and the call runs only if it
is still what they were shown.

The seam for callers that run calls in the background (MCP tasks): a `Caller.watch`
(`ConfirmationWatch`) hears `waiting(Waiting)` when the call starts waiting for the person and
`resumed(Waiting)` when the wait ends, and may hold the wait for as long as the approval lives.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio

from mcp_tools.core.config import PolicySettings
from mcp_tools.core.tooling import Risk, ToolFailure
from mcp_tools.policy import hooks
from mcp_tools.policy.accounts import AccountRules
from mcp_tools.policy.calls import (
    Answer,
    Asker,
    AskLater,
    BoundTool,
    Call,
    CallOutcome,
    ConfirmationRequest,
    Decision,
    Verdict,
    Waiting,
    arguments_digest,
)
from mcp_tools.policy.redact import redact
from mcp_tools.policy.stages import settle
from mcp_tools.policy.stages.audit import Audit
from mcp_tools.state.store import Approval, StateStore, iso_time
from mcp_tools.util import metrics
from mcp_tools.util.secrets import scrub_text
from mcp_tools.util.text import utf8_safe

if TYPE_CHECKING:
    from mcp_tools.policy.channels import OutOfBand
    from mcp_tools.policy.rules import RulePolicy

DECLINE_REASONS = {
    Answer.DECLINE: "the person declined it",
    Answer.CANCEL: "the person dismissed the confirmation",
    Answer.TIMEOUT: "the confirmation timed out without an answer",
}


class Confirm:
    """High risk runs only once the person said yes; anything else is the answer instead."""

    def __init__(
        self,
        settings: PolicySettings,
        store: StateStore,
        out_of_band: OutOfBand | None,
        audit: Audit,
        rules: RulePolicy | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.out_of_band = out_of_band
        self.audit = audit  # a call cancelled while it waits still leaves its row
        # a rule naming an account can make a lower tool high for that account
        self.accounts = AccountRules.of(rules) if rules is not None else None

    def applies(self, tool: BoundTool, nested: bool, scoped: bool = False) -> bool:
        if tool.configured_risk >= Risk.HIGH or tool.spec.dynamic_risk is not None:
            return True
        return self.accounts is not None and self.accounts.may_raise_to(tool.spec, Risk.HIGH)

    async def enter(self, call: Call) -> Call | Verdict:
        if call.verdict.risk is not Risk.HIGH:
            return call
        return await self.decide(call)

    async def decide(self, call: Call) -> Call | Verdict:
        """The call to run, with who allowed it, or the answer to give instead of running."""
        caller = call.caller
        try:
            request = self.question(call)
            # An approval covers what the person was shown: a target that changed since (another
            # size, another time) gets a new question, never the old answer.
            prior = self.store.prior_answers(call.name, request.args_sha256, caller.principal)
            consumed = self.store.consume_approval(call.name, request.args_sha256, caller.principal, prior)
        except Exception as exc:
            return settle(call, exc)
        if consumed is not None:
            by = consumed.decided_by or "out_of_band"
            return call.deciding(decision=Decision.APPROVED_OUT_OF_BAND, approval_id=consumed.id, answered_by=by)
        asker = caller.asker_now()
        if asker is not None:
            return await self.ask(call, asker, request)
        denial = prior.denial
        if denial is not None:
            failure = ToolFailure(
                "declined_by_user",
                f"{call.name} was not run: the person denied approval {denial.id} for these arguments.",
                "Do not retry; ask the person what they want instead.",
            )
            by = denial.decided_by or "out_of_band"
            return call.refused(failure, Decision.DECLINED, approval_id=denial.id, answered_by=by)
        if self.settings.on_no_elicitation == "deny":
            return call.refused(
                ToolFailure(
                    "denied_by_policy",
                    f"{call.name} needs the person's confirmation and this client cannot ask for it.",
                    "Use a client that supports elicitation, or set policy.on_no_elicitation = "
                    '"approve_out_of_band" to allow approvals with `mcp-tools approvals approve`.',
                )
            )
        return await self.out_of_band_approval(call, request)

    def question(self, call: Call) -> ConfirmationRequest:
        """What the person is asked; its digest covers the arguments and what they are shown."""
        seen = self.seen(call, call.facts)
        digest = arguments_digest(call.name, call.verdict.args, seen)
        shown = redact(call.verdict.args, self.settings.audit_max_chars)
        return ConfirmationRequest(call.name, Risk.HIGH, seen[0], shown, digest)

    async def ask(self, call: Call, asker: Asker, request: ConfirmationRequest) -> Call | Verdict:
        """Ask in the client; the transport may ask in its own round trip instead (`AskLater`)."""
        by = getattr(asker, "channel", None) or f"elicitation:{call.caller.transport}"
        wait = Waiting(call.name, request.summary, by)
        watch = call.caller.watch
        try:
            if watch is not None:
                await watch.waiting(wait)
            answer = await asker.ask(request)
            if watch is not None:
                await watch.resumed(wait)
        except ToolFailure as pending:
            if pending.kind == "approval_required":  # the asker left an approval pending (URL mode)
                return call.refused(pending, Decision.APPROVAL_REQUIRED)
            return settle(call, pending)
        except Exception as exc:
            return settle(call, exc)
        if isinstance(answer, AskLater):
            return call.ends(CallOutcome(text="", ask_later=answer))
        by = getattr(asker, "channel", None) or by  # an asker may learn only on the answer who gave it
        if answer is Answer.ACCEPT:
            metrics.current().approval("elicitation", "approved")
            return await self.looked_again(call.deciding(decision=Decision.CONFIRMED, answered_by=by))
        metrics.current().approval("elicitation", "denied")
        failure = ToolFailure(
            "declined_by_user",
            f"{call.name} was not run: {DECLINE_REASONS[answer]}.",
            "Do not retry on your own; ask the person what they want instead.",
        )
        return call.refused(failure, Decision.DECLINED, answered_by=by)

    async def out_of_band_approval(self, call: Call, request: ConfirmationRequest) -> Call | Verdict:
        """A pending approval, announced on the channels; the call waits for it when one reaches
        the person (or its watch holds it), else answers `approval_required`."""
        caller = call.caller
        try:
            approval = self.store.request_approval(
                tool=call.name,
                args_sha256=request.args_sha256,
                args_display=request.arguments,
                summary=request.summary,
                risk=Risk.HIGH.label,
                principal=caller.principal,
                ttl_seconds=self.settings.approval_ttl_seconds,
                origin=(caller.transport, caller.client),
            )
        except Exception as exc:
            return settle(call, exc)
        pending = call.deciding(decision=Decision.APPROVAL_REQUIRED, approval_id=approval.id)
        out_of_band = self.out_of_band
        hold = caller.watch is not None and caller.watch.hold_while_approval_lives
        try:
            if out_of_band is not None and out_of_band.reaches_person:
                await out_of_band.announce(approval, request.message(), caller.transport, caller.client)
            if out_of_band is not None and (hold or (out_of_band.reaches_person and out_of_band.wait_seconds > 0)):
                return await self.wait_for_person(pending, approval, out_of_band, hold)
        except Exception as exc:
            return settle(pending, exc)
        places = out_of_band.places(approval.id) if out_of_band else None
        return pending.refused(approval_required(approval, pending.wire_name, places), Decision.APPROVAL_REQUIRED)

    async def wait_for_person(
        self, pending: Call, approval: Approval, out_of_band: OutOfBand, hold: bool
    ) -> Call | Verdict:
        """Hold the call open until the person answers on a channel.

        Progress notifications every few seconds keep the client from timing out. A cancelled
        request withdraws the approval, so a late press cannot run anything.
        """
        caller = pending.caller
        total = max(0.0, approval.expires - self.store.clock()) if hold else out_of_band.wait_seconds

        async def tick(elapsed: float) -> None:
            if caller.progress is not None:
                left = max(0, round(total - elapsed))
                await caller.progress(
                    elapsed, total, f"Waiting for the person to approve {approval.id} ({left} s left)"
                )

        await tick(0.0)
        watch = caller.watch
        wait = (
            None
            if watch is None
            else Waiting(pending.name, approval.summary, "out_of_band", approval.id, approval.expires)
        )
        if watch is not None and wait is not None:
            await watch.waiting(wait)
        try:
            answer = await out_of_band.decisions.wait(approval.id, total, tick, out_of_band.progress_interval)
        except anyio.get_cancelled_exc_class():
            out_of_band.decisions.withdraw(approval.id)
            self.audit.withdrawn(pending, approval.id)
            raise
        if watch is not None and wait is not None:
            await watch.resumed(wait)
        if answer == "approved" and self.store.consume_approval_id(approval.id) is not None:
            try:
                by = self.store.decided_by(approval.id) or "out_of_band"
            except Exception as exc:
                return settle(pending.deciding(decision=Decision.APPROVED_OUT_OF_BAND), exc)
            return await self.looked_again(pending.deciding(decision=Decision.APPROVED_OUT_OF_BAND, answered_by=by))
        if answer == "denied":
            try:
                by = self.store.decided_by(approval.id) or "out_of_band"
            except Exception as exc:
                return settle(pending.deciding(decision=Decision.DECLINED), exc)
            failure = ToolFailure(
                "declined_by_user",
                f"{approval.tool} was not run: the person denied approval {approval.id}.",
                "Do not retry; ask the person what they want instead.",
            )
            return pending.refused(failure, Decision.DECLINED, answered_by=by)
        return pending.refused(
            approval_required(approval, pending.wire_name, out_of_band.places(approval.id)), Decision.APPROVAL_REQUIRED
        )

    def seen(self, call: Call, facts: Any) -> tuple[str, ...]:
        """What the person is shown of a call: the summary, and the version of its target when the
        tool's checks found one (a file's size and time, not shown but part of what was seen)."""
        spec = call.tool.spec
        summary = hooks.summary(spec, call.args, facts)
        if call.via is not None:
            summary += f" (for {call.via.spec.name})"
        summary = utf8_safe(scrub_text(summary))
        version = hooks.target_version(facts)
        return (summary,) if version is None else (summary, version)

    async def looked_again(self, call: Call) -> Call | Verdict:
        """After the person took time to answer: look at the target again, and run only if it is
        still what they were shown (a tool without facts has nothing to look at)."""
        if call.tool.spec.facts is None:
            return call
        try:
            return replace(call, facts=await self.still_as_shown(call))
        except Exception as exc:
            return settle(call, exc)

    async def still_as_shown(self, call: Call) -> Any:
        """The facts as they are now, or a failure saying what changed."""
        tool, spec = call.tool, call.tool.spec
        shown = self.seen(call, call.facts)
        fresh = copy.copy(call.facts)
        try:
            await hooks.risk_for(spec, tool.service, call.args, fresh)
            await hooks.check(spec, tool.service, call.args, fresh)
        except ToolFailure as failure:
            raise ToolFailure(
                failure.kind,
                f"{spec.name} was not run: while the person was deciding, this changed: {failure.message}",
                failure.hint,
            ) from None
        now = self.seen(call, fresh)
        if now != shown:
            raise ToolFailure(
                "conflict",
                f"{spec.name} was not run: its target changed while the person was deciding "
                f"(they were shown: {shown[0]}; now: {now[0]}).",
                "Call it again so the person is asked about it as it is now.",
            )
        return fresh


def approval_required(approval: Approval, wire_name: str, places: str | None = None) -> ToolFailure:
    from mcp_tools.util.commands import mcp_tools

    minutes = max(1, round((approval.expires - approval.created) / 60))
    ask = f"approve it {places} or run" if places else "run"
    earlier = approval.superseded
    changed = (
        f" An earlier approval, {earlier.id}, was for: {earlier.summary}; what the call acts on has changed since,"
        " so that approval no longer covers it."
        if earlier is not None
        else ""
    )
    return ToolFailure(
        "approval_required",
        f"{approval.tool} needs the person's approval before it runs ({approval.summary}). Approval id: {approval.id}."
        + changed,
        f"Ask the person to {ask} `{mcp_tools('approvals', 'approve', approval.id)}` (it expires in about {minutes} "
        f"minutes), then call {wire_name} again with exactly the same arguments.",
        details={"approval_id": approval.id, "expires": iso_time(approval.expires)},
    )
