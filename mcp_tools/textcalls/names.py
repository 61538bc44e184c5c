"""Names models write for our tools, and how their arguments translate."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_tools.textcalls.calls import json_type
from mcp_tools.tooling import ToolFailure


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
        for field in ("old_string", "new_string"):
            if field not in entry:
                raise _alias_error(
                    f"edit_file needs {path}.{field}" if path == "search_replace" else f"edit_file {path} needs {field}"
                )
        edit = dict(entry)
        if "replace_all" in arguments and "replace_all" not in edit:
            edit["replace_all"] = arguments["replace_all"]
        edits.append(edit)
    return {**rest, "edits": edits}


def _alias_error(message: str) -> ToolFailure:
    return ToolFailure("invalid_arguments", message, 'e.g. {"path": "a.txt", "search_replace": {"old_string": ...}}')


@dataclass(frozen=True)
class Alias:
    """A code-writing model's file tool: the files tool it is, and how its arguments translate."""

    tool: str
    translate: Callable[[dict[str, Any]], dict[str, Any]] = _same


ALIASES: Mapping[str, Alias] = {
    "write_file": Alias("files.write"),
    "edit_file": Alias("files.edit", _edit_file),
    "delete_file": Alias("files.delete"),
    "read_file": Alias("files.read"),
    "list_files": Alias("files.list"),
    "create_directory": Alias("files.mkdir"),
}


def resolve_alias(name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The canonical tool and its arguments for an alias; any other name passes through unchanged.

    Raises ToolFailure(invalid_arguments) naming the field in the alias's own terms. Keys the
    translation does not know are passed on, so the gate's validation reports them.
    """
    alias = ALIASES.get(name)
    if alias is None:
        return name, arguments
    return alias.tool, alias.translate(arguments)
