"""The innermost stage: the handler runs and its output becomes the result."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from mcp_tools.core.tooling import AbsentWhenNone, CallContext, Risk, ToolFailure
from mcp_tools.policy import hooks
from mcp_tools.policy.calls import (
    BoundTool,
    Call,
    CallOutcome,
    DeferredQuestion,
    Progress,
    Verdict,
    failure_outcome,
    internal_error,
)
from mcp_tools.policy.display import visible
from mcp_tools.policy.stages import Gateway
from mcp_tools.state.store import StateStore
from mcp_tools.util.secrets import scrub_text
from mcp_tools.util.text import plain_text, utf8_safe

logger = logging.getLogger("mcp_tools.policy")


class Run:
    """Runs the handler: a failure is its answer, an output is checked against the output model
    and rendered as text; a medium-risk result says what was done (`notice` for the model,
    `action` for a person), with the notices of medium-risk tools it called."""

    def __init__(self, store: StateStore, gate: Gateway) -> None:
        self.store = store
        self.gate = gate

    def applies(self, tool: BoundTool, nested: bool, scoped: bool = False) -> bool:
        return True

    async def enter(self, call: Call) -> Call | Verdict:
        spec = call.tool.spec
        risk = call.verdict.risk
        if risk is not None and risk > Risk.LOW and self.store.engine != "sqlite":
            # What changes something must not run while its audit row cannot be written.
            await anyio.to_thread.run_sync(self.store.ping)
        outcome = await self.run(call)
        if risk is Risk.MEDIUM and not outcome.is_error:
            summary = hooks.summary(spec, call.args, call.facts)
            outcome.action = f"{visible(summary)} ({spec.name}, medium risk)"
            call.notices.append(f"Action performed: {summary} ({spec.name}, medium risk). Tell the user what was done.")
        if call.notices and not outcome.is_error:
            outcome.notice = "\n".join(call.notices)
        return call.ends(outcome)

    async def run(self, call: Call) -> CallOutcome:
        tool, spec = call.tool, call.tool.spec
        context = call.context or context_for(call, self.gate)  # `Prepare` made it for a tool with `prepare`
        try:
            output = await hooks.run(spec, tool.service, call.args, context, call.facts)
        except ToolFailure as failure:
            return failure_outcome(failure)
        except DeferredQuestion as deferred:
            return CallOutcome(text="", ask_later=deferred.ask_later)
        except Exception:
            logger.exception("tool %s failed unexpectedly", spec.name)
            return failure_outcome(internal_error(spec.name))
        if not isinstance(output, spec.output_model):
            output = spec.output_model.model_validate(output)
        structured = output.model_dump(mode="json", by_alias=True, exclude_none=isinstance(output, AbsentWhenNone))
        text = spec.render_text(output) if spec.render_text else plain_text(structured)
        return CallOutcome(text=text, structured=structured, images=getattr(output, "images", []))


def context_for(call: Call, gate: Gateway) -> CallContext:
    """What the tool's hooks are given: who calls and through what, progress (scrubbed on its way
    out), and `ctx.call_tool`."""
    caller = call.caller
    return CallContext(
        principal=caller.principal,
        transport=caller.transport,
        progress=guarded_progress(caller.progress),
        call_tool=calls_from(call, gate),
        via=call.via.spec.name if call.via is not None else None,
    )


def calls_from(call: Call, gate: Gateway) -> Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]:
    """`ctx.call_tool` for one call: the declared tools only, through the gate, as the same caller."""
    outer = call.tool

    async def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name not in outer.spec.reaches.values():
            raise ToolFailure("denied_by_policy", f"{outer.spec.name} does not declare that it calls {name}")
        blocked = gate.unreachable(name)
        if blocked is not None:
            raise blocked
        outcome = await gate.call(gate.tools[name], name, arguments, call.caller, via=outer)
        if outcome.ask_later is not None:
            raise DeferredQuestion(outcome.ask_later)
        if outcome.is_error:
            error = dict(outcome.error or {})
            kind = error.pop("kind", "internal_error")
            message = error.pop("message", "")
            hint = error.pop("hint", None)
            said = message if message.startswith(name) else f"{name}: {message}"
            raise ToolFailure(kind, said, hint, details=error)
        if outcome.notice:  # the person hears of it as if the caller had made the call itself
            call.notices.append(outcome.notice)
        return outcome.structured or {}

    return call_tool


def guarded_progress(progress: Progress | None) -> Progress | None:
    """Progress messages leave the server too: valid UTF-8, no known secret."""
    if progress is None:
        return None

    async def report(done: float, total: float | None, message: str | None) -> None:
        await progress(done, total, utf8_safe(scrub_text(message)) if message else message)

    return report
