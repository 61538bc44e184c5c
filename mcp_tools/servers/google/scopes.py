"""Which scopes each Google tool needs, and which API methods it calls.

A tool asks for the narrowest scope that covers what it does. Whether the granted scopes
suffice is answered from the discovery documents' own method scopes (`methods` here), so a
broader grant (gmail.modify, https://mail.google.com/) counts as it does at Google.

Some namespaces let the person choose how far they reach with `access` in their section:
"app" (the default: only files this app created or was given) asks for what the tool declares;
"read" and "all" ask for what the tool's `UpstreamScopes.wider` says for that level.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from mcp_tools.core.tooling import UpstreamScopes

PREFIX = "https://www.googleapis.com/auth/"
GMAIL_READONLY = PREFIX + "gmail.readonly"
GMAIL_COMPOSE = PREFIX + "gmail.compose"
GMAIL_SEND = PREFIX + "gmail.send"
GMAIL_MODIFY = PREFIX + "gmail.modify"
DRIVE_FILE = PREFIX + "drive.file"  # files this app created or the person opened with it
DRIVE_READONLY = PREFIX + "drive.readonly"
DRIVE = PREFIX + "drive"
DOCUMENTS_READONLY = PREFIX + "documents.readonly"
DOCUMENTS = PREFIX + "documents"
SPREADSHEETS_READONLY = PREFIX + "spreadsheets.readonly"
SPREADSHEETS = PREFIX + "spreadsheets"
TASKS_READONLY = PREFIX + "tasks.readonly"
TASKS = PREFIX + "tasks"
CALENDAR_READONLY = PREFIX + "calendar.readonly"
CALENDAR_EVENTS = PREFIX + "calendar.events"
CALENDAR_FREEBUSY = PREFIX + "calendar.freebusy"
CONTACTS_READONLY = PREFIX + "contacts.readonly"
CONTACTS_OTHER_READONLY = PREFIX + "contacts.other.readonly"
DIRECTORY_READONLY = PREFIX + "directory.readonly"


# Each Google tool declares what it asks for and the API methods it calls on its own `ToolSpec`
# (`scopes=UpstreamScopes(...)`): the narrowest scope that covers it at the default access level
# "app" (drive.file for Drive, Docs and Sheets: files this app created or the person opened with
# it; readonly for reading; compose for a draft, readonly too for the message a reply answers),
# and at "read" or "all" the wider scopes `access` asks for instead. Calendar's are asked only
# with its google backend, contacts' only when the namespace is on.


@functools.cache
def declared() -> dict[str, UpstreamScopes]:
    """Tool -> the scopes it declares, read from the Google namespaces' declarations on first use."""
    from mcp_tools.servers import load_namespace

    found: dict[str, UpstreamScopes] = {}
    for name in NAMESPACES:
        try:
            tools = load_namespace(name).tools
        except ImportError:  # pragma: no cover - a build without the namespace
            continue
        found.update((spec.name, spec.scopes) for spec in tools if spec.scopes is not None)
    return found


def __getattr__(name: str) -> Any:
    """`TOOLS`: tool -> (scopes asked at "app", API methods), as the declarations say."""
    if name == "TOOLS":
        return {tool: (scopes.asked, scopes.methods) for tool, scopes in declared().items()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


ACCESS_LEVELS = ("app", "read", "all")


def asked_scopes(tool: str, access: str = "app") -> tuple[str, ...]:
    """The scopes one tool asks for at an access level."""
    scopes = declared().get(tool)
    return () if scopes is None else scopes.at(access)


def access_levels(sections: Mapping[str, Any]) -> dict[str, str]:
    """Namespace -> the `access` its section sets (raw config, before validation)."""
    levels = {}
    for name in NAMESPACES:
        section = sections.get(name)
        value = section.get("access") if isinstance(section, Mapping) else None
        levels[name] = value if value in ACCESS_LEVELS else "app"
    return levels


def short(scope: str) -> str:
    return scope.removeprefix(PREFIX)


def requested_scopes(tool_names: Iterable[str], access: Mapping[str, str] | None = None) -> list[str]:
    """The scopes to ask for when these tools are enabled; `access`: namespace -> level."""
    wanted: set[str] = set()
    for name in tool_names:
        wanted.update(asked_scopes(name, (access or {}).get(name.split(".")[0], "app")))
    return sorted(wanted)


@functools.cache
def discovery_document(api: str, version: str) -> dict[str, Any]:
    """The discovery document shipped in googleapiclient ({} when the library is missing)."""
    import importlib.util

    spec = importlib.util.find_spec("googleapiclient")
    if spec is None or spec.origin is None:
        return {}
    path = os.path.join(os.path.dirname(spec.origin), "discovery_cache", "documents", f"{api}.{version}.json")
    with open(path, encoding="utf-8") as handle:
        document: dict[str, Any] = json.load(handle)
    return document


@functools.cache
def method_scopes(api: str, version: str) -> dict[str, frozenset[str]]:
    """Method id -> the scopes Google accepts for it, from the shipped discovery document."""
    document = discovery_document(api, version)
    found: dict[str, frozenset[str]] = {}
    stack = [document.get("resources", {})]
    while stack:
        for resource in stack.pop().values():
            for method in resource.get("methods", {}).values():
                found[method["id"]] = frozenset(method.get("scopes", ()))
            stack.append(resource.get("resources", {}))
    return found


_API_VERSIONS = {
    "gmail": "v1",
    "drive": "v3",
    "docs": "v1",
    "sheets": "v4",
    "tasks": "v1",
    "calendar": "v3",
    "people": "v1",
}


# a scope an access level asks for -> the broader scopes that include it
IMPLIED_BY: dict[str, frozenset[str]] = {
    DRIVE_FILE: frozenset({DRIVE}),
    DRIVE_READONLY: frozenset({DRIVE}),
    DOCUMENTS_READONLY: frozenset({DOCUMENTS}),
    SPREADSHEETS_READONLY: frozenset({SPREADSHEETS}),
    TASKS_READONLY: frozenset({TASKS}),
}


def missing_scopes(tool: str, granted: Iterable[str], access: str = "app") -> list[str]:
    """Scopes to ask for because some method of the tool accepts none of those granted.

    At a wider access level, a scope that level asks for must itself be granted (or one that
    includes it): drive.file lets files.list run, but not over the whole Drive `read` promises.
    """
    scopes = declared().get(tool)
    if scopes is None:
        return []
    granted = set(granted)
    asked, methods = scopes.at(access), scopes.methods
    uncovered = []
    for method in methods:
        api = method.split(".", 1)[0]
        accepted = method_scopes(api, _API_VERSIONS[api]).get(method, frozenset())
        if accepted and not accepted & granted:
            uncovered.append(accepted)
    missing = {scope for scope in asked if any(scope in accepted for accepted in uncovered)}
    if access in scopes.wider:
        missing |= {scope for scope in asked if scope not in granted and not IMPLIED_BY.get(scope, set()) & granted}
    return sorted(missing)


# The namespaces that sign in with the `[google]` account.
# calendar only with its google backend: see mcp_tools.cli.google.enabled_tools
NAMESPACES = ("gmail", "drive", "docs", "sheets", "tasks", "calendar", "contacts")
