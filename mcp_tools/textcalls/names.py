"""Every name other systems' models write for our tools, as data, and how their arguments translate.

One table, `ALIASES`, holds the code-writing models' file tools, the notes tool names, and the
tool types of the scissors-cat format; `SERVER_PREFIXES` maps the server names of prose examples
(`filesystem.read_file`, `fs.read`) onto files. `resolve_alias` translates a call; `CANONICAL`
lists every tool the project has or plans, so a name whose namespace is off or not built can say
so, and `suggest` finds the closest known name for any other.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_tools.textcalls.calls import json_type
from mcp_tools.tooling import ToolFailure

# Every canonical tool, by namespace, including namespaces not built into every version.
CANONICAL: Mapping[str, tuple[str, ...]] = {
    "files": ("list", "read", "write", "edit", "mkdir", "move", "delete", "import"),
    "notes": (
        "read", "search", "write", "update_frontmatter", "backlinks", "forward_links",
        "daily", "search_by_tag", "metadata", "rename", "delete", "random",
    ),
    "calendar": ("availability", "events", "create_event", "update_event", "delete_event"),
    "web": ("search",),
    "inbox": ("search", "read", "attachment"),
    "gmail": ("search", "read", "attachment", "draft", "send", "labels", "trash"),
    "drive": ("search", "read", "create", "update", "delete", "share"),
    "docs": ("read", "create", "append", "replace"),
    "sheets": ("read", "write", "append", "create", "clear"),
    "tasks": ("list", "get", "create", "update", "complete", "delete"),
    "terminal": ("execute",),
    "http": ("request",),
    "search": ("all",),
}  # fmt: skip
CANONICAL_NAMES = frozenset(f"{namespace}.{method}" for namespace, methods in CANONICAL.items() for method in methods)


def _same(arguments: dict[str, Any]) -> dict[str, Any]:
    return dict(arguments)


def _edit_file(arguments: dict[str, Any]) -> dict[str, Any]:
    """`search_replace` (one object or a list) becomes `edits`; a top-level replace_all applies to each."""
    rest = {key: value for key, value in arguments.items() if key not in ("search_replace", "replace_all")}
    if "search_replace" not in arguments:
        if "edits" in arguments:
            return dict(arguments)  # already in files.edit's own terms
        raise _alias_error("edit_file needs search_replace: {old_string, new_string} or a list of them")
    value = arguments["search_replace"]
    if isinstance(value, dict):
        entries, paths = [value], ["search_replace"]
    elif isinstance(value, list) and value:
        entries, paths = value, [f"search_replace[{index}]" for index in range(len(value))]
    elif isinstance(value, list):
        raise _alias_error("edit_file needs at least one entry in search_replace")
    else:
        raise _alias_error(f"edit_file search_replace must be an object or a list of objects, got {json_type(value)}")
    edits: list[dict[str, Any]] = []
    for entry, path in zip(entries, paths, strict=True):
        if not isinstance(entry, dict):
            raise _alias_error(f"edit_file {path} must be an object {{old_string, new_string}}, got {json_type(entry)}")
        for key in ("old_string", "new_string"):
            if key not in entry:
                raise _alias_error(
                    f"edit_file needs {path}.{key}" if path == "search_replace" else f"edit_file {path} needs {key}"
                )
        edit = dict(entry)
        if "replace_all" in arguments and "replace_all" not in edit:
            edit["replace_all"] = arguments["replace_all"]
        edits.append(edit)
    return {**rest, "edits": edits}


def _alias_error(message: str) -> ToolFailure:
    return ToolFailure("invalid_arguments", message, 'e.g. {"path": "a.txt", "search_replace": {"old_string": ...}}')


def _first_string(value: Any, *keys: str) -> Any:
    """Google's `{"dateTime": ...}` / `{"date": ...}` objects as the one string our tools take."""
    if isinstance(value, dict):
        for key in keys:
            if isinstance(value.get(key), str):
                return value[key]
    return value


def _google_event(arguments: dict[str, Any]) -> dict[str, Any]:
    out = dict(arguments)
    for key in ("start", "end"):
        if key in out:
            out[key] = _first_string(out[key], "dateTime", "date")
    return out


def _gmail_read(arguments: dict[str, Any]) -> dict[str, Any]:
    """A thread id names a thread: gmail.read takes it as `id` with `thread: true`."""
    out = dict(arguments)
    if "thread_id" in out and "id" not in out:
        out["id"] = out.pop("thread_id")
        out.setdefault("thread", True)
    return out


def _one_or_many_ids(arguments: dict[str, Any]) -> dict[str, Any]:
    """`id` / `messageId` for one message becomes gmail's `ids` list."""
    out = dict(arguments)
    if "id" in out and "ids" not in out:
        out["ids"] = [out.pop("id")]
    return out


