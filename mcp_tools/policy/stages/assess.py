"""The stages where the tool's own hooks look at the call before it runs: `prepare` (what the
call acts on, gathered once into its facts), the effective risk (`dynamic_risk`, a dry run,
`deny`) and `precheck` (a failed precondition is the answer, and nobody is asked)."""

from __future__ import annotations

from dataclasses import replace

from mcp_tools.core.tooling import Risk, ToolFailure
from mcp_tools.policy import hooks
from mcp_tools.policy.accounts import AccountRules
from mcp_tools.policy.calls import BoundTool, Call, Decision, Verdict
from mcp_tools.policy.rules import RulePolicy, effective_risk
from mcp_tools.policy.stages import Gateway
from mcp_tools.policy.stages.run import context_for


class Prepare:
    """The tool's `prepare`, for a tool that has one: what the call acts on, gathered into its
    facts with the call's context; a failure there is the answer (`precheck_failed`)."""

    def __init__(self, gate: Gateway) -> None:
        self.gate = gate

    def applies(self, tool: BoundTool, nested: bool, scoped: bool = False) -> bool:
        return tool.spec.prepare is not None

    async def enter(self, call: Call) -> Call | Verdict:
        context = context_for(call, self.gate)
        try:
            await hooks.gather(call.tool.spec, call.tool.service, call.args, context, call.facts)
        except ToolFailure as failure:
            return call.refused(failure, Decision.PRECHECK_FAILED)
        return replace(call, context=context)


class AssessRisk:
    """The effective risk: the configured one, raised by the tool's `dynamic_risk`, low for a dry
    run (`preview`); `deny` is refused here."""

    def __init__(self, rules: RulePolicy | None = None) -> None:
        # Only a rule of the person's that names an account (`gmail.send@work`) and the tool makes a
        # call's account matter; without one, no call looks at its account here.
        self.accounts = AccountRules.of(rules) if rules is not None else None
        self.names_accounts = bool(self.accounts)

    def applies(self, tool: BoundTool, nested: bool, scoped: bool = False) -> bool:
        return True

    async def enter(self, call: Call) -> Call | Verdict:
        tool, spec = call.tool, call.tool.spec
        risk = tool.configured_risk
        if spec.dynamic_risk is not None:
            raised = await hooks.risk_for(spec, tool.service, call.args, call.facts)
            if raised is not None:
                risk = effective_risk(risk, raised)
        if self.names_accounts and self.accounts is not None:
            risk = effective_risk(risk, self.accounts.risk(spec, call.args))
        if spec.preview is not None and risk is not Risk.DENY and spec.preview(call.args):
            risk = Risk.LOW  # a dry run changes nothing
        if risk is Risk.DENY:
            return call.refused(
                ToolFailure("denied_by_policy", f"{spec.name} is denied by the policy config"), risk=risk
            )
        return call.deciding(risk=risk)


class Precheck:
    """The tool's `precheck`: a failed precondition is the answer, before anyone is asked."""

    def applies(self, tool: BoundTool, nested: bool, scoped: bool = False) -> bool:
        return tool.spec.precheck is not None

    async def enter(self, call: Call) -> Call | Verdict:
        spec = call.tool.spec
        try:
            await hooks.check(spec, call.tool.service, call.args, call.facts)
        except ToolFailure as failure:
            return call.refused(failure, Decision.PRECHECK_FAILED)
        return call
