"""Policy rules that name an account: `match = "gmail.send@work"` raises that tool for that account.

A rule's `match` is `TOOL_GLOB@ACCOUNT_GLOB`; it never matches a tool name alone (no tool name
holds "@"), so only this check reads it. The accounts are those the call acts as, as the tool
resolved them before the risk is computed (`ToolSpec.accounts`: each account of an `account:
"all"` call). Such a rule only raises a tool's risk, never lowers it.

The rules are compiled once per rule set (`AccountRules.of`), and matched against a tool's name
once per tool: the gate's `AssessRisk` (a call's risk for its accounts) and `Confirm` (whether a
tool can be raised to high at all) read the same table.
"""

from __future__ import annotations

import fnmatch
import weakref
from dataclasses import dataclass
from typing import Any

from mcp_tools.core.tooling import Risk, ToolSpec
from mcp_tools.policy.rules import RulePolicy


def acting_labels(spec: ToolSpec[Any, Any, Any], args: Any) -> list[str]:
    """The account labels a call acts as (none for a tool without accounts, or before they are known)."""
    if spec.accounts is None or args is None:
        return []
    return list(spec.accounts(args))


def audited_account(spec: ToolSpec[Any, Any, Any], args: Any) -> str | None:
    """What a call's audit row says of the accounts it acted as: `work`, `default, work`, or None."""
    labels = acting_labels(spec, args)
    return ", ".join(labels) if labels else None


@dataclass(frozen=True)
class AccountRule:
    """One rule of the person's that names an account, split at its last `@`."""

    tools: str  # a glob over canonical tool names
    accounts: str  # a glob over account labels
    risk: Risk

    def covers(self, labels: list[str]) -> bool:
        return any(fnmatch.fnmatchcase(label, self.accounts) for label in labels)


class AccountRules:
    """The person's account rules of one rule set, compiled once; per tool, the ones its name matches."""

    def __init__(self, rules: RulePolicy) -> None:
        self.rules = tuple(
            AccountRule(rule.pattern.rpartition("@")[0], rule.pattern.rpartition("@")[2], rule.risk)
            for rule in rules.rules
            if rule.origin == "config" and "@" in rule.pattern
        )
        self._by_tool: dict[str, tuple[AccountRule, ...]] = {}

    @classmethod
    def of(cls, rules: RulePolicy) -> AccountRules:
        """The table of this rule set, compiled on first use and shared by every stage that asks."""
        table = _COMPILED.get(rules)
        if table is None:
            table = _COMPILED[rules] = cls(rules)
        return table

    def __bool__(self) -> bool:
        return bool(self.rules)

    def for_tool(self, spec: ToolSpec[Any, Any, Any]) -> tuple[AccountRule, ...]:
        """The rules whose tool glob matches this tool's name (matched once per tool)."""
        found = self._by_tool.get(spec.name)
        if found is None:
            found = self._by_tool[spec.name] = tuple(
                rule for rule in self.rules if fnmatch.fnmatchcase(spec.name, rule.tools)
            )
        return found

    def risk(self, spec: ToolSpec[Any, Any, Any], args: Any) -> Risk | None:
        """The strictest risk these rules give this call, or None when none applies."""
        matching = self.for_tool(spec)
        if not matching:
            return None
        labels = acting_labels(spec, args)
        if not labels:
            return None
        return max((rule.risk for rule in matching if rule.covers(labels)), default=None)

    def may_raise_to(self, spec: ToolSpec[Any, Any, Any], risk: Risk) -> bool:
        """Whether some account's rule can raise this tool to `risk` or above (so the stages that
        act on such a risk must stay in its chain even when its own level is lower)."""
        return any(rule.risk >= risk for rule in self.for_tool(spec))


_COMPILED: weakref.WeakKeyDictionary[RulePolicy, AccountRules] = weakref.WeakKeyDictionary()


def account_risk(rules: RulePolicy, spec: ToolSpec[Any, Any, Any], args: Any) -> Risk | None:
    """The strictest risk the person's account rules give this call, or None when none applies."""
    return AccountRules.of(rules).risk(spec, args)


def may_raise_to(rules: RulePolicy, spec: ToolSpec[Any, Any, Any], risk: Risk) -> bool:
    """Whether some account's rule can raise this tool to `risk` or above."""
    return AccountRules.of(rules).may_raise_to(spec, risk)
