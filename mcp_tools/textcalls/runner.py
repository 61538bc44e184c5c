"""Running text calls: each through the same `PolicyGate.call` as an MCP `tools/call`.

Text can never run anything the gate would refuse; problems run nothing. Calls run one after
another, higher priority first (the scissors-cat format's `priority`), ties in the order written;
a failed call does not stop the ones after it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from typing import TYPE_CHECKING, Any

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.inventory.catalog import lookup
from mcp_tools.policy.gate import Caller, CallOutcome, failure_outcome
from mcp_tools.textcalls.calls import Event, ParsedCall, ParseProblem, Prose
from mcp_tools.textcalls.results import TextCallReport, TextCallResult, now
from mcp_tools.textcalls.streaming import ParsedReply, StreamParser, parse_reply
from mcp_tools.util.commands import mcp_tools

if TYPE_CHECKING:
    from mcp_tools.composition.app import App


async def run_reply(app: App, text: str | bytes, caller: Caller, format: str = "auto") -> TextCallReport:
    """Parse a whole reply and run its calls; the report holds the results and the markdown."""
    reply = parse_reply(text, format, known_names(app))
    return await run_parsed_reply(app, reply, caller, detected=now())


async def run_text_calls(app: App, text: str, caller: Caller, format: str = "auto") -> list[TextCallResult]:
    """Run every call in the text through the policy gate; problems run nothing."""
    return (await run_reply(app, text, caller, format)).results


async def run_parsed_reply(app: App, reply: ParsedReply, caller: Caller, detected: str) -> TextCallReport:
    ids = _ids(reply.items)
    order = sorted(range(len(reply.items)), key=lambda index: -_priority(reply.items[index]))
    results: list[TextCallResult] = []
    for index in order:
        item = reply.items[index]
        if isinstance(item, ParseProblem):
            failure = ToolFailure("invalid_arguments", item.message, item.hint)
            result = TextCallResult(item, item.name, failure_outcome(failure), ids[index])
            result.times = {"detected": detected, "failed": detected}
        else:
            result = await run_parsed_call(app, item, caller, ids[index], detected)
        results.append(result)
    return TextCallReport(reply.format, results, reply.markdown)


async def run_parsed_call(
    app: App, call: ParsedCall, caller: Caller, call_id: str | None = None, detected: str | None = None
) -> TextCallResult:
    """One call through `app.gate`, exactly as an MCP `tools/call` would go.

    The catalog resolves the name (`Catalog.resolve`) as for MCP, aliases of other systems
    included: only what MCP serves this principal answers (the selection, or in dynamic
    discovery what the principal enabled); any other name is refused through the gate, and the
    answer is the failure its audit row records.
    """
    times = {"detected": detected or now()}
    result = TextCallResult(call, None, CallOutcome(""), call_id or call.call_id or "call_1", times=times)
    retry = caller.spend(call.name) if caller.spend is not None else None
    if retry is not None:  # over the principal's calls per minute: nothing runs (the guard audits it)
        failure = ToolFailure(
            "unavailable",
            f"{call.label}: over this caller's tool calls per minute; nothing ran",
            f"try again in {max(1, int(retry))} s",
        )
        return _finished(result, call.name, failure_outcome(failure))
    view = app.catalog.view(caller.principal)
    try:
        found = app.catalog.resolve(call.name, call.arguments, "text", view=view, reaches=caller.reaches, aliases=True)
    except ToolFailure as failure:  # an alias's arguments that cannot be put in the tool's terms
        alias = lookup(call.name)
        name = alias.tool if alias else call.name
        if app.catalog.served(call.name, view=view, reaches=caller.reaches) is None:
            result.written_as = call.name
        failure.message = f"{call.label}: {failure.message}"
        return _finished(result, name, failure_outcome(failure))  # like a parse error: nothing ran, no row
    result.written_as = found.written_as
    times["executing"] = now()
    if found.tool is None:
        assert found.failure is not None
        outcome = await app.gate.refuse(found.name, found.failure, caller, found.arguments)
        return _finished(result, found.name, outcome)
    outcome = await app.gate.call(found.tool, call.name, found.arguments, caller)
    if outcome.ask_later is not None:  # a deferred question needs a transport round trip text cannot make
        outcome = failure_outcome(
            ToolFailure(
                "denied_by_policy",
                f"{found.name} needs the person's confirmation and it cannot be asked here.",
                f"Run it from a terminal, or approve it with `{mcp_tools('approvals', 'approve')}`.",
            ),
        )
    return _finished(result, found.name, outcome)


def known_names(app: App) -> Callable[[str], bool]:
    """The names a bare call in prose may have: every tool of ours or of any namespace, and the aliases."""
    return app.catalog.known_names()


def _finished(result: TextCallResult, name: str, outcome: CallOutcome) -> TextCallResult:
    result.name, result.outcome = name, outcome
    result.times[result.status] = now()
    return result


def _ids(items: list[ParsedCall | ParseProblem]) -> list[str]:
    """The model's own id for each call when it gave a fresh one, else call_<n>."""
    ids: list[str] = []
    seen: set[str] = set()
    for number, item in enumerate(items, start=1):
        own = item.call_id if isinstance(item, ParsedCall) else None
        chosen = own if own and own not in seen else f"call_{number}"
        while chosen in seen:
            chosen += "_"
        seen.add(chosen)
        ids.append(chosen)
    return ids


