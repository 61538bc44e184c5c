"""Tool calls written as plain text by models without native tool calling.

Such a model writes its calls in the reply: JSON in prose, fenced code-writing tools, or the
scissors-cat format (a call array, ✂️🐱, then markdown). One module per shape finds them (`prose`,
`scissors`; pure, bounded), `shapes` decides which call a JSON value is, `attempts` which object
in prose is shaped only as a call (answered even when its name is unknown), `streaming` reads a
reply piece by piece exactly as it reads the whole, `results` shapes what came back, and `runner`
has the catalog (`mcp_tools.inventory.catalog`) resolve each name, aliases other systems' models write
included, then sends the call through the same `PolicyGate` as an MCP client would, so text
can never run anything the gate would refuse.
"""

from typing import Any

from mcp_tools.inventory.catalog import Alias, resolve_alias
from mcp_tools.textcalls.calls import MAX_CALLS, MAX_TEXT_CHARS, ParsedCall, ParseProblem, Prose
from mcp_tools.textcalls.results import TextCallReport, TextCallResult, render_markdown
from mcp_tools.textcalls.runner import run_parsed_call, run_reply, run_text_calls, stream_reply
from mcp_tools.textcalls.scissors import DELIMITERS
from mcp_tools.textcalls.streaming import FORMATS, ParsedReply, StreamParser, parse_reply, parse_tool_calls

__all__ = [
    "ALIASES",
    "DELIMITERS",
    "FORMATS",
    "MAX_CALLS",
    "MAX_TEXT_CHARS",
    "Alias",
    "ParseProblem",
    "ParsedCall",
    "ParsedReply",
    "Prose",
    "StreamParser",
    "TextCallReport",
    "TextCallResult",
    "parse_reply",
    "parse_tool_calls",
    "render_markdown",
    "resolve_alias",
    "run_parsed_call",
    "run_reply",
    "run_text_calls",
    "stream_reply",
]


def __getattr__(name: str) -> Any:
    """`ALIASES`: every alias the namespaces declare, read from them on first use."""
    if name == "ALIASES":
        from mcp_tools.inventory import catalog

        return catalog.declared().aliases
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
