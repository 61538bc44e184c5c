"""The stages that look at a call before anything of the tool runs: may this caller call this
tool, and are these arguments ones it can take. Each refuses with `denied` and says why."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ValidationError

from mcp_tools.policy.arguments import describe_validation_error, shape_refusal
from mcp_tools.policy.calls import BoundTool, Caller
from mcp_tools.policy.rules import RulePolicy
from mcp_tools.policy.stages import Call, CallNext, Gateway, Verdict
from mcp_tools.policy.unicode import not_unicode_failure
from mcp_tools.text import not_unicode
from mcp_tools.tooling import ToolFailure


def canonical_arguments(args: BaseModel) -> dict[str, Any]:
    """The arguments as JSON, by their wire names: what an approval's digest and the audit row cover."""
    return args.model_dump(mode="json", by_alias=True)


class Visibility:
    """A tool the policy hides (`disabled`, `read_only`, `deny`), or one outside the scopes the
    caller's sign-in was granted, is refused: the catalog does not serve them, and a call that
    reaches the gate anyway (through another tool, or a name resolved before a change) stops here."""

    def __init__(self, rules: RulePolicy) -> None:
        self.rules = rules

    def applies(self, tool: BoundTool, nested: bool) -> bool:
        return True

    def why_not(self, tool: BoundTool, caller: Caller) -> str | None:
        """Why `caller` may not call `tool`, or None when it may."""
        hidden = self.rules.hidden_reason(tool.spec)
        if hidden:
            return hidden
        if caller.reaches is not None and not caller.reaches(tool.spec):
            return f"{tool.spec.name} is outside the scopes this sign-in was granted"
        return None

    async def handle(self, call: Call, call_next: CallNext) -> Verdict:
        refusal = self.why_not(call.tool, call.caller)
        if refusal:
            return call.refused(ToolFailure("denied_by_policy", refusal))
        return await call_next(call)


class Shape:
    """Arguments are a JSON object within the size limits (`policy.arguments.shape_refusal`);
    the audit row keeps nothing of arguments refused for their size."""

    def applies(self, tool: BoundTool, nested: bool) -> bool:
        return True

    async def handle(self, call: Call, call_next: CallNext) -> Verdict:
        if not isinstance(call.raw_args, dict):
            return call.refused(ToolFailure("invalid_arguments", f"{call.name} takes a JSON object of arguments"))
        too_large = shape_refusal(call.name, call.raw_args)
        if too_large is not None:
            return call.refused(too_large, args={})
        return await call_next(call)


class UnicodeText:
    """No text in the arguments holds a lone surrogate (which no UTF-8 text can hold); the
    answer names where it sits, and the audit row keeps nothing of them."""

    def applies(self, tool: BoundTool, nested: bool) -> bool:
        return True

    async def handle(self, call: Call, call_next: CallNext) -> Verdict:
        broken = not_unicode(call.raw_args)
        if broken is not None:
            return call.refused(not_unicode_failure(broken), args={})
        return await call_next(call)


class Validate:
    """The arguments as the tool's input model, or a refusal that says what to fix; from here on
    the audit row records the canonical arguments."""

    def applies(self, tool: BoundTool, nested: bool) -> bool:
        return True

    async def handle(self, call: Call, call_next: CallNext) -> Verdict:
        spec = call.tool.spec
        try:
            args = spec.input_model.model_validate(call.raw_args)
        except ValidationError as exc:
            return call.refused(ToolFailure("invalid_arguments", describe_validation_error(spec, exc)))
        validated = replace(call, args=args, verdict=replace(call.verdict, args=canonical_arguments(args)))
        return await call_next(validated)


class ArgumentReach:
    """An argument that acts through another namespace's tool which cannot run now (its
    namespace off, or hidden by the policy) is refused before anything runs, naming it."""

    def __init__(self, gate: Gateway) -> None:
        self.gate = gate

    def applies(self, tool: BoundTool, nested: bool) -> bool:
        return bool(tool.spec.reaches)

    async def handle(self, call: Call, call_next: CallNext) -> Verdict:
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
        return await call_next(call)
