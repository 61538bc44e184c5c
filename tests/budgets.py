"""Checks shared by the result-budget tests: a result fits, and says how to get the rest."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

DEFAULT_TOKENS = 20_000


def result_tokens(result: types.CallToolResult) -> int:
    """Text blocks plus structured content, characters / 4: what the result costs a model."""
    chars = sum(len(block.text) for block in result.content if isinstance(block, types.TextContent))
    chars += sum(
        len(getattr(block, "data", "")) for block in result.content if not isinstance(block, types.TextContent)
    )
    if result.structured_content is not None:
        chars += len(json.dumps(result.structured_content, ensure_ascii=False))
    return -(-chars // 4)


def assert_fits(result: types.CallToolResult, tokens: int = DEFAULT_TOKENS, *, gate_may_cut: bool = False) -> int:
    """Within the budget; unless `gate_may_cut`, because the tool paged by itself (the gate cut nothing)."""
    used = result_tokens(result)
    assert used <= tokens, f"{used:,} tokens over the {tokens:,}-token budget"
    if not gate_may_cut:
        assert "-token result budget" not in text(result), "the tool relied on the gate to cut its result"
    return used


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def says_more(result: types.CallToolResult, *words: str) -> None:
    """The result tells the model there is more and how to ask for it."""
    said = text(result)
    assert "more" in said.lower() and "call again" in said.lower(), said[-400:]
    for word in words:
        assert word in said, f"{word!r} not in {said[-400:]!r}"


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text(result)[:500]
    assert result.structured_content is not None
    return result.structured_content
