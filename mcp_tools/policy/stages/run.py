"""The innermost stage: the handler runs and its output becomes the result."""

from __future__ import annotations

import logging

import anyio

from mcp_tools.policy import hooks
from mcp_tools.policy.calls import BoundTool, CallOutcome, DeferredQuestion, failure_outcome, internal_error
from mcp_tools.policy.display import visible
from mcp_tools.policy.stages import Call, CallNext, Verdict, settle
from mcp_tools.policy.store import StateStore
from mcp_tools.text import plain_text
from mcp_tools.tooling import AbsentWhenNone, Risk, ToolFailure

logger = logging.getLogger("mcp_tools.policy")


class Run:
    """Runs the handler: a failure is its answer, an output is checked against the output model
    and rendered as text; a medium-risk result says what was done (`notice` for the model,
    `action` for a person), with the notices of medium-risk tools it called."""

    def __init__(self, store: StateStore) -> None:
        self.store = store

    def applies(self, tool: BoundTool, nested: bool) -> bool:
        return True

    async def handle(self, call: Call, call_next: CallNext) -> Verdict:
        spec = call.tool.spec
        risk = call.verdict.risk
        try:
            if risk is not None and risk > Risk.LOW and self.store.engine != "sqlite":
                # What changes something must not run while its audit row cannot be written.
                await anyio.to_thread.run_sync(self.store.ping)
            outcome = await self.run(call)
            if risk is Risk.MEDIUM and not outcome.is_error:
                summary = hooks.summary(spec, call.args, call.facts)
                outcome.action = f"{visible(summary)} ({spec.name}, medium risk)"
                call.notices.append(
                    f"Action performed: {summary} ({spec.name}, medium risk). Tell the user what was done."
                )
        except Exception as exc:  # the output not matching its model, a store out of reach
            return settle(call, exc)
        if call.notices and not outcome.is_error:
            outcome.notice = "\n".join(call.notices)
        return call.ends(outcome)

    async def run(self, call: Call) -> CallOutcome:
        tool, spec = call.tool, call.tool.spec
        assert call.context is not None, "Prepare gives every call its context"
        try:
            output = await hooks.run(spec, tool.service, call.args, call.context, call.facts)
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
