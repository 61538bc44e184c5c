"""The catalog: which tools exist, under which names, and who may reach them.

Every face resolves a written name here before anything runs: MCP `tools/list` and
`tools/call`, text calls (whole replies, streams, the HTTP `/text-calls` route) and
`mcp-tools call`. A name is a canonical name (`gmail.search`), its wire form (`gmail_search`)
or, for text calls, an alias another system's models write (`gmail_list`, `write_file`,
`fs.readFile`), declared by the namespace that owns the tool (`ToolSpec.aliases`). The answer
is a bound tool the face hands to `PolicyGate.call`, or one failure (not served, namespace off,
unknown, with the closest name) that the face hands to `PolicyGate.refuse`, which records it:
the caller reads exactly what the audit row holds.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_tools.core.tooling import Namespace, ToolAlias, ToolFailure, ToolSpec
from mcp_tools.core.toolsets import Selection
from mcp_tools.inventory import chain
from mcp_tools.inventory.chain import Audience, Explanation
from mcp_tools.inventory.discovery import META_TOOLS, ClientToolsets
from mcp_tools.inventory.facts import ToolFacts
from mcp_tools.policy.gate import BoundTool
from mcp_tools.policy.rules import RulePolicy
from mcp_tools.servers import CATALOG
from mcp_tools.util.suggest import closest

WIRE_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
MAX_NAMES_SHOWN = 60  # tool names listed in an unknown_tool hint for calls written as text
# The namespaces this version has, as imported: what a name may be declared by even when a
# namespace is off, or (in a build without it) no longer in the catalog.
_DECLARING = dict(CATALOG)


def wire_name(canonical: str, separator: str) -> str:
    return canonical if separator == "." else canonical.replace(".", separator)


@dataclass
class NamespaceStatus:
    name: str
    enabled: bool
    reason: str | None = None
    needs_account: bool = False


@dataclass(frozen=True)
class Alias:
    """An alias with the canonical tool it stands for."""

    tool: str
    declaration: ToolAlias

    @property
    def renames(self) -> Mapping[str, str]:
        return self.declaration.renames

    def arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.declaration.arguments(arguments)


@dataclass(frozen=True)
class Declared:
    """Every tool every namespace declares, running or not: their canonical names and aliases."""

    canonical: Mapping[str, tuple[str, ...]]  # namespace -> methods
    aliases: Mapping[str, Alias]

    @functools.cached_property
    def names(self) -> frozenset[str]:
        return frozenset(f"{namespace}.{method}" for namespace, methods in self.canonical.items() for method in methods)


@functools.cache
def declared() -> Declared:
    """Read from the namespaces' declarations on first use (it imports every namespace module)."""
    canonical: dict[str, tuple[str, ...]] = {}
    aliases: dict[str, Alias] = {}
    for name, module in _DECLARING.items():
        try:
            namespace: Namespace[Any] = importlib.import_module(module).NAMESPACE
        except ImportError:
            continue
        canonical[name] = tuple(spec.method for spec in namespace.tools)
        for spec in namespace.tools:
            for alias in spec.aliases:
                if alias.name in aliases:
                    first = aliases[alias.name].tool
                    raise ValueError(f"alias {alias.name!r} is declared twice ({first}, {spec.name})")
                aliases[alias.name] = Alias(spec.name, alias)
    return Declared(canonical, aliases)


def lookup(name: str) -> Alias | None:
    """The alias a written name stands for, or None when it is no other system's name.

    `filesystem_read_file` is `filesystem.read_file` as clients that reject dots write it.
    """
    aliases = declared().aliases
    found = aliases.get(name)
    if found is None and "." not in name and "_" in name:
        found = aliases.get(name.replace("_", ".", 1))
        if found is not None and "." not in found.declaration.name:
            found = None
    return found


