"""Which scopes each Google tool needs, and which API methods it calls.

A tool asks for the narrowest scope that covers what it does. Whether the granted scopes
suffice is answered from the discovery documents' own method scopes (`methods` here), so a
broader grant (gmail.modify, https://mail.google.com/) counts as it does at Google.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable

PREFIX = "https://www.googleapis.com/auth/"
GMAIL_READONLY = PREFIX + "gmail.readonly"
GMAIL_COMPOSE = PREFIX + "gmail.compose"
GMAIL_SEND = PREFIX + "gmail.send"
GMAIL_MODIFY = PREFIX + "gmail.modify"


# tool -> (scopes to ask for, API methods it calls)
TOOLS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "gmail.search": ((GMAIL_READONLY,), ("gmail.users.messages.list", "gmail.users.messages.get")),
    "gmail.read": ((GMAIL_READONLY,), ("gmail.users.messages.get", "gmail.users.threads.get")),
    "gmail.attachment": ((GMAIL_READONLY,), ("gmail.users.messages.get", "gmail.users.messages.attachments.get")),
    "gmail.draft": (
        (GMAIL_COMPOSE, GMAIL_READONLY),  # readonly: the message a reply answers
        ("gmail.users.drafts.create", "gmail.users.drafts.update", "gmail.users.messages.get"),
    ),
    "gmail.send": (
        (GMAIL_SEND, GMAIL_COMPOSE, GMAIL_READONLY),  # compose: a saved draft; readonly: the message answered
        ("gmail.users.messages.send", "gmail.users.drafts.get", "gmail.users.drafts.send", "gmail.users.messages.get"),
    ),
    "gmail.labels": (
        (GMAIL_MODIFY,),
        ("gmail.users.labels.list", "gmail.users.messages.modify", "gmail.users.threads.modify"),
    ),
    "gmail.trash": ((GMAIL_MODIFY,), ("gmail.users.messages.trash", "gmail.users.threads.trash")),
}


def short(scope: str) -> str:
    return scope.removeprefix(PREFIX)


def requested_scopes(tool_names: Iterable[str]) -> list[str]:
    """The scopes to ask for when these tools are enabled."""
    wanted: set[str] = set()
    for name in tool_names:
        if name in TOOLS:
            wanted.update(TOOLS[name][0])
    return sorted(wanted)


@functools.cache
def method_scopes(api: str, version: str) -> dict[str, frozenset[str]]:
    """Method id -> the scopes Google accepts for it, from the shipped discovery document."""
    import importlib.util

    spec = importlib.util.find_spec("googleapiclient")
    if spec is None or spec.origin is None:
        return {}
    path = os.path.join(os.path.dirname(spec.origin), "discovery_cache", "documents", f"{api}.{version}.json")
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    found: dict[str, frozenset[str]] = {}
    stack = [document.get("resources", {})]
    while stack:
        for resource in stack.pop().values():
            for method in resource.get("methods", {}).values():
                found[method["id"]] = frozenset(method.get("scopes", ()))
            stack.append(resource.get("resources", {}))
    return found


_API_VERSIONS = {"gmail": "v1", "drive": "v3", "docs": "v1", "sheets": "v4", "tasks": "v1", "calendar": "v3"}


def missing_scopes(tool: str, granted: Iterable[str]) -> list[str]:
    """Scopes to ask for because some method of the tool accepts none of those granted."""
    if tool not in TOOLS:
        return []
    granted = set(granted)
    asked, methods = TOOLS[tool]
    uncovered = []
    for method in methods:
        api = method.split(".", 1)[0]
        accepted = method_scopes(api, _API_VERSIONS[api]).get(method, frozenset())
        if accepted and not accepted & granted:
            uncovered.append(accepted)
    return sorted({scope for scope in asked if any(scope in accepted for accepted in uncovered)})


# The namespaces that sign in with the `[google]` account.
NAMESPACES = ("gmail",)