def _priority(item: ParsedCall | ParseProblem) -> float:
    return item.priority if isinstance(item, ParsedCall) else 0


async def stream_reply(
    app: App, chunks: AsyncIterator[str | bytes], caller: Caller, format: str = "auto"
) -> AsyncIterator[dict[str, Any]]:
    """Run a reply while it streams in: each call runs as soon as it is complete.

    Yields events as JSON-ready dicts: `prose` (text to show), `result` (a call that ran, in the
    `{"id", "name", "content" | "error"}` shape with its status and times), `parse_error`, and a
    last `done` with the reply's format and markdown. A batch of calls that completes at once
    (the scissors-cat tool section) runs higher priority first.
    """
    parser = StreamParser(format, known_names(app))
    numbering = _Numbering()
    async for chunk in chunks:
        async for event in _run_events(app, parser.feed(chunk), caller, numbering):
            yield event
    async for event in _run_events(app, parser.flush(), caller, numbering):
        yield event
    reply = parser.reply
    yield {"event": "done", "format": reply.format, "markdown": reply.markdown, "failed": numbering.failed}


class _Numbering:
    """Ids for calls as they stream in, as `_ids` gives them for a whole reply."""

    def __init__(self) -> None:
        self.count = 0
        self.seen: set[str] = set()
        self.failed = False

    def next(self, item: ParsedCall | ParseProblem) -> str:
        self.count += 1
        own = item.call_id if isinstance(item, ParsedCall) else None
        chosen = own if own and own not in self.seen else f"call_{self.count}"
        while chosen in self.seen:
            chosen += "_"
        self.seen.add(chosen)
        return chosen


async def _run_events(
    app: App, events: Iterable[Event], caller: Caller, numbering: _Numbering
) -> AsyncIterator[dict[str, Any]]:
    batch: list[ParsedCall | ParseProblem] = []
    for event in [*events, None]:
        if isinstance(event, ParsedCall | ParseProblem):
            batch.append(event)
            continue
        detected = now()
        numbered = [(item, numbering.next(item)) for item in batch]
        for item, call_id in sorted(numbered, key=lambda pair: -_priority(pair[0])):
            if isinstance(item, ParseProblem):
                numbering.failed = True
                yield {"event": "parse_error", "id": call_id, "label": item.label, "message": item.message,
                       "hint": item.hint, "line": item.line, "code": item.code}  # fmt: skip
                continue
            result = await run_parsed_call(app, item, caller, call_id, detected)
            numbering.failed = numbering.failed or result.is_error
            yield {"event": "result", **result.as_result(), "status": result.status, "times": result.times}
        batch = []
        if isinstance(event, Prose):
            yield {"event": "prose", "text": event.text}
