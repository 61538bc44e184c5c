"""What other systems' models call the files tools, and how their arguments become ours."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp_tools.core.tooling import ToolAlias, alias_error, json_type


def edit_file_alias(arguments: dict[str, Any]) -> dict[str, Any]:
    """`search_replace` (one object or a list) becomes `edits`; a top-level replace_all applies to each."""
    rest = {key: value for key, value in arguments.items() if key not in ("search_replace", "replace_all")}
    if "search_replace" not in arguments:
        if "edits" in arguments:
            return dict(arguments)  # already in files.edit's own terms
        raise alias_error("edit_file needs search_replace: {old_string, new_string} or a list of them")
    value = arguments["search_replace"]
    if isinstance(value, dict):
        entries, paths = [value], ["search_replace"]
    elif isinstance(value, list) and value:
        entries, paths = value, [f"search_replace[{index}]" for index in range(len(value))]
    elif isinstance(value, list):
        raise alias_error("edit_file needs at least one entry in search_replace")
    else:
        raise alias_error(f"edit_file search_replace must be an object or a list of objects, got {json_type(value)}")
    edits: list[dict[str, Any]] = []
    for entry, path in zip(entries, paths, strict=True):
        if not isinstance(entry, dict):
            raise alias_error(f"edit_file {path} must be an object {{old_string, new_string}}, got {json_type(entry)}")
        for key in ("old_string", "new_string"):
            if key not in entry:
                raise alias_error(
                    f"edit_file needs {path}.{key}" if path == "search_replace" else f"edit_file {path} needs {key}"
                )
        edit = dict(entry)
        if "replace_all" in arguments and "replace_all" not in edit:
            edit["replace_all"] = arguments["replace_all"]
        edits.append(edit)
    return {**rest, "edits": edits}


def filesystem_edit_alias(arguments: dict[str, Any]) -> dict[str, Any]:
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
    return edit_file_alias(out)


IMPORT_ALIAS_RENAMES = {"filename": "path", "destination": "path", "file_path": "path", "data": "content_base64"}


def files_aliases(
    method: str, *aliases: ToolAlias, **reference: Callable[[dict[str, Any]], dict[str, Any]] | None
) -> tuple[ToolAlias, ...]:
    """A files tool's aliases, each also after the server names other systems' examples put before
    a file tool (`fs.write`, `filesystem.read_file`), and the reference filesystem server's own
    names for it, which are written only after a server name (`reference`: name -> reshaping)."""
    out = list(aliases)
    for server in ("filesystem", "fs"):
        out += [ToolAlias(f"{server}.{name}", reshape=reshape or dict) for name, reshape in reference.items()]
        out += [
            ToolAlias(f"{server}.{alias.name}", alias.renames, alias.reshape)
            for alias in aliases
            if alias.name not in reference
        ]
        out.append(ToolAlias(f"{server}.{method}"))
    return tuple(out)
