"""Dynamic discovery: a client starts small and the model enables toolsets as it needs them.

With `[server] discovery = "dynamic"` a client is served two meta-tools besides the selection:
`toolsets.list` (every toolset with one line and its tools) and `toolsets.enable` (a namespace,
a tier or one tool). Enabling only ever adds tools the person left available: a tool hidden by
the policy (`disabled`, `read_only`, `deny`) or excluded in `[server] tools` cannot be enabled,
and every call still passes the policy gate, the meta-tools included.

The enabled set belongs to one client; the transport keeps it (see `mcp_server.ClientStates`)
and hands each call a `ClientToolsets` view as the meta-tools' service. This module knows
nothing about MCP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Protocol

from pydantic import Field

from mcp_tools.core.tooling import Arguments, CallContext, Output, Risk, ToolFailure, ToolSpec
from mcp_tools.core.toolsets import TIERS, SelectionError, parse_entries, suggest

if TYPE_CHECKING:
    from mcp_tools.inventory.chain import Audience, Step
    from mcp_tools.policy.gate import BoundTool


class Reach(Protocol):
    """What a view needs of the catalog (`mcp_tools.inventory.catalog.Catalog`)."""

    def available(self, namespace: str | None = None) -> list[BoundTool]: ...

    def refusal(self, spec: ToolSpec[Any, Any, Any], audience: Audience) -> Step | None: ...

    def description(self, namespace: str) -> str: ...


class ClientToolsets:
    """One client's view of the tools: what it is served now, and what it may still enable."""

    def __init__(self, catalog: Reach, enabled: set[str], namespace: str | None = None) -> None:
        self.catalog = catalog
        self.enabled = enabled  # canonical names; the client's own set, kept by the transport
        self.namespace = namespace  # a per-namespace endpoint offers only its own toolset
        self.changed = False

    def available(self) -> list[BoundTool]:
        return self.catalog.available(self.namespace)

    def served(self) -> list[BoundTool]:
        return [tool for tool in self.available() if self.serves(tool)]

    def serves(self, tool: BoundTool) -> bool:
        """Whether this client is served the tool, OAuth reach aside: the catalog's chain decides."""
        from mcp_tools.inventory.chain import Audience

        return self.catalog.refusal(tool.spec, Audience(self.namespace, view=self)) is None

    def enable(self, names: list[str]) -> list[BoundTool]:
        """Add what the names select among the available tools; returns the newly served ones."""
        available = self.available()
        by_wire = {tool.wire_name: tool.spec.name for tool in available}
        toolsets = sorted({tool.spec.namespace for tool in available})
        added: list[BoundTool] = []
        for raw in names:
            name = by_wire.get(raw.strip(), raw.strip())
            try:
                entry = parse_entries([name], toolsets)[0]
            except SelectionError:
                entry = None
            if entry is None or entry.exclude or entry.is_wildcard:
                raise ToolFailure(
                    "invalid_arguments",
                    f"there is no toolset or tool {raw!r} to enable{suggest(raw, toolsets)}",
                    "Call toolsets_list for the names.",
                )
            matched = [tool for tool in available if entry.matches(tool.spec, toolsets)]
            if not matched:
                raise ToolFailure(
                    "invalid_arguments",
                    f"there is no toolset or tool {raw!r} to enable",
                    "Call toolsets_list for the names.",
                )
            for tool in matched:
                if not self.serves(tool):
                    self.enabled.add(tool.spec.name)
                    added.append(tool)
        self.changed = self.changed or bool(added)
        return added


class ListArgs(Arguments):
    pass


class ToolsetInfo(Output):
    name: str
    description: str
    tools: list[str]
    enabled: list[str]


class ListResult(Output):
    toolsets: list[ToolsetInfo]


class EnableArgs(Arguments):
    toolsets: list[Annotated[str, Field(max_length=100)]] = Field(
        min_length=1, max_length=20, description="Toolset ('files'), tier ('files.extended') or tool ('files_move')"
    )


class EnableResult(Output):
    enabled: list[str]
    served: int


async def list_toolsets(view: ClientToolsets, args: ListArgs, ctx: CallContext) -> ListResult:
    groups: dict[str, list[BoundTool]] = {}
    for tool in view.available():
        groups.setdefault(tool.spec.namespace, []).append(tool)
    return ListResult(
        toolsets=[
            ToolsetInfo(
                name=name,
                description=view.catalog.description(name),
                tools=[tool.wire_name for tool in tools],
                enabled=[tool.wire_name for tool in tools if view.serves(tool)],
            )
            for name, tools in groups.items()
        ]
    )


async def enable_toolsets(view: ClientToolsets, args: EnableArgs, ctx: CallContext) -> EnableResult:
    added = view.enable(args.toolsets)
    return EnableResult(enabled=[tool.wire_name for tool in added], served=len(view.served()))


def render_list(result: ListResult) -> str:
    lines = []
    for toolset in result.toolsets:
        on = f"{len(toolset.enabled)}/{len(toolset.tools)} on"
        lines.append(f"{toolset.name} ({on}): {toolset.description} Tools: {', '.join(toolset.tools)}")
    return "\n".join(lines) or "No toolsets are available."


def render_enable(result: EnableResult) -> str:
    if not result.enabled:
        return f"Nothing new: those tools were already on ({result.served} tools served)."
    return f"Enabled {', '.join(result.enabled)}; {result.served} tools served. The tool list has changed."


META_TOOLS: list[ToolSpec[ClientToolsets, Any, Any]] = [
    ToolSpec(
        name="toolsets.list",
        tier="core",
        title="List toolsets",
        description="Toolsets you can enable, one line each, with their tools and which are on.",
        input_model=ListArgs,
        output_model=ListResult,
        handler=list_toolsets,
        risk=Risk.LOW,
        describe=lambda args: "list the toolsets",
        read_only=True,
        idempotent=True,
        render_text=render_list,
    ),
    ToolSpec(
        name="toolsets.enable",
        tier="core",
        title="Enable toolsets",
        description="Add a toolset's tools to your tool list for the rest of this conversation.",
        input_model=EnableArgs,
        output_model=EnableResult,
        handler=enable_toolsets,
        risk=Risk.LOW,
        describe=lambda args: f"enable {', '.join(args.toolsets)}",
        read_only=True,
        idempotent=True,
        render_text=render_enable,
    ),
]
assert all(spec.method not in TIERS for spec in META_TOOLS)
