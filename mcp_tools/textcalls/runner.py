"""Running text calls: each through the same `PolicyGate.call` as an MCP `tools/call`.

Text can never run anything the gate would refuse; problems run nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_tools.policy.gate import Caller, failure_outcome
from mcp_tools.textcalls.calls import ParsedCall, ParseProblem
from mcp_tools.textcalls.names import ALIASES, resolve_alias
from mcp_tools.textcalls.results import TextCallResult
from mcp_tools.textcalls.streaming import parse_tool_calls
from mcp_tools.tooling import ToolFailure

if TYPE_CHECKING:
    from mcp_tools.app import App


async def run_text_calls(app: App, text: str, caller: Caller) -> list[TextCallResult]:
    """Run every call in the text, in order, through the policy gate; problems run nothing."""
    results: list[TextCallResult] = []
    for item in parse_tool_calls(text):
        if isinstance(item, ParseProblem):
            failure = ToolFailure("invalid_arguments", item.message, item.hint)
            results.append(TextCallResult(item, item.name, failure_outcome(failure)))
            continue
        results.append(await run_parsed_call(app, item, caller))
    return results


async def run_parsed_call(app: App, call: ParsedCall, caller: Caller) -> TextCallResult:
    """One call through `app.gate.call`, exactly as an MCP `tools/call` would go."""
    name, arguments = call.name, call.arguments
    tool = app.find_tool(name)
    if tool is None and name in ALIASES:
        try:
            name, arguments = resolve_alias(name, arguments)
        except ToolFailure as failure:
            failure.message = f"{call.label}: {failure.message}"
            return TextCallResult(call, ALIASES[call.name].tool, failure_outcome(failure))
        tool = app.find_tool(name)
    outcome = await app.gate.call(tool, name, arguments, caller)
    if outcome.ask_later is not None:  # a deferred question needs a transport round trip text cannot make
        outcome = failure_outcome(
            ToolFailure(
                "denied_by_policy",
                f"{name} needs the person's confirmation and it cannot be asked here.",
                "Run it from a terminal, or approve it with `mcp-tools approvals approve`.",
            ),
        )
    return TextCallResult(call, tool.spec.name if tool else name, outcome)
