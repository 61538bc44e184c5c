"""The result budget: no tool result puts more than `[server] max_result_tokens` into a model's context.

Tools page by themselves inside the budget (offset or cursor, a `next_...` value and one line
saying how many more there are); this is the safety net where every result passes. A result
that would still not fit is cut to the part that fits, it says so and how to get the rest, and
it stays valid against the tool's `outputSchema`: strings are shortened and lists lose their
tail, nothing is added. Text and structured content count together, as characters / 4.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

CHARS_PER_TOKEN = 4
DEFAULT_MAX_RESULT_TOKENS = 20_000
CUT_MARK = "…[cut]"


def result_chars(text: str, notice: str | None, structured: dict[str, Any] | None) -> int:
    """What a result costs in a model's context: its text blocks and its structured content."""
    size = len(text) + len(notice or "")
    if structured is not None:
        size += len(json.dumps(structured, ensure_ascii=False))
    return size


def result_tokens(text: str, notice: str | None, structured: dict[str, Any] | None) -> int:
    return -(-result_chars(text, notice, structured) // CHARS_PER_TOKEN)


class Cut:
    """What was left out, in words the model can act on."""

    def __init__(self) -> None:
        self.strings: dict[str, int] = {}  # path -> characters left out
        self.items: dict[str, int] = {}  # path -> list items left out

    def __bool__(self) -> bool:
        return bool(self.strings or self.items)

    def describe(self) -> str:
        parts = [f"{path}: {count:,} more characters" for path, count in self.strings.items()]
        parts += [f"{path}: {count:,} more items" for path, count in self.items.items()]
        return "; ".join(parts[:6]) + ("" if len(parts) <= 6 else f"; and {len(parts) - 6} more")


def shrink(value: dict[str, Any], max_chars: int) -> tuple[dict[str, Any], Cut]:
    """A copy of a JSON object whose compact JSON fits `max_chars`, cutting the largest parts first."""
    value = json.loads(json.dumps(value, ensure_ascii=False))
    cut = Cut()
    for _ in range(200):
        excess = len(json.dumps(value, ensure_ascii=False)) - max_chars
        if excess <= 0:
            break
        found = _largest(value, "")
        if found is None:
            break
        parent, key, path, node = found
        if isinstance(node, str):
            already = cut.strings.get(path, 0)
            body = node[: -len(CUT_MARK)] if already else node
            keep = max(0, len(body) - excess - len(CUT_MARK) - 8)
            cut.strings[path] = already + len(body) - keep
            parent[key] = body[:keep] + CUT_MARK
        else:
            dropped = 0
            while node and excess > 0:
                excess -= len(json.dumps(node[-1], ensure_ascii=False)) + 1
                node.pop()
                dropped += 1
            cut.items[path] = cut.items.get(path, 0) + dropped
    return value, cut


def _largest(node: Any, path: str) -> tuple[Any, Any, str, Any] | None:
    """The largest string or non-empty list inside `node` (not `node` itself), with its parent."""
    best: tuple[int, tuple[Any, Any, str, Any]] | None = None
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        child_path = f"{path}[{key}]" if isinstance(node, list) else f"{path}.{key}" if path else str(key)
        size = len(json.dumps(child, ensure_ascii=False))
        candidate: tuple[Any, Any, str, Any] | None = None
        if isinstance(child, str) and len(child) > len(CUT_MARK) + 16:
            candidate = (node, key, child_path, child)
        elif isinstance(child, list) and child:
            inner = _largest(child, child_path)
            # a list whose one item is most of it is cut inside that item, else by its tail
            if inner is not None and len(json.dumps(inner[3], ensure_ascii=False)) * 2 > size:
                candidate = inner
            else:
                candidate = (node, key, child_path, child)
        elif isinstance(child, dict):
            candidate = _largest(child, child_path)
            if candidate is not None:
                size = len(json.dumps(candidate[3], ensure_ascii=False))
        if candidate is not None and (best is None or size > best[0]):
            best = (size, candidate)
    return best[1] if best else None


def fit_structured(
    structured: dict[str, Any], output_model: type[BaseModel], max_chars: int
) -> tuple[BaseModel, dict[str, Any], Cut] | None:
    """The structured content cut to `max_chars` and checked against the output model; None if it cannot be."""
    shrunk, cut = shrink(structured, max_chars)
    if len(json.dumps(shrunk, ensure_ascii=False)) > max_chars:
        return None
    try:
        model = output_model.model_validate(shrunk)
    except ValidationError:
        return None
    return model, model.model_dump(mode="json", by_alias=True), cut