def _tasks_dates(arguments: dict[str, Any]) -> dict[str, Any]:
    """Google's RFC 3339 `due`/`dueMin`/`dueMax` become the date Google keeps (the part before the T);
    `showCompleted` becomes tasks.list's `status`."""
    out = dict(arguments)
    for key in ("due", "due_from", "due_to"):
        value = out.get(key)
        if isinstance(value, str) and len(value) > 10 and value[10] == "T":
            out[key] = value[:10]
    if "showCompleted" in out and "status" not in out:
        out["status"] = "all" if out.pop("showCompleted") else "open"
    return out


def _sheets_options(arguments: dict[str, Any]) -> dict[str, Any]:
    """Google's valueInputOption / valueRenderOption become `formulas`; a list of sheet names a dict."""
    out = dict(arguments)
    for key, formula_value in (("value_input", "USER_ENTERED"), ("value_render", "FORMULA")):
        if key not in out:
            continue
        option = out.pop(key)
        if not isinstance(option, str):
            raise _alias_error(f"{key} must be a string such as RAW or {formula_value}, got {json_type(option)}")
        out.setdefault("formulas", option.strip().upper() == formula_value)
    if isinstance(out.get("sheets"), list) and all(isinstance(name, str) for name in out["sheets"]):
        out["sheets"] = {name: [] for name in out["sheets"]}
    return out


def _docs_replace(arguments: dict[str, Any]) -> dict[str, Any]:
    """Google's `containsText: {text, matchCase}` object becomes docs.replace's `find` and `match_case`."""
    out = dict(arguments)
    criteria = out.get("find")
    if isinstance(criteria, dict) and isinstance(criteria.get("text"), str):
        out["find"] = criteria["text"]
        if "matchCase" in criteria:
            out.setdefault("match_case", criteria["matchCase"])
    return out


def _command_line(arguments: dict[str, Any]) -> dict[str, Any]:
    """A `command` string is split into argv as a shell would (no shell runs it); a list is argv."""
    import shlex

    out = dict(arguments)
    command = out.pop("command", None)
    if isinstance(command, list):
        out.setdefault("argv", command)
    elif isinstance(command, str):
        try:
            out.setdefault("argv", shlex.split(command))
        except ValueError as exc:
            raise _alias_error(f"terminal_execute: command cannot be split into arguments ({exc})") from None
    return out


def _filesystem_edit(arguments: dict[str, Any]) -> dict[str, Any]:
    """The reference filesystem server's `edits: [{oldText, newText}]` and `dryRun`."""
    out = {key: value for key, value in arguments.items() if key != "dryRun"}
    if "dryRun" in arguments:
        out["dry_run"] = arguments["dryRun"]
    edits = arguments.get("edits")
    if isinstance(edits, list):
        out["edits"] = [
            {{"oldText": "old_string", "newText": "new_string"}.get(key, key): value for key, value in edit.items()}
            if isinstance(edit, dict)
            else edit
            for edit in edits
        ]
    return out


@dataclass(frozen=True)
class Alias:
    """A name another system uses: the tool it is, its argument names in ours, then any reshaping."""

    tool: str
    translate: Callable[[dict[str, Any]], dict[str, Any]] = _same
    renames: Mapping[str, str] = field(default_factory=dict)

    def arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        renamed: dict[str, Any] = {}
        for key, value in arguments.items():
            ours = self.renames.get(key, key)
            if ours in renamed:
                raise ToolFailure(
                    "invalid_arguments",
                    f"{ours} is given twice (as {key} and under another name); send it once",
                )
            renamed[ours] = value
        return self.translate(renamed)


