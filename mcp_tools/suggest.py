"""The one "did you mean": the known name closest to one nobody knows.

Tool names (`mcp_tools.catalog`), namespaces and tiers in `[server] tools`, `--servers`, and
argument names the gate does not know all ask here, so each suggests the same way.
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