def resolve_alias(name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The canonical tool and its arguments for an alias; any other name passes through unchanged.

    Raises ToolFailure(invalid_arguments) naming the field in the alias's own terms.
    """
    alias = lookup(name)
    if alias is None:
        return name, arguments
    return alias.tool, alias.arguments(arguments)


def is_alias(name: str) -> bool:
    return name in declared().aliases


def is_known(name: str) -> bool:
    """A name some model could mean as a tool: canonical, its wire form, or an alias."""
    names = declared().names
    return name in names or name.replace("_", ".", 1) in names or lookup(name) is not None


def suggest(name: str, available: Iterable[str] = ()) -> str | None:
    """The closest known name (an alias, a canonical name, or one of `available`), or None."""
    known = declared()
    found = closest(name, [*known.aliases, *sorted(known.names), *available])
    return found[0] if found else None


def __getattr__(name: str) -> Any:
    """`ALIASES`, `CANONICAL` and `CANONICAL_NAMES`, read from the namespaces on first use."""
    if name == "ALIASES":
        return declared().aliases
    if name == "CANONICAL":
        return declared().canonical
    if name == "CANONICAL_NAMES":
        return declared().names
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class Resolution:
    """What a written name comes to for one caller: a tool to call, or the failure to record."""

    name: str  # the tool's canonical name, else the name as far as it was resolved
    arguments: Any
    tool: BoundTool | None = None
    failure: ToolFailure | None = None
    written_as: str | None = None  # the alias the call was written with, when no tool has that name


@dataclass
class Catalog:
    """The running tools, their names, and what each caller is served."""

    rules: RulePolicy
    separator: str = "_"
    dynamic: bool = False  # `[server] discovery = "dynamic"`: each client enables toolsets
    tools: dict[str, BoundTool] = field(default_factory=dict)  # by wire name, every running namespace's
    statuses: list[NamespaceStatus] = field(default_factory=list)
    selection: Selection | None = None  # None: everything is served
    descriptions: dict[str, str] = field(default_factory=dict)  # running namespace -> one line
    # dynamic discovery: the toolsets each principal enabled, by (namespace endpoint, principal)
    enabled_toolsets: dict[tuple[str | None, str], set[str]] = field(default_factory=dict)
    facts: dict[str, ToolFacts] = field(default_factory=dict)  # by canonical name, every running tool's
    _by_name: dict[str, BoundTool] = field(default_factory=dict)

    def add(self, spec: ToolSpec[Any, Any, Any], service: Any) -> BoundTool:
        wire = wire_name(spec.name, self.separator)
        if not WIRE_NAME.match(wire):
            raise ValueError(f"tool name {wire!r} is not a valid MCP tool name")
        facts = self.facts[spec.name] = ToolFacts.of(spec, wire, self.rules)
        bound = BoundTool(spec, service, wire, facts.risk)
        self.tools[wire] = self._by_name[spec.name] = bound
        return bound

    def find(self, name: str, namespace: str | None = None) -> BoundTool | None:
        """A running tool by wire name or canonical name, within a namespace when one is given."""
        tool = self.tools.get(name) or self._by_name.get(name)
        if tool is not None and namespace is not None and tool.spec.namespace != namespace:
            return None
        return tool

    # What is served: the questions `inventory.chain` asks, and the answers built on it

    def explain(self, spec: ToolSpec[Any, Any, Any], audience: Audience = chain.EVERYONE) -> Explanation:
        """Whether this audience is served the tool, with every filter's reason."""
        return chain.explain(self, spec, audience)

    def refusal(self, spec: ToolSpec[Any, Any, Any], audience: Audience = chain.EVERYONE) -> chain.Step | None:
        """The first filter that keeps the tool from this audience, or None when it is served."""
        return chain.first_refusal(self, spec, audience)

    def may_serve(self, spec: ToolSpec[Any, Any, Any]) -> bool:
        """Not hidden by the policy (`disabled`, `read_only`, `deny`) nor excluded in `[server] tools`."""
        excluded = self.selection.excluded if self.selection is not None else {}
        return self.rules.hidden_reason(spec) is None and spec.name not in excluded

    def available(self, namespace: str | None = None) -> list[BoundTool]:
        """What could be served: not hidden by the policy and not excluded by the selection."""
        return [
            tool
            for tool in self.tools.values()
            if self.may_serve(tool.spec) and (namespace is None or tool.spec.namespace == namespace)
        ]

    def is_selected(self, spec: ToolSpec[Any, Any, Any]) -> bool:
        return self.selection is None or spec.name in self.selection.chosen

    def visible(self, namespace: str | None = None) -> list[BoundTool]:
        """What a client is shown without dynamic discovery: selected, and not hidden by the policy."""
        return [tool for tool in self.available(namespace) if self.is_selected(tool.spec)]

    def description(self, namespace: str) -> str:
        return self.descriptions.get(namespace, "")

    def view(self, principal: str, namespace: str | None = None) -> ClientToolsets | None:
        """A principal's own view in dynamic discovery; None when every client gets the selection."""
        if not self.dynamic:
            return None
        return self.view_of(self.enabled_toolsets.setdefault((namespace, principal), set()), namespace)

    def view_of(self, enabled: set[str], namespace: str | None = None) -> ClientToolsets:
        """A client's view over the set of tools it enabled (kept by its transport)."""
        return ClientToolsets(self, enabled, namespace)

    def meta_tools(self) -> dict[str, BoundTool]:
        """Dynamic discovery's meta-tools the policy leaves visible, by wire name; each call
        binds them to its client's view."""
        tools: dict[str, BoundTool] = {}
        for spec in META_TOOLS:
            if self.rules.hidden_reason(spec) is None:
                wire = wire_name(spec.name, self.separator)
                tools[wire] = BoundTool(spec, None, wire, self.rules.configured_risk(spec))
        return tools

    def listed(
        self,
        namespace: str | None = None,
        view: ClientToolsets | None = None,
        reaches: Callable[[Any], bool] | None = None,
    ) -> list[BoundTool]:
        """What `tools/list` shows a caller: the tools the chain serves it (the meta-tools of
        dynamic discovery to every caller)."""
        audience = Audience(namespace, reaches, view)
        served = [tool for tool in self.tools.values() if self.refusal(tool.spec, audience) is None]
        return [*self.meta_tools().values(), *served] if view is not None else served

    def served(
        self,
        name: str,
        namespace: str | None = None,
        view: ClientToolsets | None = None,
        reaches: Callable[[Any], bool] | None = None,
    ) -> BoundTool | None:
        """The tool a caller calls by this name, or None when the chain does not serve it that caller.

        Without dynamic discovery a selected tool the policy hides is served so the gate refuses
        it in words; a dynamic view never holds one. With it, the meta-tools bound to the view.
        """
        if view is not None:
            meta = self.meta_tools()
            found = meta.get(name) or next((tool for tool in meta.values() if tool.spec.name == name), None)
            if found is not None:
                return BoundTool(found.spec, view, found.wire_name, found.configured_risk)
        tool = self.find(name, namespace)
        if tool is None:
            return None
        skip = ("policy",) if view is None else ()
        return tool if chain.first_refusal(self, tool.spec, Audience(namespace, reaches, view), skip) is None else None

    # Resolving a call

    def resolve(
        self,
        written: str,
        arguments: Any,
        transport: str,
        *,
        namespace: str | None = None,
        view: ClientToolsets | None = None,
        reaches: Callable[[Any], bool] | None = None,
        aliases: bool = False,
        served_only: bool = True,
        extra: Mapping[str, BoundTool] | None = None,
    ) -> Resolution:
        """The tool a caller means by a written name, with its arguments in the tool's terms.

        `extra` are tools served to this caller besides the catalog's (the approval card's);
        `aliases` lets other systems' names in (text calls); without `served_only` any running
        tool answers (`mcp-tools call`, run by the person). Raises ToolFailure when an alias's
        arguments cannot be put in the tool's terms.
        """
        if extra and written in extra:
            tool: BoundTool | None = extra[written]
        elif served_only:
            tool = self.served(written, namespace, view, reaches)
        else:
            tool = self.find(written, namespace)
        name, written_as = written, None
        alias = lookup(written) if aliases else None
        if alias is not None and tool is not None and alias.tool != tool.spec.name:
            alias = None  # a tool of ours by that name wins
        if alias is not None:  # also for our own wire names that other systems use (web_search)
            if tool is None:
                written_as = written
            arguments = alias.arguments(arguments)
            name = alias.tool
            tool = self.served(name, namespace, view, reaches)
        if tool is not None:
            return Resolution(tool.spec.name, arguments, tool, written_as=written_as)
        audience = Audience(namespace, reaches, view)
        if aliases:
            failure = self._unavailable(name, written, view, audience)
        else:
            failure = self.unknown(written, transport, audience)
        return Resolution(name, arguments, None, failure, written_as)

    def why(self, spec: ToolSpec[Any, Any, Any], audience: Audience = chain.EVERYONE) -> str:
        """Why a tool is served or not, in words for `mcp-tools tools` and `doctor`."""
        return self.explain(spec, audience).reason

    def not_served(self, name: str, spec: ToolSpec[Any, Any, Any], audience: Audience = chain.EVERYONE) -> ToolFailure:
        """A tool that exists but this caller is not served: the chain's reason, and how it would be."""
        toolset = f"{spec.namespace}.{spec.tier}"
        explained = self.explain(spec, audience)
        refusal = explained.refusal
        if refusal is not None and refusal.filter == "view":
            hint = f'Call toolsets_enable with {{"toolsets": ["{toolset}"]}}, then call it again.'
        elif refusal is not None and refusal.filter == "reach":
            hint = "Tell the person this sign-in's scopes do not reach it. Until then, use the tools that are listed."
        elif refusal is not None and refusal.filter == "endpoint":
            hint = f"It is served on /mcp and /{spec.namespace}/mcp. Here, use the tools that are listed."
        else:
            hint = (
                f"Tell the person: adding '{spec.name}' (or '{toolset}') to [server] tools in the config "
                "serves it. Until then, use the tools that are listed."
            )
        return ToolFailure("unknown_tool", f"{name} is not served to this client ({explained.reason})", hint)

    def unknown(self, name: str, transport: str, audience: Audience = chain.EVERYONE) -> ToolFailure:
        """Why there is no tool by this name, in terms the caller can act on.

        A tool of a namespace that is off says so and what to set; any other name gets the way
        to the names that suits the caller: tools/list for MCP clients, `mcp-tools tools` on the
        command line, the list itself for calls written as text.
        """
        for status in self.statuses:
            if not status.enabled and name.startswith((f"{status.name}.", f"{status.name}{self.separator}")):
                return ToolFailure(
                    "not_configured",
                    f"{name} belongs to the {status.name} namespace, which is off: {status.reason}",
                    f"Tell the person the {status.name} namespace is off and what to set; "
                    "`mcp-tools doctor` shows it too. Until then, use the tools that are listed.",
                    details={"namespace": status.name},
                )
        tool = self.find(name)
        if tool is not None and self.rules.hidden_reason(tool.spec) is None:  # a hidden tool is as unknown as none
            return self.not_served(name, tool.spec, audience)
        names = [tool.wire_name for tool in self.visible()]
        # suggest in the form the caller wrote: `files.nope` gets `files.read`, `files_nope` gets `files_read`
        dotted = "." in name and self.separator != "."
        close = closest(name, [tool.spec.name for tool in self.visible()] if dotted else names, limit=3)
        if transport == "cli":
            from mcp_tools.util.commands import mcp_tools

            where = f"Run `{mcp_tools('tools')}` for the names."
        elif transport == "text":
            shown = ", ".join(names[:MAX_NAMES_SHOWN]) + (", …" if len(names) > MAX_NAMES_SHOWN else "")
            where = f"The tools are: {shown or 'none'}."
        else:
            where = "Call tools/list for the names."
        guess = f"Did you mean {' or '.join(close)}? " if close else ""
        return ToolFailure("unknown_tool", f"there is no tool named {name!r}", guess + where)

    def _unavailable(
        self, name: str, written: str, view: ClientToolsets | None, audience: Audience = chain.EVERYONE
    ) -> ToolFailure:
        """For a call written as text: not served here, its namespace is off or not built, or unknown."""
        known = declared()
        canonical = name if name in known.names else name.replace("_", ".", 1)
        namespace = canonical.partition(".")[0]
        existing = self.find(name) or self.find(canonical)
        if existing is not None:  # a tool this principal is not served: the same answer MCP gives
            return self.unknown(existing.wire_name, "text", audience)
        running = {status.name for status in self.statuses if status.enabled}
        if canonical in known.names and namespace not in running:
            if namespace in CATALOG:
                status = next((status for status in self.statuses if status.name == namespace), None)
                reason = status.reason if status and status.reason else "it is not enabled"
                return ToolFailure(
                    "not_configured",
                    f"{canonical} is in the {namespace} namespace, which is off here: {reason}",
                    "Tell the person; `mcp-tools doctor` shows what to set. Do not retry until it is on.",
                )
            planned = ", ".join(sorted(set(known.canonical) - set(CATALOG)))
            return ToolFailure(
                "not_configured",
                f"{canonical} is in the {namespace} namespace, which this version of mcp-tools does not have yet "
                f"(planned: {planned})",
                "Use another tool or tell the person it is not available.",
            )
        served = view.served() if view is not None else self.visible()
        available = sorted({tool.spec.name for tool in served} | {tool.wire_name for tool in served})
        guess = suggest(written, available)
        message = f"there is no tool named {written!r}" + (f"; did you mean {guess!r}?" if guess else "")
        return ToolFailure("unknown_tool", message, "Use a name from the tool list.")

    def known_names(self) -> Callable[[str], bool]:
        """The names a bare call in prose may have: a running tool's (the meta-tools' in dynamic
        discovery), any namespace's, or an alias."""
        tools = [*self.tools.values(), *(self.meta_tools().values() if self.dynamic else ())]
        own = {tool.spec.name for tool in tools} | {tool.wire_name for tool in tools}
        return lambda name: name in own or is_known(name)
