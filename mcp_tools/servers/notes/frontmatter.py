"""Merging keys into a note's YAML frontmatter while leaving every other byte of the file alone.

Unchanged top-level keys keep their exact lines (comments, quoting, order); changed keys are
re-serialised in place; new keys are appended; the body is never touched.
"""

from __future__ import annotations

import re
from typing import Any

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.notes.markdown import jsonable, parse_yaml, split_frontmatter

TOP_KEY_RE = re.compile(r"^(?:'([^']*)'|\"([^\"]*)\"|([^\s#'\"][^:]*?))[ \t]*:(?:[ \t]|$)")


def dump_key(key: str, value: Any, newline: str) -> str:
    import yaml

    text = yaml.safe_dump({key: value}, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000)
    return text.replace("\n", newline)


def _blocks(raw: str) -> list[tuple[str | None, str]] | None:
    """Split block-style YAML into (top-level key, its lines) pieces; None when the layout is unusual."""
    blocks: list[tuple[str | None, str]] = []
    for line in raw.splitlines(keepends=True):
        stripped = line.rstrip("\r\n")
        starts_block = stripped and not stripped[0].isspace() and not stripped.startswith("#")
        if starts_block and not stripped.startswith("- "):
            match = TOP_KEY_RE.match(stripped)
            if not match:
                return None
            key = next(g for g in match.groups() if g is not None).strip()
            blocks.append((key, line))
        elif blocks:
            blocks[-1] = (blocks[-1][0], blocks[-1][1] + line)
        else:
            blocks.append((None, line))
    return blocks


def merge_frontmatter(text: str, changes: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Return the new file text and the resulting frontmatter."""
    raw, body_start = split_frontmatter(text)
    current, error = parse_yaml(raw)
    if error:
        raise ToolFailure("conflict", f"cannot update: {error}", "fix the frontmatter with notes_write")
    newline = "\r\n" if "\r\n" in text[: max(body_start, 200)] else "\n"
    expected = dict(current)
    for key, value in changes.items():
        if value is None:
            expected.pop(key, None)
        else:
            expected[key] = jsonable(value)
    if not expected and raw is None:
        return text, expected
    body = text[body_start:] if raw is not None else text
    blocks = _blocks(raw or "")
    new_yaml: str | None = None
    if blocks is not None:
        out: list[str] = []
        seen: set[str] = set()
        for name, lines in blocks:
            if name is None or name not in changes:
                out.append(lines)
                continue
            seen.add(name)
            if changes[name] is not None:
                out.append(dump_key(name, changes[name], newline))
        if out and not out[-1].endswith(("\n", "\r")):
            out[-1] += newline
        for key, value in changes.items():
            if key not in seen and value is not None:
                out.append(dump_key(key, value, newline))
        candidate = "".join(out)
        parsed, problem = parse_yaml(candidate)
        if problem is None and parsed == expected:
            new_yaml = candidate
    if new_yaml is None:
        import yaml

        new_yaml = yaml.safe_dump(expected, sort_keys=False, allow_unicode=True, width=10_000).replace("\n", newline)
    if not new_yaml.strip():
        new_yaml = ""
    header = f"---{newline}{new_yaml}---{newline}"
    return header + body, expected
