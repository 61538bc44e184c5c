"""Which tools are served: the `[server] tools` selection and the toolsets a model may enable.

An entry names a namespace (`files`), a tier of one (`notes.core`), a single tool
(`files.read`), every running namespace (`*`, `*.core`) or every tool that only reads
(`read_only`); a leading `-` excludes what it names (the grammar is `inventory.grammar`'s, the
one `[http.oauth] scopes` writes too). Order does not matter: the served set is everything the entries include minus
everything they exclude, so an exclusion always wins. Without `[server] tools` the default
is `*.core`: the core tier of every running namespace.

Selection decides what a client is shown, not what is allowed: `[policy] disabled` and
`read_only` hide and refuse tools whatever the selection says. This module knows nothing
about MCP or policy; it sees namespaces only as lists of `ToolSpec`s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_tools.inventory import grammar
from mcp_tools.inventory.grammar import ENTRY, TIERS, WILDCARD, Entry, EntryError, suggest

if TYPE_CHECKING:
    from mcp_tools.core.tooling import ToolSpec

__all__ = ["ENTRY", "TIERS", "WILDCARD", "Entry", "Selection", "SelectionError", "parse_entries", "resolve", "suggest"]

DEFAULT_SELECTION = ("*.core",)
SelectionError = EntryError  # a selection entry that names nothing; the message suggests the closest name


def parse_entries(values: Iterable[str], namespaces: Iterable[str] | None = None) -> list[Entry]:
    """Check each entry's form (and, given the known namespaces, its namespace)."""
    return grammar.parse_entries(values, "selection entry", namespaces)


def named_namespaces(entries: Iterable[Entry]) -> list[str]:
    """Namespaces an including entry names explicitly: the person asked for them, so they must run."""
    return list(dict.fromkeys(e.namespace for e in entries if not e.exclude and not e.is_wildcard))


@dataclass
class Selection:
    """The outcome: each tool served with the entry that chose it, or left out with the reason."""

    entries: list[Entry]
    default: bool
    chosen: dict[str, str] = field(default_factory=dict)  # canonical name -> the including entry
    excluded: dict[str, str] = field(default_factory=dict)  # canonical name -> the excluding entry
    left_out: dict[str, str] = field(default_factory=dict)  # canonical name -> why it is not served

    def describe(self) -> str:
        shown = ", ".join(f'"{e.text}"' for e in self.entries) or "nothing"
        return f"[{shown}]" + (" (the default)" if self.default else "")

    def reason(self, name: str) -> str:
        if name in self.chosen:
            return f"selected by {self.chosen[name]!r}"
        if name in self.excluded:
            return f"excluded by {self.excluded[name]!r}"
        return self.left_out.get(name, "not selected")


def resolve(
    entries: Sequence[Entry],
    namespaces: Mapping[str, Sequence[ToolSpec[Any, Any, Any]]],
    running: Iterable[str] | None = None,
    default: bool = False,
) -> Selection:
    """Apply the entries to the tools of `namespaces` (name -> specs); wildcards cover `running` only.

    Every namespace an entry names must be in `namespaces`, and its tier or tool must exist.
    """
    active = set(namespaces if running is None else running)
    for entry in entries:
        if entry.is_wildcard or entry.part is None or entry.part in TIERS:
            continue
        specs = namespaces.get(entry.namespace, ())
        methods = [spec.method for spec in specs]
        if entry.part not in methods:
            from mcp_tools.util.suggest import closest

            close = closest(entry.part, [*TIERS, *methods])
            hint = f"; did you mean '{entry.namespace}.{close[0]}'?" if close else ""
            raise SelectionError(f"{entry.namespace} has no tool or tier {entry.part!r} (in {entry.text!r}){hint}")
    selection = Selection(list(entries), default)
    for name, specs in namespaces.items():
        for spec in specs:
            including = grammar.including(entries, spec, active)
            excluding = grammar.excluding(entries, spec, active)
            if excluding is not None:
                selection.excluded[spec.name] = excluding.text
            elif including is not None:
                selection.chosen[spec.name] = including.text
            elif name not in active:
                selection.left_out[spec.name] = "its namespace is not running"
            else:
                selection.left_out[spec.name] = f"{getattr(spec, 'tier', 'core')} tier, not selected"
    return selection
