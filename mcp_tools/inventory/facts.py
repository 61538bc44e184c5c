"""One tool's facts, gathered once when the catalog binds it at start.

Everything else that is said about a tool reads it here or on its `ToolSpec`: the canonical and
wire names, the aliases other systems' models write, the final risk after the person's rules
and the shipped safety net (`configs/policy.toml`) and where that risk came from, the tier, the
scopes an upstream account must grant, and whether a call may run as an MCP task (not listed
yet). Who is served the tool is the chain's question (`inventory.chain`), asked per caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from mcp_tools.core.tooling import Risk, TaskSupport, ToolSpec, UpstreamScopes


class RiskSource(Protocol):
    def risk_and_origin(self, tool: ToolSpec[Any, Any, Any]) -> tuple[Risk, str]: ...


@dataclass(frozen=True)
class ToolFacts:
    spec: ToolSpec[Any, Any, Any] = field(repr=False, compare=False)
    wire_name: str
    risk: Risk  # final: the person's rules, then the shipped ones, then the tool's own
    risk_from: str  # where that risk came from, in words

    @classmethod
    def of(cls, spec: ToolSpec[Any, Any, Any], wire_name: str, rules: RiskSource) -> ToolFacts:
        risk, origin = rules.risk_and_origin(spec)
        return cls(spec, wire_name, risk, origin)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def aliases(self) -> tuple[str, ...]:
        return tuple(alias.name for alias in self.spec.aliases)

    @property
    def tier(self) -> str:
        return self.spec.tier

    @property
    def scopes(self) -> UpstreamScopes | None:
        return self.spec.scopes

    @property
    def task_support(self) -> TaskSupport:
        return self.spec.task_support

    def as_dict(self) -> dict[str, Any]:
        """For `mcp-tools tools --explain` (task support stays out until tasks are served)."""
        return {
            "name": self.name,
            "wire_name": self.wire_name,
            "aliases": list(self.aliases),
            "risk": self.risk.label,
            "risk_from": self.risk_from,
            "tier": self.tier,
            "scopes": list(self.scopes.asked) if self.scopes is not None else [],
        }
