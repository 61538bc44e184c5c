"""Redaction for anything shown or stored outside the tool call: audit rows, approvals, logs.

Known secrets are scrubbed before a string is cut, so a cut never leaves a secret's first
characters behind.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from mcp_tools.util.secrets import scrub_text

SECRET_KEY = re.compile(
    r"pass(word|wd|phrase)?|secret|token|api[_-]?key|authori[sz]ation|cookie|credential|private[_-]?key|ticket",
    re.IGNORECASE,
)
REDACTED = "[redacted]"
MAX_ITEMS = 50


def redact(value: Any, max_chars: int = 200) -> Any:
    """Copy of `value` with secret-looking keys masked and long strings cut.

    Every key and string kept is scrubbed (`secrets.scrub_text`) before it is cut: first the
    value's shape is taken and its strings gathered, then they are scrubbed together, then the
    copy is built from the shape.
    """
    texts: list[str] = []
    shape = _shape(value, texts, "")
    scrubbed = [scrub_text(text) for text in texts]
    return _build(shape, scrubbed, max_chars)


# A shape: ("masked",), ("text", index into the strings), ("dict", [(key's index, shape)], left
# out), ("list", [shape], left out) or ("as is", value).
Shape = tuple[Any, ...]


def _shape(value: Any, texts: list[str], key: str) -> Shape:
    if key and SECRET_KEY.search(key):
        return ("masked",)
    if isinstance(value, dict):
        entries = []
        for k, v in itertools.islice(value.items(), MAX_ITEMS):
            texts.append(str(k))
            entries.append((len(texts) - 1, _shape(v, texts, str(k))))
        return ("dict", entries, len(value) - MAX_ITEMS)
    if isinstance(value, list | tuple):
        return ("list", [_shape(v, texts, "") for v in list(value)[:MAX_ITEMS]], len(value) - MAX_ITEMS)
    if isinstance(value, str):
        texts.append(value)
        return ("text", len(texts) - 1)
    if isinstance(value, bytes):
        return ("as is", f"[{len(value)} bytes]")
    return ("as is", value)


def _build(shape: Shape, texts: list[str], max_chars: int) -> Any:
    kind = shape[0]
    if kind == "masked":
        return REDACTED
    if kind == "dict":
        kept = {texts[key]: _build(item, texts, max_chars) for key, item in shape[1]}
        if shape[2] > 0:
            kept["…"] = f"[+{shape[2]} more names]"
        return kept
    if kind == "list":
        items = [_build(item, texts, max_chars) for item in shape[1]]
        if shape[2] > 0:
            items.append(f"[+{shape[2]} more items]")
        return items
    if kind == "text":
        text = texts[shape[1]]
        return f"{text[:max_chars]}… [cut, {len(text)} chars]" if len(text) > max_chars else text
    return shape[1]