# Google API argument names shared by the seed's Google tool types.
_PAGING = {"maxResults": "limit", "max_results": "limit", "pageSize": "limit", "pageToken": "cursor"}
_GMAIL = {**_PAGING, "q": "query", "messageId": "id", "message_id": "id", "threadId": "thread_id", "labelIds": "labels"}
_GMAIL_ATTACHMENT = {"messageId": "message_id", "id": "message_id", "partIndex": "index"}
_GMAIL_LABELS = {"messageIds": "ids", "messageId": "id", "addLabelIds": "add", "removeLabelIds": "remove"}
_TERMINAL = {"cmd": "command", "working_directory": "cwd", "workdir": "cwd", "timeout": "timeout_seconds"}
_IMPORT = {"filename": "path", "destination": "path", "file_path": "path", "data": "content_base64"}
_DRIVE = {
    **_PAGING,
    "pageToken": "page_token",
    "fileId": "id",
    "file_id": "id",
    "folderId": "folder",
    "folder_id": "folder",
    "parentId": "folder",
    "mimeType": "mime_type",
    "title": "name",
}
_DOCS = {
    "documentId": "id",
    "document_id": "id",
    "url": "id",
    "content": "text",
    "markdown": "text",
    "body": "text",
    "containsText": "find",
    "replaceText": "replace",
    "matchCase": "match_case",
    "revisionId": "revision",
    "requiredRevisionId": "revision",
}
_SHEETS = {
    "spreadsheetId": "id",
    "spreadsheet_id": "id",
    "valueInputOption": "value_input",
    "value_input_option": "value_input",
    "valueRenderOption": "value_render",
    "value_render_option": "value_render",
}
_TASKS = {
    **_PAGING,
    "taskListId": "list",
    "tasklist": "list",
    "list_id": "list",
    "taskId": "id",
    "task_id": "id",
    "dueMin": "due_from",
    "dueMax": "due_to",
}
_CALENDAR = {**_PAGING, "timeMin": "start", "timeMax": "end", "eventId": "uid", "event_id": "uid", "summary": "title"}
_SEARCH = {"top_k": "limit", "max_results": "limit", "maxResults": "limit", "num_results": "limit"}
_WEB = {"top_k": "max_results", "maxResults": "max_results", "num_results": "max_results", "limit": "max_results"}
_NOTES_SEARCH = {"limit": "top_k", "max_results": "top_k", "maxResults": "top_k", "k": "top_k"}


def _seed(
    tool: str, renames: Mapping[str, str], translate: Callable[[dict[str, Any]], dict[str, Any]] = _same
) -> Alias:
    return Alias(tool, translate, renames)


ALIASES: Mapping[str, Alias] = {
    # Code-writing models' file tools (and the pilot variants of the same).
    "write_file": Alias("files.write"),
    "edit_file": Alias("files.edit", _edit_file),
    "delete_file": Alias("files.delete"),
    "read_file": Alias("files.read"),
    "list_files": Alias("files.list"),
    "create_directory": Alias("files.mkdir"),
    "pilotwrite": Alias("files.write"),
    "pilotedit": Alias("files.edit", _edit_file),
    "pilotdelete": Alias("files.delete"),
    # Notes tools of the vault servers this project replaces.
    "read_note": Alias("notes.read"),
    "search_notes": Alias("notes.search", renames=_NOTES_SEARCH),
    "write_note": Alias("notes.write"),
    "update_frontmatter": Alias("notes.update_frontmatter", renames={"frontmatter": "set", "updates": "set"}),
    "list_backlinks": Alias("notes.backlinks"),
    "list_forward_links": Alias("notes.forward_links"),
    "get_daily_note": Alias("notes.daily"),
    "search_by_tag": Alias("notes.search_by_tag"),
    "get_note_metadata": Alias("notes.metadata"),
    "rename_note": Alias("notes.rename", renames={"new_name": "new_path", "destination": "new_path"}),
    "delete_note": Alias("notes.delete"),
    "get_random_note": Alias("notes.random"),
    # The scissors-cat format's tool types.
    "gmail_list": _seed("gmail.search", _GMAIL),
    "gmail_search": _seed("gmail.search", _GMAIL),
    "gmail_read": _seed("gmail.read", _GMAIL, _gmail_read),
    "gmail_attachment": _seed("gmail.attachment", _GMAIL_ATTACHMENT),
    "gmail_draft": _seed("gmail.draft", _GMAIL),
    "gmail_send": _seed("gmail.send", _GMAIL),
    "gmail_labels": _seed("gmail.labels", _GMAIL_LABELS, _one_or_many_ids),
    "gmail_trash": _seed("gmail.trash", _GMAIL_LABELS, _one_or_many_ids),
    "drive_list": _seed("drive.search", _DRIVE),
    "drive_search": _seed("drive.search", _DRIVE),
    "drive_read": _seed("drive.read", _DRIVE),
    "drive_create": _seed("drive.create", _DRIVE),
    "drive_update": _seed("drive.update", _DRIVE),
    "drive_delete": _seed("drive.delete", _DRIVE),
    "drive_share": _seed("drive.share", {**_DRIVE, "emailAddress": "email"}),
    "docs_read": _seed("docs.read", _DOCS),
    "docs_create": _seed("docs.create", _DOCS),
    "docs_append": _seed("docs.append", _DOCS),
    "docs_replace": _seed("docs.replace", _DOCS, _docs_replace),
    "sheets_read": _seed("sheets.read", _SHEETS, _sheets_options),
    "sheets_write": _seed("sheets.write", _SHEETS, _sheets_options),
    "sheets_append": _seed("sheets.append", _SHEETS, _sheets_options),
    "sheets_create": _seed("sheets.create", _SHEETS, _sheets_options),
    "sheets_clear": _seed("sheets.clear", _SHEETS, _sheets_options),
    "tasks_list": _seed("tasks.list", _TASKS, _tasks_dates),
    "tasks_get": _seed("tasks.get", _TASKS, _tasks_dates),
    "tasks_create": _seed("tasks.create", _TASKS, _tasks_dates),
    "tasks_update": _seed("tasks.update", _TASKS, _tasks_dates),
    "tasks_complete": _seed("tasks.complete", _TASKS, _tasks_dates),
    "tasks_delete": _seed("tasks.delete", _TASKS, _tasks_dates),
    "calendar_list": _seed("calendar.events", _CALENDAR, _google_event),
    "calendar_events": _seed("calendar.events", _CALENDAR, _google_event),
    "calendar_availability": _seed("calendar.availability", _CALENDAR, _google_event),
    "calendar_create": _seed("calendar.create_event", _CALENDAR, _google_event),
    "calendar_update": _seed("calendar.update_event", _CALENDAR, _google_event),
    "calendar_delete": _seed("calendar.delete_event", _CALENDAR, _google_event),
    "web_search": _seed("web.search", _WEB),
    "search": _seed("search.all", _SEARCH),
    "terminal_execute": _seed("terminal.execute", _TERMINAL, _command_line),
    "api_call": _seed("http.request", {}),
    "file_ingest": _seed("files.import", _IMPORT),
    "file_upload": _seed("files.import", _IMPORT),
}

