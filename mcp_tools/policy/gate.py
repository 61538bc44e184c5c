"""The policy gate: every tool call passes here between the MCP server and the namespace handler.

low runs; medium runs and says so; high runs only after the person confirmed it (through the
client, or out of band with `mcp-tools approvals approve`); deny never runs. Every call, run
or not, leaves one audit row.

The gate composes the stages of `mcp_tools.policy.stages` (the table there says what each one
does), once per tool, and runs each call through them; the values the transports share are in
`mcp_tools.policy.calls`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from mcp_tools.core.config import PolicySettings
from mcp_tools.core.holders import CALLING
from mcp_tools.core.tooling import Risk, ToolFailure, ToolSpec
from mcp_tools.inventory.chain import call_refusal
from mcp_tools.policy.calls import (
    Answer,
    Asker,
    AskLater,
    BoundTool,
    Call,
    Caller,
    CallOutcome,
    ConfirmationRequest,
    ConfirmationWatch,
    Decision,
    DeferredQuestion,
    Verdict,
    Waiting,
    arguments_digest,
    failure_outcome,
    store_unavailable,
)
from mcp_tools.policy.result_budget import DEFAULT_MAX_RESULT_TOKENS
from mcp_tools.policy.rules import RulePolicy
from mcp_tools.policy.stages import Chain, Stage, settle
from mcp_tools.policy.stages.arguments import Shape, UnicodeText, Validate, describe_validation_error, shape_refusal
from mcp_tools.policy.stages.assess import AssessRisk, Precheck, Prepare
from mcp_tools.policy.stages.audit import Audit
from mcp_tools.policy.stages.confirm import Confirm, approval_required
from mcp_tools.policy.stages.outgoing import Budget, Scrub, outgoing
from mcp_tools.policy.stages.reach import ArgumentReach, Visibility
from mcp_tools.policy.stages.run import Run
from mcp_tools.policy.stages.run import guarded_progress as _guarded_progress
from mcp_tools.state.store import StateStore
from mcp_tools.util.text import utf8_safe

if TYPE_CHECKING:
    from mcp_tools.policy.channels import OutOfBand

__all__ = [
    "Answer",
    "AskLater",
    "Asker",
    "BoundTool",
    "CallOutcome",
    "Caller",
    "ConfirmationRequest",
    "ConfirmationWatch",
    "PolicyGate",
    "Waiting",
    "_guarded_progress",
    "approval_required",
    "arguments_digest",
    "describe_validation_error",
    "failure_outcome",
    "outgoing",
    "store_unavailable",
]


class PolicyGate:
    """Runs every call through the stages; one instance serves every transport.

    `tools` holds every running tool by canonical name, filled in by composition: a handler's
    `ctx.call_tool` finds the other namespace's tool there and the call passes this gate again
    as the same caller (rules, `read_only`, precheck, confirmation, audit row).
    """

    def __init__(
        self,
        settings: PolicySettings,
        rules: RulePolicy,
        store: StateStore,
        out_of_band: OutOfBand | None = None,
        max_result_tokens: int = DEFAULT_MAX_RESULT_TOKENS,
    ) -> None:
        self.settings = settings
        self.max_result_tokens = max_result_tokens
        self.rules = rules
        self.store = store
        self.out_of_band = out_of_band
        self.tools: dict[str, BoundTool] = {}
        self.audit = Audit(settings, store)
        # Outermost first, as Starlette lists middleware; `mcp_tools.policy.stages` says what each does.
        self.stages: tuple[Stage, ...] = (
            self.audit,
            Budget(max_result_tokens),
            Scrub(),
            Visibility(rules),
            Shape(),
            UnicodeText(),
            Validate(),
            ArgumentReach(self),
            Prepare(self),
            AssessRisk(rules),
            Precheck(),
            Confirm(settings, store, out_of_band, self.audit, rules),
            Run(store, self),
        )
        self.chains: dict[tuple[int, Risk, bool, bool], tuple[ToolSpec[Any, Any, Any], Chain]] = {}

    def chain(self, tool: BoundTool, nested: bool = False, scoped: bool = False) -> Chain:
        """The stages a call of `tool` passes, composed once per tool: those that do nothing for it
        (or for a caller without OAuth scopes, unless `scoped`) left out."""
        key = (id(tool.spec), tool.configured_risk, nested, scoped)
        known = self.chains.get(key)
        if known is None or known[0] is not tool.spec:
            known = tool.spec, Chain.of(self.stages, tool, nested, scoped)
            self.chains[key] = known
        return known[1]

    def unreachable(self, name: str) -> ToolFailure | None:
        """Why another namespace's tool cannot be called through the gate now, or None when it can."""
        target = self.tools.get(name)
        if target is None:
            return ToolFailure("not_configured", f"{name} is not running here (its namespace is off)")
        hidden = call_refusal(self.rules, target.spec)
        return None if hidden is None else ToolFailure("denied_by_policy", hidden.denial)

    async def refuse(self, name: str, failure: ToolFailure, caller: Caller, raw_args: Any = None) -> CallOutcome:
        """A call the catalog found no tool for (`mcp_tools.inventory.catalog`): its audit row, and the
        answer, which is the failure as recorded."""
        started = time.perf_counter()
        kept = isinstance(raw_args, dict) and shape_refusal(name, raw_args) is None  # else the row says nothing of them
        answer = outgoing(failure_outcome(failure), name)
        # the row is stored as UTF-8
        verdict = Verdict(Decision.DENIED, args=utf8_safe(raw_args) if kept else {}, outcome=answer)
        if not await self.audit.append(caller, utf8_safe(name), verdict, started):
            return failure_outcome(store_unavailable())
        return answer

    async def call(
        self,
        tool: BoundTool,
        name: str,
        raw_args: Any,
        caller: Caller,
        *,
        via: BoundTool | None = None,
    ) -> CallOutcome:
        """One call, start to audit row; `via` is the tool whose handler made this call (`ctx.call_tool`).

        `name` is the name the call was written with; the catalog resolved it to `tool`.
        """
        calling = CALLING.set(caller.principal)  # whose accounts its hooks use (`mcp_tools.core.holders`)
        try:
            return await self._call(tool, name, raw_args, caller, via)
        finally:
            CALLING.reset(calling)

    async def _call(
        self, tool: BoundTool, name: str, raw_args: Any, caller: Caller, via: BoundTool | None
    ) -> CallOutcome:
        chain = self.chain(tool, via is not None, caller.reaches is not None)
        args = raw_args if isinstance(raw_args, dict) else {}  # what the row says of them until validated
        call = Call(tool, tool.spec.name, caller, raw_args, time.perf_counter(), via, Verdict(args=args))
        try:
            for stage in chain.entering:
                step = await stage.enter(call)
                if isinstance(step, Verdict):
                    verdict = step
                    break
                call = step
            else:
                raise RuntimeError(f"no stage answered the call of {call.name}")
        except DeferredQuestion as deferred:  # a nested call's question: asked in the transport's round trip
            return CallOutcome(text="", ask_later=deferred.ask_later)
        except Exception as exc:  # settled as the call stood when it failed
            verdict = settle(call, exc)
        for leaving in chain.leaving:
            verdict = await leaving.leave(call, verdict)
        assert verdict.outcome is not None, "every verdict has its answer"
        return verdict.outcome
