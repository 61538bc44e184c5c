"""The policy gate: every tool call passes here between the MCP server and the namespace handler.

low runs; medium runs and says so; high runs only after the person confirmed it (through the
client, or out of band with `mcp-tools approvals approve`); deny never runs. Every call, run
or not, leaves one audit row.
"""

from __future__ import annotations

import copy
import enum
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from pydantic import BaseModel, ValidationError

from mcp_tools import metrics
from mcp_tools.config import PolicySettings
from mcp_tools.policy import hooks
from mcp_tools.policy.accounts import account_risk
from mcp_tools.policy.arguments import describe_validation_error, shape_refusal
from mcp_tools.policy.display import arguments_text, visible
from mcp_tools.policy.redact import redact
from mcp_tools.policy.result_budget import (
    CHARS_PER_TOKEN,
    CUT_MARK,
    DEFAULT_MAX_RESULT_TOKENS,
    fit_structured,
    result_chars,
)
from mcp_tools.policy.rules import RulePolicy, effective_risk
from mcp_tools.policy.store import Approval, AuditRow, StateStore, StateStoreUnavailable, iso_time
from mcp_tools.policy.unicode import not_unicode, not_unicode_failure, utf8_safe
from mcp_tools.secrets import known_secrets, scrub_text
from mcp_tools.text import plain_text
from mcp_tools.tooling import AbsentWhenNone, CallContext, Risk, ToolFailure, ToolSpec

if TYPE_CHECKING:
    from mcp_tools.policy.channels import OutOfBand

logger = logging.getLogger("mcp_tools.policy")


class Answer(enum.Enum):
    ACCEPT = "accept"
    DECLINE = "decline"
    CANCEL = "cancel"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class ConfirmationRequest:
    """What the person is asked: the exact tool, its risk and key arguments, and one line of effect."""

    tool: str
    risk: Risk
    summary: str
    arguments: dict[str, Any]
    args_sha256: str

    def headline(self) -> str:
        """The summary as a person reads it: one line, nothing hidden (see `mcp_tools.policy.display`)."""
        return visible(self.summary)

    def details(self) -> str:
        """The tool, its risk and every argument, one per line, each value quoted and escaped."""
        return f"Tool: {self.tool} ({self.risk.label} risk)\nArguments:\n{arguments_text(self.arguments)}"

    def message(self) -> str:
        return f"{self.headline()}\n\n{self.details()}\n\nAllow this?"


@dataclass(frozen=True)
class AskLater:
    """The transport will ask in its own round trip (2026-07-28 input-required results)."""

    payload: Any


class Asker(Protocol):
    """A way to ask the person during the call; absent when the client cannot ask.

    `channel` names it in the audit log (`elicitation:stdio`, `terminal`).
    """

    channel: str

    async def ask(self, request: ConfirmationRequest) -> Answer | AskLater: ...


@dataclass
class Caller:
    """Who is calling and through what; built by the transport adapter."""

    transport: str = "local"
    principal: str = "local"
    asker: Asker | None = None
    client: str | None = None  # the client's own name (clientInfo), shown to the person who approves
    progress: Callable[[float, float | None, str | None], Awaitable[None]] | None = None
    # The tools an OAuth sign-in's scopes reach (None: all); calls made through another tool count too.
    reaches: Callable[[Any], bool] | None = None
    # Calls counted beside the gate (text calls under `calls_per_minute`): None spends one, else
    # the seconds until one fits. MCP bodies are counted before they reach the server.
    spend: Callable[[str], float | None] | None = None


