"""The namespace catalog: name -> module, imported only when the namespace is enabled."""

from __future__ import annotations

import importlib

from mcp_tools.tooling import Namespace

CATALOG: dict[str, str] = {
    "files": "mcp_tools.servers.files",
    "notes": "mcp_tools.servers.notes",
    "calendar": "mcp_tools.servers.calendar",
    "web": "mcp_tools.servers.web",
    "inbox": "mcp_tools.servers.inbox",
    "gmail": "mcp_tools.servers.gmail",
}

# Config sections shared by several namespaces rather than owned by one: `[google]` holds the
# Google account every Google namespace (gmail, later drive, docs, ...) signs in with.
SHARED_SECTIONS: frozenset[str] = frozenset({"google"})


def load_namespace(name: str) -> Namespace:
    """Import a namespace module and return its `NAMESPACE` declaration."""
    if name not in CATALOG:
        known = ", ".join(sorted(CATALOG))
        raise KeyError(f"unknown namespace {name!r}; known: {known}")
    module = importlib.import_module(CATALOG[name])
    namespace: Namespace = module.NAMESPACE
    return namespace
