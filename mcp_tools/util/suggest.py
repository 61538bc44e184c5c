"""The one "did you mean": the known name closest to one nobody knows.

Tool names (`mcp_tools.inventory.catalog`), namespaces and tiers in `[server] tools`, `--servers`, and
argument names the gate does not know all ask here, so each suggests the same way. Argument
names first look up what they usually mean (`after` is `since`, `max_results` is `limit`), for
every tool alike: a tool declares nothing for it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

_VERBS = {
    "create": "write", "make": "write", "save": "write", "put": "write", "new": "write", "add": "write",
    "get": "read", "fetch": "read", "open": "read", "view": "read", "cat": "read", "show": "read",
    "remove": "delete", "rm": "delete", "del": "delete", "erase": "delete", "unlink": "delete",
    "ls": "list", "dir": "list", "modify": "edit", "patch": "edit", "change": "edit",
}  # fmt: skip
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _normalise(name: str) -> str:
    words = re.split(r"[_\-\s.]+", _CAMEL.sub("_", name.strip()).lower())
    return "_".join(_VERBS.get(word, word) for word in words if word)


def closest(name: str, candidates: Iterable[str], limit: int = 1) -> list[str]:
    """The names closest to one nobody knows, best first: the one suggester behind every
    "did you mean". A name meaning the same (`create_file` and `write_file`, `writeFile`) comes
    first, then near spellings."""
    pool = list(dict.fromkeys(candidate for candidate in candidates if candidate != name))
    normalised = _normalise(name)
    found = [candidate for candidate in pool if _normalise(candidate) == normalised][:limit]
    forms: dict[str, str] = {}
    for candidate in pool:
        forms.setdefault(_normalise(candidate), candidate)
    for match in difflib.get_close_matches(normalised, list(forms), n=limit + len(found), cutoff=0.6):
        if len(found) < limit and forms[match] not in found:
            found.append(forms[match])
    return found


# Names models often give an argument, and what tools usually call it, most likely first. Only
# names the tool really takes are suggested, so one table serves every namespace.
ARGUMENT_SYNONYMS: dict[str, tuple[str, ...]] = {
    "command": ("argv", "shell"),
    "cmd": ("argv", "shell"),
    "args": ("argv", "arguments"),
    "file": ("path",),
    "filename": ("path", "name"),
    "file_path": ("path",),
    "filepath": ("path",),
    "content": ("text", "body"),
    "contents": ("content", "text"),
    "text": ("content", "body"),
    "body": ("text", "content"),
    "q": ("query",),
    "search": ("query",),
    "keywords": ("query",),
    "url": ("uri", "link"),
    "max_results": ("limit", "top_k"),
    "max": ("limit", "top_k"),
    "count": ("limit", "top_k"),
    "n": ("limit", "top_k"),
    "num_results": ("limit", "max_results", "top_k"),
    "page_size": ("limit", "max_results"),
    "limit": ("max_results", "top_k"),
    "top_k": ("limit", "max_results"),
    "page_token": ("cursor",),
    "next_cursor": ("cursor",),
    "after": ("since", "start"),
    "since": ("start",),
    "from_date": ("since", "start"),
    "start_date": ("since", "start"),
    "newer_than": ("since", "start"),
    "date_from": ("since", "start"),
    "before": ("until", "end"),
    "until": ("end",),
    "to_date": ("until", "end"),
    "end_date": ("until", "end"),
    "older_than": ("until", "end"),
    "date_to": ("until", "end"),
    "start": ("since",),
    "end": ("until",),
    "from": ("sender", "since", "start"),
    "from_": ("sender", "since", "start"),
    "author": ("sender",),
}


def closest_argument(name: str, accepted: Iterable[str], limit: int = 1) -> list[str]:
    """The accepted argument names closest to one a tool does not take, best first: a name that
    usually means the same (`after` for `since`), then near spellings (`closest`)."""
    pool = list(dict.fromkeys(accepted))
    key = _CAMEL.sub("_", name.strip()).lower().replace("-", "_")
    found = [synonym for synonym in ARGUMENT_SYNONYMS.get(key, ()) if synonym in pool and synonym != name]
    # a name cut short (`old` for `old_string`, `new` for `new_string`) means the one it begins
    found += [field for field in pool if field != name and key and field.split("_")[0] == key and field not in found]
    for near in closest(name, pool, limit):
        if near not in found:
            found.append(near)
    return found[:limit]
