"""Rules that name an account (`gmail.send@work`): compiled once per rule set into one table that
`AssessRisk` and `Confirm` share, each rule matched against a tool's name once per tool."""

from __future__ import annotations

import fnmatch
from typing import Any

import pytest

from mcp_tools.core.config import PolicySettings
from mcp_tools.core.tooling import Risk
from mcp_tools.policy.accounts import AccountRules
from mcp_tools.policy.rules import RulePolicy
from mcp_tools.policy.stages.assess import AssessRisk
from mcp_tools.policy.stages.confirm import Confirm
from mcp_tools.servers import load_namespace


def rules(*matches: tuple[str, str]) -> RulePolicy:
    settings = PolicySettings.model_validate({"rules": [{"match": match, "risk": risk} for match, risk in matches]})
    return RulePolicy(settings, shipped=[])


def gmail(method: str) -> Any:
    return next(spec for spec in load_namespace("gmail").tools if spec.method == method)


def test_one_table_per_rule_set_shared_by_the_stages_that_read_it() -> None:
    policy = rules(("gmail.send@work", "high"), ("gmail.*", "medium"))
    confirm = Confirm(None, None, None, None, policy)  # type: ignore[arg-type]
    assert AssessRisk(policy).accounts is confirm.accounts is AccountRules.of(policy)
    assert AccountRules.of(rules(("gmail.send@work", "high"))) is not AccountRules.of(policy)
    table = AccountRules.of(policy)
    assert [(rule.tools, rule.accounts, rule.risk) for rule in table.rules] == [("gmail.send", "work", Risk.HIGH)]
    assert not AccountRules.of(rules(("gmail.*", "high")))  # no rule names an account


def test_a_tools_rules_are_matched_once(monkeypatch: pytest.MonkeyPatch) -> None:
    table = AccountRules.of(rules(("gmail.send@work", "high"), ("gmail.*@home", "medium"), ("drive.*@*", "high")))
    matched: list[str] = []
    original = fnmatch.fnmatchcase

    def counting(name: str, pattern: str) -> bool:
        if pattern in ("gmail.send", "gmail.*", "drive.*"):
            matched.append(pattern)
        return original(name, pattern)

    monkeypatch.setattr(fnmatch, "fnmatchcase", counting)
    send, search = gmail("send"), gmail("search")
    for _ in range(3):
        assert table.may_raise_to(send, Risk.HIGH) and not table.may_raise_to(search, Risk.HIGH)
        assert table.may_raise_to(search, Risk.MEDIUM)
    assert sorted(matched) == sorted(["gmail.send", "gmail.*", "drive.*"] * 2)  # each rule once for each tool
    assert [rule.accounts for rule in table.for_tool(send)] == ["work", "home"]
