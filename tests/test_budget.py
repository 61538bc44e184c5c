"""What tool definitions cost in context: the counting, the budget, and where it is shown."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from mcp_tools.core.tooling import Arguments, Output, Risk, ToolSpec
from mcp_tools.policy.gate import BoundTool
from mcp_tools.servers import CATALOG
from mcp_tools.transports import budget
from mcp_tools.transports.mcp_server import tool_definition
from tests.processes import ROOT, child_env, demo_config, run_cli


class PingArgs(Arguments):
    text: str = Field(max_length=10)
    loud: bool = False
    tag: str | None = None


class PingOut(Output):
    echo: str
    at: str | None


async def ping(service: object, args: PingArgs, ctx: object) -> PingOut:
    return PingOut(echo=args.text, at=None)


PING = ToolSpec(
    name="demo.ping",
    title="Ping",
    description="Echo text.",
    input_model=PingArgs,
    output_model=PingOut,
    handler=ping,
    risk=Risk.MEDIUM,
    describe=lambda args: "ping",
    read_only=True,
)

# Written out by hand: what a model is shown, and the whole definition, as compact JSON.
PING_VISIBLE = (
    '{"name":"demo_ping","description":"Echo text. Risk: medium.","inputSchema":{"additionalProperties":false,'
    '"properties":{"text":{"maxLength":10,"type":"string"},"loud":{"type":"boolean"},'
    '"tag":{"type":"string"}},"required":["text"],"type":"object"}}'  # a default of false says nothing
)
PING_FULL = (
    '{"name":"demo_ping","title":"Ping","description":"Echo text. Risk: medium.","inputSchema":'
    '{"additionalProperties":false,"properties":{"text":{"maxLength":10,"type":"string"},'
    '"loud":{"type":"boolean"},"tag":{"type":"string"}},"required":["text"],"type":"object"},'
    '"outputSchema":{"properties":{"echo":{"type":"string"},"at":{"type":["string","null"]}},"type":"object"},'
    '"annotations":{"readOnlyHint":true,"openWorldHint":false}}'  # only what differs from the spec's defaults
)


def test_the_figures_match_a_hand_counted_tool() -> None:
    (cost,) = budget.costs_of([BoundTool(PING, None, "demo_ping", Risk.MEDIUM)])
    assert (len(PING_VISIBLE), len(PING_FULL)) == (247, 425)  # counted by hand
    assert (cost.visible, cost.full) == (247, 425)
    assert (cost.visible_tokens, cost.full_tokens) == (62, 106)  # characters / 4, rounded
    assert cost.namespace == "demo" and cost.tier == "core"


class Step(BaseModel):
    to: str


class PlanArgs(Arguments):
    steps: list[Step]


class PlanOut(Output):
    state: Literal["planned", "done"]


async def plan(service: object, args: PlanArgs, ctx: object) -> PlanOut:
    return PlanOut(state="planned")


PLAN = ToolSpec(
    name="demo.plan",
    description="Plan.",
    input_model=PlanArgs,
    output_model=PlanOut,
    handler=plan,
    risk=Risk.HIGH,
    describe=lambda args: "plan",
    open_world=True,
)

# The enum says the strings, the step stands where it is used, and every hint is the spec's default.
PLAN_FULL = (
    '{"name":"demo_plan","description":"Plan. Risk: high.","inputSchema":{"additionalProperties":false,'
    '"properties":{"steps":{"items":{"properties":{"to":{"type":"string"}},"required":["to"],"type":"object"},'
    '"type":"array"}},"required":["steps"],"type":"object"},"execution":{"taskSupport":"optional"},'
    '"outputSchema":{"properties":{"state":{"enum":["planned","done"]}},"type":"object"}}'
)


def test_a_definition_says_each_thing_once() -> None:
    definition = tool_definition(BoundTool(PLAN, None, "demo_plan", Risk.HIGH))
    assert budget.wire_json(definition.model_dump(mode="json", by_alias=True, exclude_none=True)) == PLAN_FULL


def test_every_namespace_on_stays_within_the_budget_per_tool() -> None:
    """Later namespaces must keep this too: the average over every tool of every namespace."""
    costs = budget.costs_of(budget.every_tool())
    assert {cost.namespace for cost in costs} == set(CATALOG)  # accounts or not, all measured
    visible = sum(cost.visible for cost in costs) / len(costs) / budget.CHARS_PER_TOKEN
    full = sum(cost.full for cost in costs) / len(costs) / budget.CHARS_PER_TOKEN
    assert visible <= budget.MAX_VISIBLE_TOKENS_PER_TOOL, f"{visible:.0f} tokens per tool, model-visible"
    assert full <= budget.MAX_FULL_TOKENS_PER_TOOL, f"{full:.0f} tokens per tool, full definition"


def test_the_default_selection_stays_within_the_visible_budget_per_tool() -> None:
    """What a person gets without choosing, every namespace configured: the tools a model sees first."""
    costs = budget.costs_of(budget.default_selection(budget.every_tool()))
    assert {cost.namespace for cost in costs} == set(CATALOG)
    visible = sum(cost.visible for cost in costs) / len(costs) / budget.CHARS_PER_TOKEN
    assert visible <= budget.MAX_VISIBLE_TOKENS_PER_TOOL, f"{visible:.1f} tokens per tool, model-visible"


# The default selection's full definitions today, which must not grow. No lower target: hosts send a
# model the input schema, which the visible budget holds; docs/performance.md ("Tool list") says
# what is left in the rest and why it stays.
DEFAULT_FULL_TOKENS_PER_TOOL = 272


def default_full_tokens_per_tool() -> float:
    costs = budget.costs_of(budget.default_selection(budget.every_tool()))
    assert {cost.namespace for cost in costs} == set(CATALOG)
    return sum(cost.full for cost in costs) / len(costs) / budget.CHARS_PER_TOKEN


def test_the_default_selection_in_full_costs_no_more_than_it_does_now() -> None:
    full = default_full_tokens_per_tool()
    assert round(full) <= DEFAULT_FULL_TOKENS_PER_TOOL, f"{full:.1f} tokens per tool, full definition"


def test_summaries_add_up_per_namespace() -> None:
    costs = [budget.ToolCost("a.x", "a", "core", 40, 100), budget.ToolCost("a.y", "a", "extended", 4, 8)]
    costs.append(budget.ToolCost("b.z", "b", "core", 400, 1000))
    rows = {row.label: row for row in budget.summarize(costs)}
    assert (rows["a"].tools, rows["a"].visible, rows["a"].full) == (2, 44, 108)
    assert (rows["total"].tools, rows["total"].visible, rows["total"].full) == (3, 444, 1108)
    assert rows["total"].visible_per_tool == 444 / 3 / 4
    table = budget.format_comparison(costs[:1], costs, "before -> after")
    assert "b" in table and "1 -> 3" in table


def test_tools_budget_prints_the_current_selection(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    table = run_cli(config, "tools", "--budget")
    assert table.returncode == 0, table.stderr
    assert "~tokens = chars / 4" in table.stdout and "demo.echo" in table.stdout
    figures = json.loads(run_cli(config, "tools", "--budget", "--json").stdout)
    echo = next(item for item in figures["tools"] if item["name"] == "demo.echo")
    assert echo["visible"] < echo["full"]
    total = sum(item["visible"] for item in figures["tools"])
    assert f"{total:,}" in table.stdout.split("total", 1)[1]
    narrowed = json.loads(run_cli(config, "tools", "--budget", "--json", "--tools", "demo.echo").stdout)
    assert [item["name"] for item in narrowed["tools"]] == ["demo.echo"]


def test_bench_compares_with_saved_figures(tmp_path: Path) -> None:
    saved = tmp_path / "now.json"
    bench = [sys.executable, str(ROOT / "bench" / "context.py")]
    first = subprocess.run([*bench, "--save", str(saved)], capture_output=True, text=True, env=child_env(), timeout=120)
    assert first.returncode == 0, first.stderr
    assert "every namespace on" in first.stdout and "default selection" in first.stdout
    again = subprocess.run(
        [*bench, "--against", str(saved)], capture_output=True, text=True, env=child_env(), timeout=120
    )
    assert again.returncode == 0, again.stderr
    total = next(line for line in again.stdout.splitlines()[::-1] if line.startswith("total"))
    tools = len(json.loads(saved.read_text())["default"])  # the last table: the default selection
    assert total.split()[1:4] == [str(tools), "->", str(tools)]


def test_dynamic_discovery_counts_the_meta_tools_it_serves(tmp_path: Path) -> None:
    config = demo_config(tmp_path, servers='["demo"]\ndiscovery = "dynamic"')
    figures = json.loads(run_cli(config, "tools", "--budget", "--json").stdout)
    names = [item["name"] for item in figures["tools"]]
    assert names[:2] == ["toolsets.list", "toolsets.enable"] and "demo.echo" in names
