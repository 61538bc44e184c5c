"""Risk rules: user rules first, shipped rules next, the tool's own risk last; never quieter than shipped."""

from __future__ import annotations

import pytest

from mcp_tools.config import PolicySettings
from mcp_tools.policy.redact import redact
from mcp_tools.policy.rules import RiskRule, RulePolicy, effective_risk, load_shipped_rules
from mcp_tools.servers import CATALOG, load_namespace
from mcp_tools.tooling import Risk
from tests.demo_namespace import NAMESPACE as DEMO

TOOLS = {spec.name: spec for spec in DEMO.tools}


def policy(**settings: object) -> RulePolicy:
    return RulePolicy(PolicySettings.model_validate(settings), shipped=[RiskRule("*.erase", Risk.HIGH, "shipped")])


def test_first_matching_rule_wins_then_the_base_risk() -> None:
    rules = policy(rules=[{"match": "demo.erase", "risk": "medium"}, {"match": "demo.*", "risk": "low"}])
    assert rules.configured_risk(TOOLS["demo.erase"]) is Risk.MEDIUM
    assert rules.configured_risk(TOOLS["demo.note"]) is Risk.LOW
    assert policy().configured_risk(TOOLS["demo.note"]) is Risk.MEDIUM  # base risk
    assert policy().configured_risk(TOOLS["demo.erase"]) is Risk.HIGH  # shipped rule


def test_dynamic_risk_only_escalates() -> None:
    assert effective_risk(Risk.MEDIUM, Risk.HIGH) is Risk.HIGH
    assert effective_risk(Risk.HIGH, Risk.LOW) is Risk.HIGH
    assert effective_risk(Risk.LOW, None) is Risk.LOW


def test_hidden_reasons() -> None:
    assert policy(disabled=["demo.e*"]).hidden_reason(TOOLS["demo.echo"])
    assert policy(read_only=True).hidden_reason(TOOLS["demo.note"])
    assert policy(read_only=True).hidden_reason(TOOLS["demo.echo"]) is None
    assert policy(rules=[{"match": "*", "risk": "deny"}]).hidden_reason(TOOLS["demo.echo"])


@pytest.mark.parametrize("namespace", sorted(CATALOG))
def test_shipped_rules_never_lower_a_namespace_s_own_risk(namespace: str) -> None:
    shipped = RulePolicy(PolicySettings())
    assert shipped.rules == load_shipped_rules()
    for spec in load_namespace(namespace).tools:
        assert shipped.configured_risk(spec) >= spec.risk, spec.name


@pytest.mark.parametrize("namespace", sorted(CATALOG))
def test_tools_that_send_delete_or_share_ask_first(namespace: str) -> None:
    shipped = RulePolicy(PolicySettings())
    for spec in load_namespace(namespace).tools:
        if any(word in spec.method for word in ("delete", "send", "share")):
            assert shipped.configured_risk(spec) is Risk.HIGH, spec.name


def test_redaction_masks_secrets_and_cuts_long_values() -> None:
    shown = redact({"password": "p", "nested": {"apiKey": "k", "ok": "v"}, "body": "x" * 500, "raw": b"123"}, 100)
    assert shown["password"] == "[redacted]" and shown["nested"] == {"apiKey": "[redacted]", "ok": "v"}
    assert shown["body"].startswith("x" * 100) and "cut, 500 chars" in shown["body"]
    assert shown["raw"] == "[3 bytes]"