@dataclass
class BoundTool:
    """A tool together with its service, its wire name and its configured risk."""

    spec: ToolSpec[Any, Any, Any]
    service: Any
    wire_name: str
    configured_risk: Risk
    # arguments left out of the listed schemas: they act through a tool the policy hides (`reaches`),
    # or the configuration has no use for them (`Namespace.withheld`; a result field of the name goes too)
    withheld: tuple[str, ...] = ()

    def listed_schemas(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The input and output JSON schemas as listed: the withheld arguments left out, and result
        fields of the same names too, except where the argument reaches another tool."""
        inputs = self.spec.input_model.model_json_schema()
        outputs = self.spec.output_model.model_json_schema(mode="serialization")
        for option in self.withheld:
            inputs.get("properties", {}).pop(option, None)
            if option in inputs.get("required", []):
                inputs["required"] = [name for name in inputs["required"] if name != option]
            if option not in self.spec.reaches:
                outputs.get("properties", {}).pop(option, None)
        return inputs, outputs


@dataclass
class CallOutcome:
    """The result in transport-neutral form."""

    text: str
    structured: dict[str, Any] | None = None
    is_error: bool = False
    notice: str | None = None  # for the model: what was done, and to tell the user
    action: str | None = None  # for a person: the same action in a line (`mcp-tools call` prints it)
    ask_later: AskLater | None = None
    images: list[tuple[str, str]] = field(default_factory=list)  # (base64, MIME type): MCP image content

    @property
    def error(self) -> dict[str, Any] | None:
        return self.structured.get("error") if self.is_error and self.structured else None


def canonical_arguments(args: BaseModel) -> dict[str, Any]:
    return args.model_dump(mode="json", by_alias=True)


def arguments_digest(tool: str, arguments: dict[str, Any], seen: tuple[str, ...] = ()) -> str:
    """sha256 over the tool name, its canonical JSON arguments and what the person was shown
    (`seen`: the summary and the target's version): what an approval covers."""
    canonical = json.dumps([arguments, *seen], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{tool}\n{canonical}".encode()).hexdigest()


def failure_outcome(failure: ToolFailure) -> CallOutcome:
    error = failure.as_dict()
    text = f"Error ({failure.kind}): {failure.message}"
    if failure.hint:
        text += f"\nHint: {failure.hint}"
    return CallOutcome(text=text, structured={"error": error}, is_error=True)


class DeferredQuestion(Exception):
    """A nested call's question waits for the transport's round trip; the outer call answers with it."""

    def __init__(self, ask_later: AskLater) -> None:
        super().__init__("a confirmation waits for the client's answer")
        self.ask_later = ask_later


class PolicyGate:
    """Decides, asks, runs and records; one instance serves every transport.

    `tools` holds every running tool by canonical name, filled in by composition: a handler's
    `ctx.call_tool` finds the other namespace's tool there and the call passes this gate again
    as the same caller (rules, `read_only`, precheck, confirmation, audit row).
    """

    def __init__(
        self,
        settings: PolicySettings,
        rules: RulePolicy,
        store: StateStore,
        out_of_band: OutOfBand | None = None,
        max_result_tokens: int = DEFAULT_MAX_RESULT_TOKENS,
    ) -> None:
        self.settings = settings
        self.max_result_tokens = max_result_tokens
        self.rules = rules
        self.store = store
        self.out_of_band = out_of_band
        self.tools: dict[str, BoundTool] = {}

    def unreachable(self, name: str) -> ToolFailure | None:
        """Why another namespace's tool cannot be called through the gate now, or None when it can."""
        target = self.tools.get(name)
        if target is None:
            return ToolFailure("not_configured", f"{name} is not running here (its namespace is off)")
        hidden = self.rules.hidden_reason(target.spec)
        if hidden:
            return ToolFailure("denied_by_policy", hidden)
        return None

    async def refuse(self, name: str, failure: ToolFailure, caller: Caller, raw_args: Any = None) -> CallOutcome:
        """A call the catalog found no tool for (`mcp_tools.catalog`): its audit row, and the
        answer, which is the failure as recorded."""
        started = time.perf_counter()
        kept = isinstance(raw_args, dict) and shape_refusal(name, raw_args) is None  # else the row says nothing of them
        args = utf8_safe(raw_args) if kept else {}  # the row is stored as UTF-8
        state = _CallRecord(tool=utf8_safe(name), args=args, decision="denied")
        outcome = outgoing(failure_outcome(failure), name)
        if not await self._append_audit(caller, state, outcome, started):
            outcome = failure_outcome(store_unavailable())
        return outcome

    async def call(
        self,
        tool: BoundTool,
        name: str,
        raw_args: Any,
        caller: Caller,
        *,
        via: BoundTool | None = None,
    ) -> CallOutcome:
        """One call, start to audit row; `via` is the tool whose handler made this call (`ctx.call_tool`).

        `name` is the name the call was written with; the catalog resolved it to `tool`.
        """
        started = time.perf_counter()
        state = _CallRecord(tool=tool.spec.name, args=raw_args if isinstance(raw_args, dict) else {})
        state.via = via
        try:
            outcome = await self._call(tool, name, raw_args, caller, state)
        except ToolFailure as failure:
            outcome = failure_outcome(failure)
        except StateStoreUnavailable:
            logger.warning("%s refused: the state store cannot be reached", state.tool)
            outcome = failure_outcome(store_unavailable())
        except DeferredQuestion as deferred:
            outcome = CallOutcome(text="", ask_later=deferred.ask_later)
        except anyio.get_cancelled_exc_class():
            if state.decision == "withdrawn":  # the client cancelled while the person was being asked
                cancelled = CallOutcome(text="", structured={"error": {"kind": "cancelled"}}, is_error=True)
                self._audit(caller, state, cancelled, started)
            raise
        except Exception:
            logger.exception("policy checks for %s failed unexpectedly", state.tool)
            outcome = failure_outcome(_internal_error(state.tool))
        if outcome.ask_later is None:
            if via is None:  # a nested result goes to the handler that asked, not out: the outer call's is scrubbed
                outcome = self.within_budget(tool, outgoing(outcome, state.tool))
            if not await self._append_audit(caller, state, outcome, started):
                # Only a low call gets here with the store down (anything else checked it before it
                # ran), and a low call changes nothing: a result without its audit row is not given out.
                logger.warning("%s answered unavailable: its audit row could not be written", state.tool)
                outcome = failure_outcome(store_unavailable())
        return outcome

    async def _call(self, tool: BoundTool, name: str, raw_args: Any, caller: Caller, state: _CallRecord) -> CallOutcome:
        spec = tool.spec
        state.wire_name = state.via.wire_name if state.via is not None else tool.wire_name
        hidden = self.rules.hidden_reason(spec)
        if hidden:
            state.decision = "denied"
            raise ToolFailure("denied_by_policy", hidden)
        if caller.reaches is not None and not caller.reaches(spec):
            state.decision = "denied"
            raise ToolFailure("denied_by_policy", f"{spec.name} is outside the scopes this sign-in was granted")
        if not isinstance(raw_args, dict):
            state.decision = "denied"
            raise ToolFailure("invalid_arguments", f"{spec.name} takes a JSON object of arguments")
        too_large = shape_refusal(spec.name, raw_args)
        if too_large is not None:
            state.decision, state.args = "denied", {}
            raise too_large
        broken = not_unicode(raw_args)
        if broken is not None:
            state.decision, state.args = "denied", {}
            raise not_unicode_failure(broken)
        try:
            args = spec.input_model.model_validate(raw_args)
        except ValidationError as exc:
            state.decision = "denied"
            raise ToolFailure("invalid_arguments", describe_validation_error(spec, exc)) from None
        arguments = canonical_arguments(args)
        state.args = arguments
        self._check_reaches(spec, args, state)
        notices: list[str] = []  # of medium-risk tools this call ran through ctx.call_tool
        context = CallContext(
            principal=caller.principal,
            transport=caller.transport,
            progress=_guarded_progress(caller.progress),
            call_tool=self._caller_of(tool, caller, notices),
            via=state.via.spec.name if state.via is not None else None,
        )
        facts = spec.new_facts()  # what this call learns on its way; never shared with another call
        if spec.prepare is not None:
            try:
                await hooks.gather(spec, tool.service, args, context, facts)
            except ToolFailure:
                state.decision = "precheck_failed"
                raise
        risk = tool.configured_risk
        raised = await hooks.risk_for(spec, tool.service, args, facts)
        if raised is not None:
            risk = effective_risk(risk, raised)
        risk = effective_risk(risk, account_risk(self.rules, spec, args))  # rules naming an account
        if spec.preview is not None and risk is not Risk.DENY and spec.preview(args):
            risk = Risk.LOW  # a dry run changes nothing
        state.risk = risk
        if risk is Risk.DENY:
            state.decision = "denied"
            raise ToolFailure("denied_by_policy", f"{spec.name} is denied by the policy config")
        if spec.precheck is not None:
            try:
                await hooks.check(spec, tool.service, args, facts)
            except ToolFailure:
                state.decision = "precheck_failed"
                raise
        if risk is Risk.HIGH:
            verdict = await self._confirm(tool, args, facts, arguments, risk, caller, state)
            if verdict is not None:
                return verdict
            if state.asked_now and spec.facts is not None:
                facts = await self._still_as_shown(tool, args, facts, state)
        if risk > Risk.LOW and self.store.engine != "sqlite":
            # What changes something must not run while its audit row cannot be written.
            await anyio.to_thread.run_sync(self.store.ping)
        outcome = await self._run(tool, args, context, facts)
        if risk is Risk.MEDIUM and not outcome.is_error:
            summary = hooks.summary(spec, args, facts)
            outcome.action = f"{visible(summary)} ({spec.name}, medium risk)"
            notices.append(f"Action performed: {summary} ({spec.name}, medium risk). Tell the user what was done.")
        if notices and not outcome.is_error:
            outcome.notice = "\n".join(notices)
        return outcome

    def within_budget(self, tool: BoundTool | None, outcome: CallOutcome) -> CallOutcome:
        """The result, or the part of it that fits `max_result_tokens`, saying what was left out.

        Tools page by themselves; this is the net under them. A cut result stays valid against
        the tool's output model (strings shortened, list tails dropped); one that cannot be cut
        validly becomes a `too_large` error, never an over-budget result.
        """
        budget = self.max_result_tokens * CHARS_PER_TOKEN
        images = sum(len(data) for data, _ in outcome.images)
        if (
            outcome.ask_later is not None
            or result_chars(outcome.text, outcome.notice, outcome.structured) + images <= budget
        ):
            return outcome
        if outcome.images:  # tools keep images under the budget; one that does not loses them, and says so
            outcome.images = []
            outcome.text += "\n[the image was left out: it does not fit the result budget; save it to the files store]"
            return self.within_budget(tool, outcome)
        name = tool.spec.name if tool is not None else "the tool"
        if outcome.is_error or outcome.structured is None or tool is None:
            keep = max(0, budget - len(outcome.notice or "") - 200)
            outcome.text = outcome.text[: keep // 2] + CUT_MARK
            if outcome.is_error:
                outcome.structured = {"error": {"kind": "too_large", "message": outcome.text[: keep // 2]}}
            return outcome
        spec = tool.spec
        room = budget - len(outcome.notice or "") - 800  # the note on what was cut
        share = max(256, room - min(len(outcome.text), room // 2))
        for _ in range(12):
            fitted = fit_structured(outcome.structured, spec.output_model, share)
            if fitted is None:
                break
            model, structured, cut = fitted
            text = spec.render_text(model) if spec.render_text else plain_text(structured)
            if len(text) > room - len(json.dumps(structured, ensure_ascii=False)):
                text = text[: max(0, room - len(json.dumps(structured, ensure_ascii=False)) - len(CUT_MARK))] + CUT_MARK
            if result_chars(text, None, structured) <= room:
                note = (
                    f"[{name}: this result was cut to fit the {self.max_result_tokens:,}-token result budget"
                    f" ({cut.describe() or 'text shortened'}). Ask for less at a time (a smaller limit or"
                    " max_chars, an offset or cursor) to read the rest.]"
                )
                return CallOutcome(text=text + "\n\n" + note, structured=structured, notice=outcome.notice)
            share = int(share * 0.7)
        return failure_outcome(
            ToolFailure(
                "too_large",
                f"the result of {name} does not fit the {self.max_result_tokens:,}-token result budget.",
                "Ask for less at a time: a smaller limit or max_chars, or page with offset/cursor.",
            )
        )

    def _check_reaches(self, spec: ToolSpec[Any, Any, Any], args: BaseModel, state: _CallRecord) -> None:
        """An argument that acts through a tool the policy hides is refused before anything runs."""
        for option, target in spec.reaches.items():
            if not getattr(args, option, None):
                continue
            blocked = self.unreachable(target)
            if blocked is not None:
                state.decision = "denied"
                raise ToolFailure(
                    blocked.kind,
                    f"{spec.name} {option} acts through {target}, which cannot run: {blocked.message}",
                    f"call {state.wire_name} without {option}",
                )

    def _caller_of(
        self, outer: BoundTool, caller: Caller, notices: list[str]
    ) -> Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]:
        """`ctx.call_tool` for one call: the declared tools only, through this gate, as the same caller."""

        async def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            if name not in outer.spec.reaches.values():
                raise ToolFailure("denied_by_policy", f"{outer.spec.name} does not declare that it calls {name}")
            blocked = self.unreachable(name)
            if blocked is not None:
                raise blocked
            outcome = await self.call(self.tools[name], name, arguments, caller, via=outer)
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
                notices.append(outcome.notice)
            return outcome.structured or {}

        return call_tool

    async def _confirm(
        self,
        tool: BoundTool,
        args: BaseModel,
        facts: object,
        arguments: dict[str, Any],
        risk: Risk,
        caller: Caller,
        state: _CallRecord,
    ) -> CallOutcome | None:
        """None means: go ahead. Anything else is the answer to give instead of running."""
        spec = tool.spec
        seen = self._seen(spec, args, facts, state)
        summary = seen[0]
        # An approval covers what the person was shown: a target that changed since (another
        # size, another time) gets a new question, never the old answer.
        digest = arguments_digest(spec.name, arguments, seen)
        shown = redact(arguments, self.settings.audit_max_chars)
        prior = self.store.prior_answers(spec.name, digest, caller.principal)
        consumed = self.store.consume_approval(spec.name, digest, caller.principal, prior)
        if consumed is not None:
            state.decision, state.approval_id = "approved_out_of_band", consumed.id
            state.answered_by = consumed.decided_by or "out_of_band"
            return None
        request = ConfirmationRequest(spec.name, risk, summary, shown, digest)
        if caller.asker is not None:
            answer = await caller.asker.ask(request)
            if isinstance(answer, AskLater):
                return CallOutcome(text="", ask_later=answer)
            state.answered_by = getattr(caller.asker, "channel", None) or f"elicitation:{caller.transport}"
            if answer is Answer.ACCEPT:
                state.decision, state.asked_now = "confirmed", True
                metrics.current().approval("elicitation", "approved")
                return None
            state.decision = "declined"
            metrics.current().approval("elicitation", "denied")
            reason = {
                Answer.DECLINE: "the person declined it",
                Answer.CANCEL: "the person dismissed the confirmation",
                Answer.TIMEOUT: "the confirmation timed out without an answer",
            }[answer]
            raise ToolFailure(
                "declined_by_user",
                f"{spec.name} was not run: {reason}.",
                "Do not retry on your own; ask the person what they want instead.",
            )
        denial = prior.denial
        if denial is not None:
            state.decision, state.approval_id = "declined", denial.id
            state.answered_by = denial.decided_by or "out_of_band"
            raise ToolFailure(
                "declined_by_user",
                f"{spec.name} was not run: the person denied approval {denial.id} for these arguments.",
                "Do not retry; ask the person what they want instead.",
            )
        if self.settings.on_no_elicitation == "deny":
            state.decision = "denied"
            raise ToolFailure(
                "denied_by_policy",
                f"{spec.name} needs the person's confirmation and this client cannot ask for it.",
                "Use a client that supports elicitation, or set policy.on_no_elicitation = "
                '"approve_out_of_band" to allow approvals with `mcp-tools approvals approve`.',
            )
        approval = self.store.request_approval(
            tool=spec.name,
            args_sha256=digest,
            args_display=shown,
            summary=request.summary,
            risk=risk.label,
            principal=caller.principal,
            ttl_seconds=self.settings.approval_ttl_seconds,
            origin=(caller.transport, caller.client),
        )
        state.decision, state.approval_id = "approval_required", approval.id
        out_of_band = self.out_of_band
        if out_of_band is not None and out_of_band.reaches_person:
            await out_of_band.announce(approval, request.message(), caller.transport, caller.client)
            if out_of_band.wait_seconds > 0:
                await self._wait_for_person(approval, out_of_band, caller, state)
                state.asked_now = True
                return None
        raise approval_required(approval, state.wire_name, out_of_band.places(approval.id) if out_of_band else None)

    def _seen(
        self, spec: ToolSpec[Any, Any, Any, Any], args: BaseModel, facts: object, state: _CallRecord
    ) -> tuple[str, ...]:
        """What the person is shown of a call: the summary, and the version of its target when the
        tool's checks found one (a file's size and time, not shown but part of what was seen)."""
        summary = hooks.summary(spec, args, facts)
        if state.via is not None:
            summary += f" (for {state.via.spec.name})"
        summary = utf8_safe(scrub_text(summary))
        version = hooks.target_version(facts)
        return (summary,) if version is None else (summary, version)

    async def _still_as_shown(self, tool: BoundTool, args: BaseModel, facts: object, state: _CallRecord) -> object:
        """After the person took time to answer: look at the target again, and run only if it is
        still what they were shown. Returns the facts as they are now."""
        spec = tool.spec
        shown = self._seen(spec, args, facts, state)
        fresh = copy.copy(facts)
        try:
            await hooks.risk_for(spec, tool.service, args, fresh)
            await hooks.check(spec, tool.service, args, fresh)
        except ToolFailure as failure:
            raise ToolFailure(
                failure.kind,
                f"{spec.name} was not run: while the person was deciding, this changed: {failure.message}",
                failure.hint,
            ) from None
        now = self._seen(spec, args, fresh, state)
        if now != shown:
            raise ToolFailure(
                "conflict",
                f"{spec.name} was not run: its target changed while the person was deciding "
                f"(they were shown: {shown[0]}; now: {now[0]}).",
                "Call it again so the person is asked about it as it is now.",
            )
        return fresh

    async def _wait_for_person(
        self, approval: Approval, out_of_band: OutOfBand, caller: Caller, state: _CallRecord
    ) -> None:
        """Hold the call open until the person answers on a channel; returns only when it may run.

        Progress notifications every few seconds keep the client from timing out. A cancelled
        request withdraws the approval, so a late press cannot run anything.
        """
        total = out_of_band.wait_seconds

        async def tick(elapsed: float) -> None:
            if caller.progress is not None:
                left = max(0, round(total - elapsed))
                await caller.progress(
                    elapsed, total, f"Waiting for the person to approve {approval.id} ({left} s left)"
                )

        await tick(0.0)
        try:
            verdict = await out_of_band.decisions.wait(approval.id, total, tick, out_of_band.progress_interval)
        except anyio.get_cancelled_exc_class():
            out_of_band.decisions.withdraw(approval.id)
            state.decision = "withdrawn"
            raise
        if verdict == "approved" and self.store.consume_approval_id(approval.id) is not None:
            state.decision = "approved_out_of_band"
            state.answered_by = self.store.decided_by(approval.id) or "out_of_band"
            return
        if verdict == "denied":
            state.decision = "declined"
            state.answered_by = self.store.decided_by(approval.id) or "out_of_band"
            raise ToolFailure(
                "declined_by_user",
                f"{approval.tool} was not run: the person denied approval {approval.id}.",
                "Do not retry; ask the person what they want instead.",
            )
        raise approval_required(approval, state.wire_name, out_of_band.places(approval.id))

    async def _run(self, tool: BoundTool, args: BaseModel, context: CallContext, facts: object) -> CallOutcome:
        spec = tool.spec
        try:
            output = await hooks.run(spec, tool.service, args, context, facts)
        except ToolFailure as failure:
            return failure_outcome(failure)
        except DeferredQuestion as deferred:
            return CallOutcome(text="", ask_later=deferred.ask_later)
        except Exception:
            logger.exception("tool %s failed unexpectedly", spec.name)
            return failure_outcome(_internal_error(spec.name))
        if not isinstance(output, spec.output_model):
            output = spec.output_model.model_validate(output)
        structured = output.model_dump(mode="json", by_alias=True, exclude_none=isinstance(output, AbsentWhenNone))
        text = spec.render_text(output) if spec.render_text else plain_text(structured)
        return CallOutcome(text=text, structured=structured, images=getattr(output, "images", []))

    def _count(self, state: _CallRecord, outcome: CallOutcome, started: float) -> None:
        error = outcome.error
        metrics.current().call(
            state.tool,
            state.risk.label if state.risk else None,
            error["kind"] if error else "ok",
            time.perf_counter() - started,
        )

    async def _append_audit(self, caller: Caller, state: _CallRecord, outcome: CallOutcome, started: float) -> bool:
        """Write the call's audit row (batched with the calls finishing beside it); False when the
        state store cannot be reached."""
        row = self._counted_row(caller, state, outcome, started)
        try:
            await self.store.append_audit(row)
        except Exception as exc:
            return self._audit_not_written(state, row, exc)
        return True

    def _audit(self, caller: Caller, state: _CallRecord, outcome: CallOutcome, started: float) -> bool:
        """Write the call's audit row now (a cancelled call cannot wait); False when the state store
        cannot be reached."""
        row = self._counted_row(caller, state, outcome, started)
        try:
            self.store.record(row)
        except Exception as exc:
            return self._audit_not_written(state, row, exc)
        return True

    def _counted_row(self, caller: Caller, state: _CallRecord, outcome: CallOutcome, started: float) -> AuditRow:
        self._count(state, outcome, started)
        return self._audit_row(caller, state, outcome, started)

    def _spooled(self, state: _CallRecord, row: AuditRow) -> bool:
        try:
            return self.store.spool_audit(row)
        except OSError as exc:  # the disk too: the caller answers unavailable
            logger.error("could not keep the audit row of %s in the spool: %s", state.tool, exc.strerror or exc)
            return False

    def _audit_not_written(self, state: _CallRecord, row: AuditRow, exc: Exception) -> bool:
        """Whether the call's answer may go out without its row in the store.

        A call that may have changed something (medium or high, run after the store answered its
        check) keeps its row in the local spool and its answer, since withholding it would tell the
        model it did not run; anything else, or a row the spool cannot keep either, gets False (the
        caller answers `unavailable`): no call is reported done without its row kept durably."""
        if not isinstance(exc, StateStoreUnavailable):
            logger.error("the state store refused the audit row for %s", state.tool, exc_info=exc)
        ran = state.decision in ("ran", "confirmed", "approved_out_of_band")
        if ran and state.risk is not None and state.risk > Risk.LOW and self._spooled(state, row):
            logger.warning("%s ran but its audit row could not be stored; it waits in the local spool", state.tool)
            return True
        return False

    def _audit_row(self, caller: Caller, state: _CallRecord, outcome: CallOutcome, started: float) -> AuditRow:
        error = outcome.error
        return AuditRow(
            ts=time.time(),
            transport=caller.transport,
            principal=caller.principal,
            tool=state.tool,
            args=redact(state.args, self.settings.audit_max_chars),
            risk=state.risk.label if state.risk else None,
            decision=state.decision,
            approval_id=state.approval_id,
            duration_ms=(time.perf_counter() - started) * 1000,
            outcome=error["kind"] if error else "ok",
            answered_by=state.answered_by,
        )


def store_unavailable() -> ToolFailure:
    return ToolFailure(
        "unavailable",
        "the server cannot reach its state store (approvals and the audit log) right now; nothing was done",
        "try the same call again in a minute",
    )


def outgoing(outcome: CallOutcome, tool: str) -> CallOutcome:
    """The last step of every call: all text valid UTF-8, no known secret, no URL credentials in errors.

    The cheap check (one JSON dump, one encode, one search per secret) passes nearly every
    result untouched; only a result that fails it is rebuilt.
    """
    kind = outcome.error.get("kind") if outcome.error else None
    parts = [outcome.text, outcome.notice or "", outcome.action or ""]
    if outcome.structured is not None:
        parts.append(json.dumps(outcome.structured, ensure_ascii=False))
    blob = "".join(parts)
    if not blob.isascii():
        try:
            blob.encode("utf-8")
        except UnicodeEncodeError:
            logger.warning("%s returned text that is not valid UTF-8; undecodable bytes are escaped", tool)
            outcome.text = utf8_safe(outcome.text)
            outcome.notice = utf8_safe(outcome.notice)
            outcome.action = utf8_safe(outcome.action)
            outcome.structured = utf8_safe(outcome.structured)
    if known_secrets.present(blob):
        outcome.text = known_secrets.scrub(outcome.text)
        outcome.notice = known_secrets.scrub(outcome.notice) if outcome.notice else outcome.notice
        outcome.action = known_secrets.scrub(outcome.action) if outcome.action else outcome.action
        outcome.structured = known_secrets.scrub_value(outcome.structured)
    if outcome.is_error:
        outcome.text = scrub_text(outcome.text)
        error = {k: _scrub_any(v) for k, v in (outcome.error or {}).items()}
        if kind is not None:  # one word of a fixed vocabulary, never a secret, even when a secret is a word
            error["kind"] = kind
        outcome.structured = {"error": error}
    return outcome


def _guarded_progress(
    progress: Callable[[float, float | None, str | None], Awaitable[None]] | None,
) -> Callable[[float, float | None, str | None], Awaitable[None]] | None:
    """Progress messages leave the server too: valid UTF-8, no known secret."""
    if progress is None:
        return None

    async def report(done: float, total: float | None, message: str | None) -> None:
        await progress(done, total, utf8_safe(scrub_text(message)) if message else message)

    return report


def _scrub_any(value: Any) -> Any:
    return scrub_text(value) if isinstance(value, str) else value


def _internal_error(tool: str) -> ToolFailure:
    return ToolFailure(
        "internal_error",
        f"{tool} failed unexpectedly; the details are in the server log.",
        "Tell the person; retrying the same call is unlikely to help.",
    )


def approval_required(approval: Approval, wire_name: str, places: str | None = None) -> ToolFailure:
    from mcp_tools.commands import mcp_tools

    minutes = max(1, round((approval.expires - approval.created) / 60))
    ask = f"approve it {places} or run" if places else "run"
    earlier = approval.superseded
    changed = (
        f" An earlier approval, {earlier.id}, was for: {earlier.summary}; what the call acts on has changed since,"
        " so that approval no longer covers it."
        if earlier is not None
        else ""
    )
    return ToolFailure(
        "approval_required",
        f"{approval.tool} needs the person's approval before it runs ({approval.summary}). Approval id: {approval.id}."
        + changed,
        f"Ask the person to {ask} `{mcp_tools('approvals', 'approve', approval.id)}` (it expires in about {minutes} "
        f"minutes), then call {wire_name} again with exactly the same arguments.",
        details={"approval_id": approval.id, "expires": iso_time(approval.expires)},
    )


@dataclass
class _CallRecord:
    """What the audit row will say about the call, filled in as the gate learns it."""

    tool: str
    args: dict[str, Any]
    risk: Risk | None = None
    decision: str = "ran"
    approval_id: str | None = None
    wire_name: str = ""  # the tool to call again after an approval: the outer one for a nested call
    via: BoundTool | None = None
    answered_by: str | None = None
    asked_now: bool = False  # the person answered while this call waited: its target may have changed since
