"""The stages where the tool's own hooks look at the call before it runs: `prepare` (what the
call acts on, gathered once into its facts), the effective risk (`dynamic_risk`, a dry run,
`deny`) and `precheck` (a failed precondition is the answer, and nobody is asked)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mcp_tools.policy import hooks
from mcp_tools.policy.calls import BoundTool, DeferredQuestion
from mcp_tools.policy.rules import effective_risk
from mcp_tools.policy.stages import Call, CallNext, Decision, Gateway, Verdict, settle
from mcp_tools.policy.stages.outgoing import guarded_progress
from mcp_tools.tooling import CallContext, Risk, ToolFailure

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable


class Prepare:
    """The call's context (who calls, progress, `ctx.call_tool`) and its facts, then the tool's
    `prepare` when it has one; a failure there is the answer (`precheck_failed`)."""

    def __init__(self, gate: Gateway) -> None:
        self.gate = gate

    def applies(self, tool: BoundTool, nested: bool) -> bool:
        return True

    async def handle(self, call: Call, call_next: CallNext) -> Verdict:
        caller, spec = call.caller, call.tool.spec
        notices: list[str] = []
        context = CallContext(
            principal=caller.principal,
            transport=caller.transport,
            progress=guarded_progress(caller.progress),
            call_tool=self.calls_from(call, notices),
            via=call.via.spec.name if call.via is not None else None,
        )
        facts = spec.new_facts()
        if spec.prepare is not None:
            try:
                await hooks.gather(spec, call.tool.service, call.args, context, facts)
            except DeferredQuestion:
                raise
            except ToolFailure as failure:
                return call.refused(failure, Decision.PRECHECK_FAILED)
            except Exception as exc:
                return settle(call, exc)
        return await call_next(replace(call, context=context, facts=facts, notices=notices))

    def calls_from(self, call: Call, notices: list[str]) -> Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]:
        """`ctx.call_tool` for one call: the declared tools only, through the gate, as the same caller."""
        outer, gate = call.tool, self.gate

        async def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            if name not in outer.spec.reaches.values():
                raise ToolFailure("denied_by_policy", f"{outer.spec.name} does not declare that it calls {name}")
            blocked = gate.unreachable(name)
            if blocked is not None:
                raise blocked
            outcome = await gate.call(gate.tools[name], name, arguments, call.caller, via=outer)
            if outcome.ask_later is not None:
                raise DeferredQuestion(outcome.ask_later)
            if outcome.is_error:
                error = dict(outcome.error or {})
                kind = error.pop("kind", "internal_error")
                message = error.pop("message", "")
                hint = error.pop("hint", None)
                said = message if message.startswith(name) else f"{name}: {message}"
                raise ToolFailure(kind, said, hint, details=error)
            if outcome.notice:  # the person hears of it as if the caller had made the call itself
                notices.append(outcome.notice)
            return outcome.structured or {}

        return call_tool


class AssessRisk:
    """The effective risk: the configured one, raised by the tool's `dynamic_risk`, low for a dry
    run (`preview`); `deny` is refused here."""

    def applies(self, tool: BoundTool, nested: bool) -> bool:
        return True

    async def handle(self, call: Call, call_next: CallNext) -> Verdict:
        tool, spec = call.tool, call.tool.spec
        risk = tool.configured_risk
        try:
            if spec.dynamic_risk is not None:
                raised = await hooks.risk_for(spec, tool.service, call.args, call.facts)
                if raised is not None:
                    risk = effective_risk(risk, raised)
            if spec.preview is not None and risk is not Risk.DENY and spec.preview(call.args):
                risk = Risk.LOW  # a dry run changes nothing
        except Exception as exc:
            return settle(call, exc)
        if risk is Risk.DENY:
            return call.refused(
                ToolFailure("denied_by_policy", f"{spec.name} is denied by the policy config"), risk=risk
            )
        return await call_next(call.deciding(risk=risk))


class Precheck:
    """The tool's `precheck`: a failed precondition is the answer, before anyone is asked."""

    def applies(self, tool: BoundTool, nested: bool) -> bool:
        return tool.spec.precheck is not None

    async def handle(self, call: Call, call_next: CallNext) -> Verdict:
        spec = call.tool.spec
        try:
            await hooks.check(spec, call.tool.service, call.args, call.facts)
        except ToolFailure as failure:
            return call.refused(failure, Decision.PRECHECK_FAILED)
        except Exception as exc:
            return settle(call, exc)
        return await call_next(call)
