"""The one grammar an entry names tools in: `[server] tools`, `[http.oauth] scopes` and the
toolsets a model enables all write the same entries and match them the same way.

    entry   := ["-"] target
    target  := "*" ["." tier]             every running namespace (or one tier of each)
             | "read_only"                every tool that only reads
             | namespace ["." (tier | method)]

A leading `-` excludes what the entry names: a list of entries covers a tool when some entry
includes it and none excludes it, whatever the order. This module knows nothing about MCP,
OAuth or the policy; it sees a tool only as its `ToolSpec`'s namespace, method, tier and
`read_only`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

TIERS = ("core", "extended")
WILDCARD = "*"
READ_ONLY = "read_only"
ENTRY = re.compile(r"^(-?)(\*|[a-z][a-z0-9_]*)(?:\.([a-z][a-z0-9_]*))?$")
FORMS = (
    "namespace, namespace.tier, namespace.tool, '*' / '*.core' or 'read_only', optionally with a leading '-' to exclude"
)


class EntryError(ValueError):
    """An entry that names nothing; the message says what to write (and the closest name)."""


@dataclass(frozen=True)
class Entry:
    text: str
    exclude: bool
    namespace: str  # a namespace name, "*" or "read_only"
    part: str | None  # a tier, a tool's method, or None for the whole namespace

    @property
    def name(self) -> str:
        return self.text.removeprefix("-")

    @property
    def is_wildcard(self) -> bool:
        """Names no namespace of its own (`*`, `*.core`, `read_only`)."""
        return self.namespace in (WILDCARD, READ_ONLY)

    def matches(self, spec: Any, running: Iterable[str] | None = None) -> bool:
        """Whether the entry names the tool; `*` covers only the `running` namespaces when given."""
        if self.namespace == READ_ONLY:
            return bool(getattr(spec, "read_only", False))
        if self.namespace == WILDCARD:
            if running is not None and spec.namespace not in running:
                return False
        elif spec.namespace != self.namespace:
            return False
        if self.part is None:
            return True
        if self.part in TIERS:
            return getattr(spec, "tier", "core") == self.part
        return bool(spec.method == self.part)


def parse_entry(raw: str, kind: str = "tool entry", namespaces: Iterable[str] | None = None) -> Entry:
    """One entry, its form checked (and, given the known namespaces, its namespace)."""
    text = raw.strip()
    match = ENTRY.match(text)
    if not match:
        raise EntryError(f"{raw!r} is not a {kind}: expected {FORMS}")
    exclude, namespace, part = bool(match.group(1)), match.group(2), match.group(3)
    if namespace == WILDCARD and part not in (None, *TIERS):
        raise EntryError(f"{raw!r}: after '*.' only a tier may follow ({', '.join(TIERS)})")
    if namespace == READ_ONLY and part is not None:
        raise EntryError(f"{raw!r}: 'read_only' names every tool that only reads; nothing may follow it")
    known = list(namespaces) if namespaces is not None else None
    if known is not None and namespace not in (WILDCARD, READ_ONLY) and namespace not in known:
        raise EntryError(f"unknown namespace {namespace!r} in {raw!r}{suggest(namespace, known)}")
    return Entry(text, exclude, namespace, part)


def parse_entries(
    values: Iterable[str], kind: str = "tool entry", namespaces: Iterable[str] | None = None
) -> list[Entry]:
    return [parse_entry(raw, kind, namespaces) for raw in values]


def including(entries: Sequence[Entry], spec: Any, running: Iterable[str] | None = None) -> Entry | None:
    """The first entry that includes the tool."""
    return next((e for e in entries if not e.exclude and e.matches(spec, running)), None)


def excluding(entries: Sequence[Entry], spec: Any, running: Iterable[str] | None = None) -> Entry | None:
    """The first entry that excludes the tool (an exclusion always wins)."""
    return next((e for e in entries if e.exclude and e.matches(spec, running)), None)


def covers(entries: Sequence[Entry], spec: Any, running: Iterable[str] | None = None) -> bool:
    """Some entry includes the tool and none excludes it."""
    return including(entries, spec, running) is not None and excluding(entries, spec, running) is None


def suggest(name: str, candidates: Iterable[str]) -> str:
    from mcp_tools.util.suggest import closest

    close = closest(name, candidates)
    return f"; did you mean {close[0]!r}?" if close else ""
