"""Which scopes each Google tool needs, and which API methods it calls.

A tool asks for the narrowest scope that covers what it does. Whether the granted scopes
suffice is answered from the discovery documents' own method scopes (`methods` here), so a
broader grant (gmail.modify, https://mail.google.com/) counts as it does at Google.

Some namespaces let the person choose how far they reach with `access` in their section:
"app" (the default: only files this app created or was given) asks for what `TOOLS` says;
"read" and "all" ask for what `WIDER` says for that tool and level.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

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

# drive: drive.file by default (files this app created or opened); `[drive] access` widens it
_DRIVE_READ = ("drive.files.get", "drive.files.export", "sheets.spreadsheets.get", "sheets.spreadsheets.values.get")
TOOLS.update(
    {
        "drive.search": ((DRIVE_FILE,), ("drive.files.list",)),
        "drive.read": ((DRIVE_FILE,), _DRIVE_READ),
        "drive.create": ((DRIVE_FILE,), ("drive.files.get", "drive.files.create")),
        "drive.update": ((DRIVE_FILE,), ("drive.files.get", "drive.files.update")),
        "drive.delete": ((DRIVE_FILE,), ("drive.files.get", "drive.files.update", "drive.files.delete")),
        "drive.share": ((DRIVE_FILE,), ("drive.files.get", "drive.permissions.create")),
    }
)

# Google Tasks: reading asks tasks.readonly; every write asks tasks. A list is named by id,
# title or @default, so each tool may read the task lists first.
_TASK_LISTS = ("tasks.tasklists.list", "tasks.tasklists.get")
TOOLS.update(
    {
        "tasks.list": ((TASKS_READONLY,), (*_TASK_LISTS, "tasks.tasks.list")),
        "tasks.get": ((TASKS_READONLY,), (*_TASK_LISTS, "tasks.tasks.get")),
        "tasks.create": ((TASKS,), (*_TASK_LISTS, "tasks.tasks.insert")),
        "tasks.update": ((TASKS,), (*_TASK_LISTS, "tasks.tasks.patch")),
        "tasks.complete": ((TASKS,), (*_TASK_LISTS, "tasks.tasks.patch")),
        "tasks.delete": ((TASKS,), (*_TASK_LISTS, "tasks.tasks.get", "tasks.tasks.list", "tasks.tasks.delete")),
    }
)

# calendar (with [calendar] backend = "google"): busy slots need only freebusy; reading events and
# finding the calendar by name need calendar.readonly; calendar.events only for the write tools
TOOLS |= {
    "calendar.availability": ((CALENDAR_FREEBUSY,), ("calendar.freebusy.query",)),
    "calendar.events": (
        (CALENDAR_READONLY,),
        ("calendar.calendarList.list", "calendar.calendars.get", "calendar.events.list", "calendar.events.get"),
    ),
    "calendar.create_event": ((CALENDAR_EVENTS,), ("calendar.events.insert",)),
    "calendar.update_event": (
        (CALENDAR_EVENTS,),
        ("calendar.events.get", "calendar.events.instances", "calendar.events.patch"),
    ),
    "calendar.delete_event": (
        (CALENDAR_EVENTS,),
        ("calendar.events.get", "calendar.events.instances", "calendar.events.delete"),
    ),
    "calendar.respond": ((CALENDAR_EVENTS,), ("calendar.events.get", "calendar.events.patch")),
}


# contacts: read-only, asked only when the namespace is on: the person's contacts, the people they
# wrote to ("other contacts") and, on Workspace, the directory
TOOLS["contacts.search"] = (
    (CONTACTS_READONLY, CONTACTS_OTHER_READONLY, DIRECTORY_READONLY),
    ("people.people.searchContacts", "people.otherContacts.search", "people.people.searchDirectoryPeople"),
)


# sheets: every method accepts drive.file (spreadsheets this app created or was given)
_SHEETS_READ = ("sheets.spreadsheets.get", "sheets.spreadsheets.values.get")
TOOLS.update(
    {
        "sheets.read": ((DRIVE_FILE,), _SHEETS_READ),
        "sheets.write": ((DRIVE_FILE,), ("drive.files.get", "sheets.spreadsheets.values.update")),
        "sheets.append": ((DRIVE_FILE,), ("drive.files.get", "sheets.spreadsheets.values.append")),
        "sheets.create": ((DRIVE_FILE,), ("sheets.spreadsheets.create",)),
        "sheets.clear": ((DRIVE_FILE,), (*_SHEETS_READ, "sheets.spreadsheets.values.clear")),
    }
)


# docs: drive.file by default (documents the app created or the person opened with it)
_DOCS_WRITE = ("docs.documents.get", "docs.documents.batchUpdate")
TOOLS |= {
    "docs.read": ((DRIVE_FILE,), ("docs.documents.get",)),
    "docs.create": ((DRIVE_FILE,), ("docs.documents.create", "docs.documents.batchUpdate")),
    "docs.append": ((DRIVE_FILE,), ("drive.files.get", *_DOCS_WRITE)),
    "docs.replace": ((DRIVE_FILE,), ("drive.files.get", *_DOCS_WRITE)),
}


# tool -> access level ("read", "all") -> scopes asked instead of those in TOOLS
WIDER: dict[str, dict[str, tuple[str, ...]]] = {}
WIDER.update({tool: {"read": (DRIVE_READONLY,), "all": (DRIVE,)} for tool in ("drive.search", "drive.read")})
WIDER.update(
    {
        tool: {"read": (DRIVE_FILE,), "all": (DRIVE,)}
        for tool in ("drive.create", "drive.update", "drive.delete", "drive.share")
    }
)
# sheets at "read": every spreadsheet read, writes still to the app's own; at "all": every spreadsheet
WIDER["sheets.read"] = {"read": (SPREADSHEETS_READONLY,), "all": (SPREADSHEETS,)}
for _tool in ("sheets.write", "sheets.append", "sheets.create", "sheets.clear"):
    WIDER[_tool] = {"all": (SPREADSHEETS,)}
# docs: "read" reads every document and writes only the app's; "all" reads and writes every one
WIDER |= {"docs.read": {"read": (DOCUMENTS_READONLY,), "all": (DOCUMENTS,)}}
WIDER |= {f"docs.{name}": {"all": (DOCUMENTS,)} for name in ("create", "append", "replace")}

ACCESS_LEVELS = ("app", "read", "all")


def asked_scopes(tool: str, access: str = "app") -> tuple[str, ...]:
    """The scopes one tool asks for at an access level."""
    if tool not in TOOLS:
        return ()
    return WIDER.get(tool, {}).get(access) or TOOLS[tool][0]


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
    if tool not in TOOLS:
        return []
    granted = set(granted)
    asked, methods = asked_scopes(tool, access), TOOLS[tool][1]
    uncovered = []
    for method in methods:
        api = method.split(".", 1)[0]
        accepted = method_scopes(api, _API_VERSIONS[api]).get(method, frozenset())
        if accepted and not accepted & granted:
            uncovered.append(accepted)
    missing = {scope for scope in asked if any(scope in accepted for accepted in uncovered)}
    if access in WIDER.get(tool, {}):
        missing |= {scope for scope in asked if scope not in granted and not IMPLIED_BY.get(scope, set()) & granted}
    return sorted(missing)


# The namespaces that sign in with the `[google]` account.
# calendar only with its google backend: see mcp_tools.cli.google.enabled_tools
NAMESPACES = ("gmail", "drive", "docs", "sheets", "tasks", "calendar", "contacts")
