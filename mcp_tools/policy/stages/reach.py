"""Who may reach what: the tool itself (hidden by the policy, outside the sign-in's scopes),
and the tools its arguments act through. Each refuses with `denied` and says why, in the words of
the inventory's chain (`mcp_tools.inventory.chain`): the filters a call answers to, which are the
ones `tools/list`, text calls, resources and `mcp-tools tools --explain` ask too."""

from __future__ import annotations

from typing import Any

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.inventory.chain import call_refusal
from mcp_tools.policy.calls import BoundTool, Call, Caller, Verdict
from mcp_tools.policy.rules import RulePolicy
from mcp_tools.policy.stages import Gateway


class Visibility:
    """A tool the policy hides (`disabled`, `read_only`, `deny`), or one outside the scopes the
    caller's sign-in was granted, is refused: the catalog does not serve them, and a call that
    reaches the gate anyway (through another tool, or a name resolved before a change) stops here."""

    def __init__(self, rules: RulePolicy) -> None:
        self.rules = rules

    def applies(self, tool: BoundTool, nested: bool, scoped: bool = False) -> bool:
        """For a caller whose scopes limit it, or a tool the policy hides: nothing else is refused here."""
        return scoped or call_refusal(self.rules, tool.spec) is not None

    def why_not(self, tool: BoundTool, caller: Caller) -> str | None:
        """Why `caller` may not call `tool`, or None when it may: the chain's first refusal."""
        refusal = call_refusal(self.rules, tool.spec, caller.reaches)
        return None if refusal is None else refusal.denial

    async def enter(self, call: Call) -> Call | Verdict:
        refusal = self.why_not(call.tool, call.caller)
        if refusal:
            return call.refused(ToolFailure("denied_by_policy", refusal))
        return call


class ArgumentReach:
    """An argument that acts through another namespace's tool which cannot run now (its
    namespace off, or hidden by the policy) is refused before anything runs, naming it."""

    def __init__(self, gate: Gateway) -> None:
        self.gate = gate

    def applies(self, tool: BoundTool, nested: bool, scoped: bool = False) -> bool:
        return bool(tool.spec.reaches)

    async def enter(self, call: Call) -> Call | Verdict:
        args: Any = call.args
        for option, target in call.tool.spec.reaches.items():
            if not getattr(args, option, None):
                continue
            blocked = self.gate.unreachable(target)
            if blocked is not None:
                return call.refused(
                    ToolFailure(
                        blocked.kind,
                        f"{call.name} {option} acts through {target}, which cannot run: {blocked.message}",
                        f"call {call.wire_name} without {option}",
                    )
                )
        return call