# Server names that prose examples put before a tool (`filesystem.read_file`, `fs.write`), onto files.
SERVER_PREFIXES: Mapping[str, str] = {"filesystem": "files", "fs": "files"}
FILESYSTEM_TOOLS: Mapping[str, Alias] = {
    "read_text_file": Alias("files.read"),
    "list_directory": Alias("files.list"),
    "move_file": Alias("files.move"),
    "edit_file": Alias("files.edit", lambda arguments: _edit_file(_filesystem_edit(arguments))),
}


def lookup(name: str) -> Alias | None:
    """The alias a written name stands for, or None when it is no other system's name."""
    if name in ALIASES:
        return ALIASES[name]
    server, dot, method = name.partition(".")
    if not dot:  # filesystem_read_file, as clients that reject dots write it
        server = next((prefix for prefix in SERVER_PREFIXES if name.startswith(f"{prefix}_")), "")
        dot, method = ("_", name[len(server) + 1 :]) if server else ("", "")
    if dot and server in SERVER_PREFIXES:
        if method in FILESYSTEM_TOOLS:
            return FILESYSTEM_TOOLS[method]
        if method in ALIASES and ALIASES[method].tool.startswith("files."):
            return ALIASES[method]
        target = f"{SERVER_PREFIXES[server]}.{method}"
        if target in CANONICAL_NAMES:
            return Alias(target)
    return None


def resolve_alias(name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The canonical tool and its arguments for an alias; any other name passes through unchanged.

    Raises ToolFailure(invalid_arguments) naming the field in the alias's own terms. Keys the
    translation does not know are passed on, so the gate's validation reports them.
    """
    alias = lookup(name)
    if alias is None:
        return name, arguments
    return alias.tool, alias.arguments(arguments)


def is_known(name: str) -> bool:
    """A name some model could mean as a tool: canonical, its wire form, or an alias."""
    return name in CANONICAL_NAMES or name.replace("_", ".", 1) in CANONICAL_NAMES or lookup(name) is not None


_VERBS = {
    "create": "write", "make": "write", "save": "write", "put": "write", "new": "write", "add": "write",
    "get": "read", "fetch": "read", "open": "read", "view": "read", "cat": "read", "show": "read",
    "remove": "delete", "rm": "delete", "del": "delete", "erase": "delete", "unlink": "delete",
    "ls": "list", "dir": "list", "modify": "edit", "patch": "edit", "change": "edit",
}  # fmt: skip
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _normalise(name: str) -> str:
    words = re.split(r"[_\-\s]+", _CAMEL.sub("_", name.strip()).lower())
    return "_".join(_VERBS.get(word, word) for word in words if word)


def suggest(name: str, available: list[str] | None = None) -> str | None:
    """The closest known name to one nobody knows (`create_file` -> `write_file`), or None."""
    candidates = [*ALIASES, *sorted(CANONICAL_NAMES), *(available or [])]
    normalised = _normalise(name)
    for candidate in candidates:
        if candidate != name and _normalise(candidate) == normalised:
            return candidate
    dotted = {candidate.replace(".", "_"): candidate for candidate in candidates}
    close = difflib.get_close_matches(normalised, list(dotted), n=1, cutoff=0.6)
    return dotted[close[0]] if close else None
