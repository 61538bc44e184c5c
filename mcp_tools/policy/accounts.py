"""Policy rules that name an account: `match = "gmail.send@work"` raises that tool for that account.

A rule's `match` is `TOOL_GLOB@ACCOUNT_GLOB`; it never matches a tool name alone (no tool name
holds "@"), so only this check reads it. The accounts are those the call acts as, as the tool
resolved them before the risk is computed (`ToolSpec.accounts`: each account of an `account:
"all"` call). Such a rule only raises a tool's risk, never lowers it.
"""

from __future__ import annotations

import fnmatch
from typing import Any

from mcp_tools.core.tooling import Risk, ToolSpec
from mcp_tools.policy.rules import RiskRule, RulePolicy


def acting_labels(spec: ToolSpec[Any, Any, Any], args: Any) -> list[str]:
    """The account labels a call acts as (none for a tool without accounts, or before they are known)."""
    if spec.accounts is None or args is None:
        return []
    return list(spec.accounts(args))


def audited_account(spec: ToolSpec[Any, Any, Any], args: Any) -> str | None:
    """What a call's audit row says of the accounts it acted as: `work`, `default, work`, or None."""
    labels = acting_labels(spec, args)
    return ", ".join(labels) if labels else None


def account_risk(rules: RulePolicy, spec: ToolSpec[Any, Any, Any], args: Any) -> Risk | None:
    """The strictest risk the person's account rules give this call, or None when none applies."""
    labels = acting_labels(spec, args)
    if not labels:
        return None
    found: Risk | None = None
    for rule in account_rules(rules):
        tool, _, account = rule.pattern.rpartition("@")
        if fnmatch.fnmatchcase(spec.name, tool) and any(fnmatch.fnmatchcase(label, account) for label in labels):
            found = rule.risk if found is None else max(found, rule.risk)
    return found


def account_rules(rules: RulePolicy) -> list[RiskRule]:
    """The person's rules that name an account (`TOOL_GLOB@ACCOUNT_GLOB`)."""
    return [rule for rule in rules.rules if rule.origin == "config" and "@" in rule.pattern]


def may_raise_to(rules: RulePolicy, spec: ToolSpec[Any, Any, Any], risk: Risk) -> bool:
    """Whether some account's rule can raise this tool to `risk` or above (so the stages that
    act on such a risk must stay in its chain even when its own level is lower)."""
    return any(
        rule.risk >= risk and fnmatch.fnmatchcase(spec.name, rule.pattern.rpartition("@")[0])
        for rule in account_rules(rules)
    )
