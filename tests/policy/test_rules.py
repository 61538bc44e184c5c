"""Risk rules: user rules first, shipped rules next, the tool's own risk last; never quieter than shipped."""

from __future__ import annotations

import pytest

from mcp_tools.core.config import PolicySettings
from mcp_tools.core.tooling import Risk
from mcp_tools.policy.redact import redact
from mcp_tools.policy.rules import RiskRule, RulePolicy, effective_risk, load_shipped_rules
from mcp_tools.servers import CATALOG, load_namespace
from tests.demo_namespace import NAMESPACE as DEMO

TOOLS = {spec.name: spec for spec in DEMO.tools}


def policy(**settings: object) -> RulePolicy:
    return RulePolicy(PolicySettings.model_validate(settings), shipped=[RiskRule("*.erase", Risk.HIGH, "shipped")])


def test_first_matching_rule_wins_then_the_base_risk() -> None:
    rules = policy(rules=[{"match": "demo.erase", "risk": "medium"}, {"match": "demo.*", "risk": "high"}])
    assert rules.configured_risk(TOOLS["demo.erase"]) is Risk.MEDIUM  # named exactly: may lower
    assert rules.configured_risk(TOOLS["demo.note"]) is Risk.HIGH
    assert policy().configured_risk(TOOLS["demo.note"]) is Risk.MEDIUM  # base risk
    assert policy().configured_risk(TOOLS["demo.erase"]) is Risk.HIGH  # shipped rule


def test_attack_a_pattern_meant_to_report_actions_does_not_stop_deletes_from_asking() -> None:
    """`match = "files.*", risk = "medium"` reads as "report every file action": a pattern raises the
    tools below it and leaves those the shipped rules (or the namespace) make higher where they are."""
    rules = policy(rules=[{"match": "demo.*", "risk": "medium"}])
    assert rules.configured_risk(TOOLS["demo.erase"]) is Risk.HIGH  # shipped *.erase stays
    assert rules.configured_risk(TOOLS["demo.echo"]) is Risk.MEDIUM  # raised from low
    everything_low = policy(rules=[{"match": "*", "risk": "low"}])
    assert everything_low.configured_risk(TOOLS["demo.erase"]) is Risk.HIGH
    assert everything_low.configured_risk(TOOLS["demo.note"]) is Risk.MEDIUM  # the namespace's own level
    assert policy(rules=[{"match": "demo.*", "risk": "deny"}]).configured_risk(TOOLS["demo.erase"]) is Risk.DENY


@pytest.mark.parametrize("namespace", sorted(CATALOG))
def test_no_pattern_lowers_what_deletes_sends_or_shares(namespace: str) -> None:
    """Whatever glob the person writes, only a rule naming the tool exactly lowers it."""
    for pattern in ("*", f"{namespace}.*", "*.*"):
        lowered = RulePolicy(PolicySettings.model_validate({"rules": [{"match": pattern, "risk": "low"}]}))
        for spec in load_namespace(namespace).tools:
            if any(word in spec.method for word in ("delete", "send", "share")):
                assert lowered.configured_risk(spec) is Risk.HIGH, (pattern, spec.name)
    spec = next((spec for spec in load_namespace(namespace).tools if "delete" in spec.method), None)
    if spec is not None:
        exact = RulePolicy(PolicySettings.model_validate({"rules": [{"match": spec.name, "risk": "medium"}]}))
        assert exact.configured_risk(spec) is Risk.MEDIUM


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
