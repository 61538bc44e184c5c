"""`mcp-tools tools`: what is served, under which wire names and risks, and what it costs in context."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from mcp_tools.cli.common import add_namespaces_option, config_of, namespaces_of, tools_of
from mcp_tools.core.config import ConfigError


def add_commands(commands: Any) -> None:
    tools = commands.add_parser("tools", help="list the tools with their wire names, risks and annotations")
    tools.add_argument("--json", action="store_true")
    add_namespaces_option(tools, "comma-separated namespaces to run")
    tools.add_argument("--tools", help="a selection to show instead of [server] tools")
    tools.add_argument("--all", action="store_true", help="also the tools not served, and why")
    tools.add_argument("--budget", action="store_true", help="characters and ~tokens (chars/4) per tool and namespace")
    tools.add_argument(
        "--explain",
        action="store_true",
        help="also where each risk comes from, and each filter's verdict on serving the tool",
    )
    tools.add_argument(
        "--scopes", help="with --explain: as a sign-in granted these OAuth scopes (space-separated) sees them"
    )
    tools.set_defaults(handler=cmd_tools)


def cmd_tools(args: argparse.Namespace) -> int:
    from mcp_tools.composition.app import build_app
    from mcp_tools.transports.mcp_server import tool_definition

    if args.budget:  # what definitions cost needs their declarations only, not a configured namespace
        app = build_app(config_of(args), namespaces_of(args), tools_of(args), diagnose=True)
        app.store.close()
        for _, problem in app.problems:
            if problem.startswith("invalid config"):
                raise ConfigError(problem)
        return print_budget(app, app.visible_tools() + selected_but_not_running(app), args.json)
    cannot_start: str | None = None
    try:
        app = build_app(config_of(args), namespaces_of(args), tools_of(args))
    except ConfigError as exc:  # a namespace asked for by name cannot start: list the rest, then say why
        app = build_app(config_of(args), namespaces_of(args), tools_of(args), diagnose=True)
        if any(problem.startswith("invalid config") for _, problem in app.problems):
            app.store.close()
            raise
        cannot_start = str(exc)
    app.store.close()
    if args.explain:
        return print_explained(app, args, cannot_start)
    served = app.visible_tools()
    rows: list[dict[str, Any]] = []
    for tool in served if not args.all else list(app.tools.values()):
        definition = tool_definition(tool)
        shown = definition.annotations
        annotations = shown.model_dump(by_alias=True, exclude_none=True) if shown else {}
        rows.append(
            {
                "name": tool.spec.name,
                "wire_name": tool.wire_name,
                "risk": tool.configured_risk.label,
                "escalates": tool.spec.dynamic_risk is not None,
                "tier": tool.spec.tier,
                "served": tool in served,
                "why": app.why(tool.spec),
                "annotations": annotations,
                "description": tool.spec.description,
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
        return _cannot_start(cannot_start)
    print(
        f"selection: {app.selection.describe() if app.selection else 'everything'}; discovery: "
        f"{app.config.server.discovery}"
    )
    for row in rows:
        hints = ",".join(key.removesuffix("Hint") for key, value in row["annotations"].items() if value)
        risk = row["risk"] + ("+" if row["escalates"] else "")
        line = f"{row['name']:<28} {row['wire_name']:<28} {risk:<8} {row['tier']:<9} {hints}"
        print(line if row["served"] else f"{line}\n{'':28} not served: {row['why']}")
    hidden = len(app.tools) - len(served)
    if hidden and not args.all:
        from mcp_tools.util.commands import mcp_tools

        print(
            f"{hidden} more tools of the running namespaces are not served; `{mcp_tools('tools', '--all')}` says why."
        )
    return _cannot_start(cannot_start)


def print_explained(app: Any, args: argparse.Namespace, cannot_start: str | None) -> int:
    """Each tool's facts and every filter's verdict, as the catalog answers `tools/list` and
    `tools/call` (for a sign-in granted `--scopes`, when given)."""
    from mcp_tools.inventory.chain import Audience

    reaches = None
    if args.scopes is not None:
        oauth = app.config.http.oauth
        if oauth is None:
            raise ConfigError("--scopes needs [http.oauth] in the config")
        from mcp_tools.oauth.guard import Reach

        reaches = Reach(oauth, frozenset(args.scopes.split()))
    audience = Audience(reaches=reaches)
    rows = []
    for tool in app.tools.values():
        explained = app.catalog.explain(tool.spec, audience)
        if explained.served or args.all:
            rows.append({**app.catalog.facts[tool.spec.name].as_dict(), **explained.as_dict()})
    if args.json:
        print(json.dumps(rows, indent=2))
        return _cannot_start(cannot_start)
    for row in rows:
        print(f"{row['name']:<28} {row['risk']:<8} {'served' if row['served'] else 'not served'}")
        print(f"{'':4}risk: {row['risk_from']}")
        for step in row["steps"]:
            print(f"{'':4}{step['filter']:<10} {'pass' if step['passed'] else 'STOP'}  {step['reason']}")
    return _cannot_start(cannot_start)


def _cannot_start(reason: str | None) -> int:
    """1, with the reason on stderr, when a namespace asked for could not start (as `serve` would refuse)."""
    if reason is None:
        return 0
    print(f"mcp-tools: {reason}", file=sys.stderr)
    return 1


def selected_but_not_running(app: Any) -> list[Any]:
    """The selected tools of namespaces that could not start here (no vault, no account), bound to
    no service: their definitions are the same whatever the configuration."""
    from mcp_tools.composition.app import wire_name
    from mcp_tools.policy.gate import BoundTool
    from mcp_tools.servers import CATALOG, load_namespace

    if app.selection is None:
        return []
    separator = app.config.server.wire_separator
    tools = []
    for name in CATALOG:
        if name in app.namespaces:
            continue
        namespace = load_namespace(name)
        # left out as its default configuration does (one notes vault: no `vault` argument)
        withheld = namespace.withheld(None) if namespace.withheld is not None else ()
        tools += [
            BoundTool(spec, None, wire_name(spec.name, separator), app.rules.configured_risk(spec), withheld)
            for spec in namespace.tools
            if spec.name in app.selection.chosen and app.rules.hidden_reason(spec) is None
        ]
    return tools


def print_budget(app: Any, served: list[Any], as_json: bool) -> int:
    """What the served definitions cost in a model's context (`mcp_tools.transports.budget`)."""
    from mcp_tools.transports import budget

    if app.config.server.discovery == "dynamic":  # each client starts with the meta-tools too
        from mcp_tools.composition.app import wire_name
        from mcp_tools.inventory.discovery import META_TOOLS
        from mcp_tools.policy.gate import BoundTool

        separator = app.config.server.wire_separator
        served = [
            BoundTool(spec, None, wire_name(spec.name, separator), app.rules.configured_risk(spec))
            for spec in META_TOOLS
            if app.rules.hidden_reason(spec) is None
        ] + served
    costs = budget.costs_of(served)
    if as_json:
        print(json.dumps({"tools": budget.as_json(costs), "instructions_chars": len(app.instructions())}, indent=2))
        return 0
    print(f"selection: {app.selection.describe() if app.selection else 'everything'}")
    print("visible = name + description + inputSchema; full = the whole definition; ~tokens = chars / 4")
    print()
    print(budget.format_tools(costs))
    print(
        f"\nserver instructions: {len(app.instructions()):,} chars, ~{budget.tokens(len(app.instructions())):,} tokens"
    )
    return 0
