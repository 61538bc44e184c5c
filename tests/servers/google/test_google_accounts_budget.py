"""The default tool list with two Google accounts signed in stays within the context budget."""

from __future__ import annotations

from mcp_tools.policy.gate import BoundTool
from mcp_tools.servers import CATALOG
from mcp_tools.transports import budget
from tests.test_budget import DEFAULT_FULL_TOKENS_PER_TOOL

# What the listed `account` may add to the full definition's average with two accounts signed in
# (measured 273.9 against 271.1 with one); the model-visible limit is the same as with one account.
TWO_ACCOUNTS_FULL_EXTRA = 2

# the namespaces that sign in with a Google account by default (calendar speaks CalDAV unless told otherwise)
GOOGLE = {"gmail", "drive", "docs", "sheets", "tasks", "contacts"}


def with_two_accounts(tools: list[BoundTool]) -> list[BoundTool]:
    """The tools as a server with two Google accounts lists them: `account` is no longer withheld."""
    return [
        BoundTool(
            tool.spec, None, tool.wire_name, tool.configured_risk, tuple(w for w in tool.withheld if w != "account")
        )
        if tool.spec.namespace in GOOGLE
        else tool
        for tool in tools
    ]


def per_tool(costs: list[budget.ToolCost]) -> tuple[float, float]:
    return (
        sum(cost.visible for cost in costs) / len(costs) / budget.CHARS_PER_TOKEN,
        sum(cost.full for cost in costs) / len(costs) / budget.CHARS_PER_TOKEN,
    )


def test_two_accounts_list_the_argument_on_the_google_tools() -> None:
    costs = {cost.name: cost for cost in budget.costs_of(budget.every_tool())}
    two = {cost.name: cost for cost in budget.costs_of(with_two_accounts(budget.every_tool()))}
    added = len('"account":{"type":"string"},')
    assert two["gmail.search"].visible == costs["gmail.search"].visible + added
    for name in ("gmail.read", "gmail.attachment", "drive.read", "docs.read", "sheets.read"):
        assert two[name].visible == costs[name].visible + added, name  # the readers that find an id list it too
    assert two["files.read"].visible == costs["files.read"].visible


def test_the_default_selection_with_two_accounts_stays_within_the_budget() -> None:
    costs = budget.costs_of(budget.default_selection(with_two_accounts(budget.every_tool())))
    assert {cost.namespace for cost in costs} == set(CATALOG)
    visible, full = per_tool(costs)
    assert visible <= budget.MAX_VISIBLE_TOKENS_PER_TOOL, f"{visible:.2f} tokens per tool, model-visible"
    # The full definition also carries each Google tool's listed `account` (about 2 tokens a tool).
    assert round(full) <= DEFAULT_FULL_TOKENS_PER_TOOL + TWO_ACCOUNTS_FULL_EXTRA, f"{full:.2f} tokens per tool, full"


def test_every_tool_with_two_accounts_stays_within_the_budget() -> None:
    visible, full = per_tool(budget.costs_of(with_two_accounts(budget.every_tool())))
    assert visible <= budget.MAX_VISIBLE_TOKENS_PER_TOOL and full <= budget.MAX_FULL_TOKENS_PER_TOOL
