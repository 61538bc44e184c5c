"""The namespace catalog: name -> module, imported only when the namespace is enabled."""

from __future__ import annotations

import importlib
from typing import Any

from mcp_tools.core.tooling import Namespace

CATALOG: dict[str, str] = {
    "files": "mcp_tools.servers.files",
    "notes": "mcp_tools.servers.notes",
    "calendar": "mcp_tools.servers.calendar",
    "web": "mcp_tools.servers.web",
    "inbox": "mcp_tools.servers.inbox",
    "gmail": "mcp_tools.servers.gmail",
    "drive": "mcp_tools.servers.drive",
    "docs": "mcp_tools.servers.docs",
    "sheets": "mcp_tools.servers.sheets",
    "tasks": "mcp_tools.servers.tasks",
    "contacts": "mcp_tools.servers.contacts",
    "terminal": "mcp_tools.servers.terminal",
    "http": "mcp_tools.servers.http_requests",
    "search": "mcp_tools.servers.search",  # last: it searches the namespaces enabled before it
}

# Namespaces that run only when asked for: their own section (even empty) or `[server] namespaces`
# naming them. A Google sign-in for Gmail must not ask for Drive's scopes, and a namespace left
# alone is not even imported, so it costs no start-up time.
OPT_IN: frozenset[str] = frozenset({"drive", "docs", "sheets", "tasks", "contacts"})


def asked_for(name: str, sections: Any, servers: Any) -> bool:
    """Whether an opt-in namespace was asked for (any other namespace always is)."""
    return name not in OPT_IN or name in sections or (servers is not None and name in servers)


def not_asked_for(name: str) -> str:
    """Why an opt-in namespace is off, and how to turn it on."""
    return f"add a [{name}] section (or name {name} in [server] namespaces) to turn it on"


# Config sections shared by several namespaces rather than owned by one, with their models:
# `[google]` holds the Google account every Google namespace (gmail, drive, docs, sheets, tasks,
# contacts) uses.
SHARED_SECTIONS: dict[str, str] = {"google": "mcp_tools.servers.google.config:GoogleConfig"}


def load_namespace(name: str) -> Namespace[Any]:
    """Import a namespace module and return its `NAMESPACE` declaration."""
    if name not in CATALOG:
        known = ", ".join(sorted(CATALOG))
        raise KeyError(f"unknown namespace {name!r}; known: {known}")
    module = importlib.import_module(CATALOG[name])
    namespace: Namespace[Any] = module.NAMESPACE
    return namespace


def shared_section_model(name: str) -> Any:
    """The pydantic model of a shared section (`[google]`), imported on first use."""
    module, _, attribute = SHARED_SECTIONS[name].partition(":")
    return getattr(importlib.import_module(module), attribute)
