"""What tool definitions cost in a model's context: characters and estimated tokens.

A definition is counted as the compact JSON that `tools/list` carries. The *model-visible* part
is what the model APIs take (`name`, `description`, `inputSchema`); the *full* definition adds
`title`, `outputSchema` and `annotations`. Tokens are estimated as characters / 4, the usual
rule of thumb for English and JSON; real tokenizers differ by a few percent either way.

Used by `mcp-tools tools --budget` and `bench/context.py`. It imports the package lazily and
only through names that have long existed, so the bench can also measure an older checkout.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

CHARS_PER_TOKEN = 4
MODEL_VISIBLE_KEYS = ("name", "description", "inputSchema")
# The budget every namespace keeps, averaged over all tools with every namespace on.
MAX_VISIBLE_TOKENS_PER_TOOL = 150
MAX_FULL_TOKENS_PER_TOOL = 250


def tokens(chars: float) -> int:
    """Estimated tokens for a number of characters (characters / 4, rounded)."""
    return round(chars / CHARS_PER_TOKEN)


def wire_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class ToolCost:
    name: str  # canonical
    namespace: str
    tier: str
    visible: int  # characters of name + description + inputSchema
    full: int  # characters of the whole definition

    @property
    def visible_tokens(self) -> int:
        return tokens(self.visible)

    @property
    def full_tokens(self) -> int:
        return tokens(self.full)


def cost_of(definition: dict[str, Any], name: str, tier: str = "core") -> ToolCost:
    """The cost of one wire definition (`Tool.model_dump(mode="json", by_alias=True, exclude_none=True)`)."""
    visible = {key: definition[key] for key in MODEL_VISIBLE_KEYS if key in definition}
    return ToolCost(name, name.split(".", 1)[0], tier, len(wire_json(visible)), len(wire_json(definition)))


def costs_of(tools: Iterable[Any]) -> list[ToolCost]:
    """Costs of bound tools, from the definitions the server would list."""
    from mcp_tools.transports.mcp_server import tool_definition

    out = []
    for tool in tools:
        definition = tool_definition(tool).model_dump(mode="json", by_alias=True, exclude_none=True)
        out.append(cost_of(definition, tool.spec.name, getattr(tool.spec, "tier", "core")))
    return out


def every_tool(wire_separator: str = "_") -> list[Any]:
    """Every tool of every namespace in the catalog, bound to no service.

    Definitions come from the specs and the shipped policy alone, so namespaces that need an
    account (calendar, web) are measured without credentials or running services.
    """
    from mcp_tools.core.config import PolicySettings
    from mcp_tools.policy.gate import BoundTool
    from mcp_tools.policy.rules import RulePolicy
    from mcp_tools.servers import CATALOG, load_namespace

    rules = RulePolicy(PolicySettings())
    tools = []
    for name in CATALOG:
        namespace = load_namespace(name)
        # what a namespace leaves out as its default configuration does (one notes vault: no `vault`)
        withheld = namespace.withheld(None) if namespace.withheld is not None else ()
        for spec in namespace.tools:
            wire = spec.name if wire_separator == "." else spec.name.replace(".", wire_separator)
            tools.append(BoundTool(spec, None, wire, rules.configured_risk(spec), withheld))
    return tools


def default_selection(tools: Sequence[Any]) -> list[Any]:
    """The tools the default `[server] tools` selection serves, every namespace started."""
    try:
        from mcp_tools.core.toolsets import DEFAULT_SELECTION, parse_entries, resolve
    except ImportError:  # a checkout from before selection existed served everything
        return list(tools)
    namespaces: dict[str, list[Any]] = {}
    for tool in tools:
        namespaces.setdefault(tool.spec.namespace, []).append(tool.spec)
    selection = resolve(parse_entries(DEFAULT_SELECTION), namespaces)
    return [tool for tool in tools if tool.spec.name in selection.chosen]


@dataclass(frozen=True)
class Summary:
    label: str
    tools: int
    visible: int
    full: int

    @property
    def visible_per_tool(self) -> float:
        return self.visible / self.tools / CHARS_PER_TOKEN if self.tools else 0.0

    @property
    def full_per_tool(self) -> float:
        return self.full / self.tools / CHARS_PER_TOKEN if self.tools else 0.0


def summarize(costs: Sequence[ToolCost]) -> list[Summary]:
    """One row per namespace (in order of appearance), then the total."""
    order: dict[str, list[ToolCost]] = {}
    for cost in costs:
        order.setdefault(cost.namespace, []).append(cost)
    rows = [_summary(name, items) for name, items in order.items()]
    rows.append(_summary("total", list(costs)))
    return rows


def _summary(label: str, costs: Sequence[ToolCost]) -> Summary:
    return Summary(label, len(costs), sum(c.visible for c in costs), sum(c.full for c in costs))


HEADER = (
    f"{'':26}{'tools':>6}{'visible chars':>15}{'~tokens':>9}{'/tool':>7}{'full chars':>12}{'~tokens':>9}{'/tool':>7}"
)


def format_summary(costs: Sequence[ToolCost], title: str) -> str:
    lines = [title, HEADER]
    for row in summarize(costs):
        lines.append(
            f"{row.label:26}{row.tools:6}{row.visible:15,}{tokens(row.visible):9,}{row.visible_per_tool:7.0f}"
            f"{row.full:12,}{tokens(row.full):9,}{row.full_per_tool:7.0f}"
        )
    return "\n".join(lines)


def format_tools(costs: Sequence[ToolCost]) -> str:
    """Per tool, grouped by namespace with a subtotal, then the total."""
    lines = [f"{'tool':26}{'tier':>9}{'visible chars':>15}{'~tokens':>9}{'full chars':>12}{'~tokens':>9}"]
    by_namespace: dict[str, list[ToolCost]] = {}
    for cost in costs:
        by_namespace.setdefault(cost.namespace, []).append(cost)
    for items in by_namespace.values():
        for cost in items:
            lines.append(
                f"{cost.name:26}{cost.tier:>9}{cost.visible:15,}{cost.visible_tokens:9,}"
                f"{cost.full:12,}{cost.full_tokens:9,}"
            )
    lines.append("")
    lines.append(format_summary(costs, "per namespace (tokens ~ chars / 4):"))
    return "\n".join(lines)


def as_json(costs: Sequence[ToolCost]) -> list[dict[str, Any]]:
    return [asdict(cost) for cost in costs]


def from_json(items: Iterable[dict[str, Any]]) -> list[ToolCost]:
    return [ToolCost(**item) for item in items]


def format_comparison(before: Sequence[ToolCost], after: Sequence[ToolCost], title: str) -> str:
    """Before/after per namespace and in total, model-visible and full, in estimated tokens."""
    old = {row.label: row for row in summarize(before)}
    new = {row.label: row for row in summarize(after)}
    labels = [label for label in old if label != "total"]
    labels += [label for label in new if label not in old and label != "total"]
    labels.append("total")
    lines = [
        title,
        f"{'':14}{'tools':>11}{'visible ~tokens':>22}{'/tool':>12}{'full ~tokens':>22}{'/tool':>12}",
    ]
    empty = Summary("", 0, 0, 0)
    for label in labels:
        a, b = old.get(label, empty), new.get(label, empty)
        lines.append(
            f"{label:14}{a.tools:5} -> {b.tools:<3}"
            f"{tokens(a.visible):9,} -> {tokens(b.visible):<8,}{a.visible_per_tool:5.0f} -> {b.visible_per_tool:<4.0f}"
            f"{tokens(a.full):9,} -> {tokens(b.full):<8,}{a.full_per_tool:5.0f} -> {b.full_per_tool:<4.0f}"
        )
    return "\n".join(lines)
