"""Risk rules: ordered globs over canonical names, the user's before the shipped defaults; a
user's pattern raises but never lowers (naming a tool exactly does)."""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from mcp_tools.core.config import PolicySettings, validate_section
from mcp_tools.core.tooling import Risk, ToolSpec


@dataclass(frozen=True)
class RiskRule:
    pattern: str
    risk: Risk
    origin: str  # "config" or "shipped", shown by `mcp-tools tools`

    def matches(self, canonical_name: str) -> bool:
        return fnmatch.fnmatchcase(canonical_name, self.pattern)


def shipped_policy_path() -> Path:
    """`configs/policy.toml`, whether installed as a wheel or run from a checkout."""
    packaged = resources.files("mcp_tools").joinpath("_configs/policy.toml")
    if packaged.is_file():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "configs" / "policy.toml"


def load_shipped_rules() -> list[RiskRule]:
    data = tomllib.loads(shipped_policy_path().read_text(encoding="utf-8"))
    settings = validate_section("shipped policy", PolicySettings, data)
    return [RiskRule(rule.match, Risk.parse(rule.risk), "shipped") for rule in settings.rules]


class RulePolicy:
    """Answers the static questions: what risk does a tool carry, and may it be seen at all."""

    def __init__(self, settings: PolicySettings, shipped: Sequence[RiskRule] | None = None) -> None:
        self.settings = settings
        user_rules = [RiskRule(rule.match, Risk.parse(rule.risk), "config") for rule in settings.rules]
        self.rules: list[RiskRule] = [*user_rules, *(load_shipped_rules() if shipped is None else shipped)]
        self._hidden: dict[str, str | None] = {}

    def configured_risk(self, tool: ToolSpec[Any, Any, Any]) -> Risk:
        """First matching rule wins; with none, the tool's own base risk.

        A rule of the person's whose `match` is a pattern (`files.*`) may raise a tool but never
        lowers it below its shipped level (the shipped rule's, else the namespace's own): "report
        every file action" must not quietly stop deletes from asking. Lowering one tool takes a
        rule that names it exactly (`match = "files.delete"`).
        """
        return self.risk_and_origin(tool)[0]

    def risk_and_origin(self, tool: ToolSpec[Any, Any, Any]) -> tuple[Risk, str]:
        """The tool's final risk and, in words, where it came from (`mcp-tools tools --explain`)."""
        shipped, origin = self._shipped_risk(tool)
        for rule in self.rules:
            if rule.origin != "config":
                break
            if rule.matches(tool.name):
                if rule.pattern == tool.name:
                    return rule.risk, f"your rule {rule.pattern!r}"
                if rule.risk > shipped:
                    return rule.risk, f"your rule {rule.pattern!r}"
                return shipped, f"{origin}; your rule {rule.pattern!r} may raise it, never lower it"
        return shipped, origin

    def _shipped_risk(self, tool: ToolSpec[Any, Any, Any]) -> tuple[Risk, str]:
        for rule in self.rules:
            if rule.origin != "config" and rule.matches(tool.name):
                if rule.risk == tool.risk:
                    return rule.risk, f"declared by the tool; the shipped rule {rule.pattern!r} says the same"
                return rule.risk, f"the shipped rule {rule.pattern!r}"
        return tool.risk, "declared by the tool"

    def hidden_reason(self, tool: ToolSpec[Any, Any, Any]) -> str | None:
        """Why a tool is neither listed nor callable, or None when it is visible (asked on every call)."""
        if tool.name not in self._hidden:
            self._hidden[tool.name] = self._hidden_reason(tool)
        return self._hidden[tool.name]

    def _hidden_reason(self, tool: ToolSpec[Any, Any, Any]) -> str | None:
        for pattern in self.settings.disabled:
            if fnmatch.fnmatchcase(tool.name, pattern):
                return f"{tool.name} is disabled by the policy config (disabled = {pattern!r})"
        if self.settings.read_only and not tool.read_only:
            return f"{tool.name} changes data and the policy config sets read_only = true"
        if self.configured_risk(tool) is Risk.DENY:
            return f"{tool.name} is denied by the policy config"
        return None


def effective_risk(configured: Risk, dynamic: Risk | None) -> Risk:
    """A tool may escalate from its arguments or state, never go below the configured level."""
    return configured if dynamic is None else max(configured, dynamic)
