"""The stages a result passes on its way out of the gate: scrubbed (valid UTF-8, no known
secret, no URL credentials in errors), then cut to the result budget. A nested call's result
goes to the handler that asked, not out, so neither applies to it: the outer call's is."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from typing import Any

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.policy.calls import BoundTool, Call, CallOutcome, Verdict, failure_outcome
from mcp_tools.policy.result_budget import CHARS_PER_TOKEN, CUT_MARK, fit_structured, result_chars
from mcp_tools.util.secrets import known_secrets, scrub_text
from mcp_tools.util.text import plain_text, utf8_safe

logger = logging.getLogger("mcp_tools.policy")


class Budget:
    """The result, or the part of it that fits `max_result_tokens`, saying what was left out."""

    def __init__(self, max_result_tokens: int) -> None:
        self.max_result_tokens = max_result_tokens

    def applies(self, tool: BoundTool, nested: bool, scoped: bool = False) -> bool:
        return not nested

    async def leave(self, call: Call, verdict: Verdict) -> Verdict:
        if verdict.outcome is None:
            return verdict
        fitted = self.within_budget(call.tool, verdict.outcome)
        return verdict if fitted is verdict.outcome else replace(verdict, outcome=fitted)

    def within_budget(self, tool: BoundTool | None, outcome: CallOutcome) -> CallOutcome:
        """Tools page by themselves; this is the net under them. A cut result stays valid against
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


class Scrub:
    """Every result and error leaves valid UTF-8, without a known secret (`outgoing`)."""

    def applies(self, tool: BoundTool, nested: bool, scoped: bool = False) -> bool:
        return not nested

    async def leave(self, call: Call, verdict: Verdict) -> Verdict:
        if verdict.outcome is not None and verdict.outcome.ask_later is None:
            outgoing(verdict.outcome, call.name)  # in place
        return verdict


def outgoing(outcome: CallOutcome, tool: str) -> CallOutcome:
    """The last step of every call: all text valid UTF-8, no known secret, no URL credentials in errors.

    The cheap check (one JSON dump, one encode, one search per secret) passes nearly every
    result untouched; only a result that fails it is rebuilt.
    """
    error = outcome.structured.get("error") if outcome.is_error and outcome.structured else None
    kind = error.get("kind") if error else None
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
        error = outcome.structured.get("error") if outcome.structured else None  # as made safe above
        scrubbed = {k: _scrub_any(v) for k, v in (error or {}).items()}
        if kind is not None:  # one word of a fixed vocabulary, never a secret, even when a secret is a word
            scrubbed["kind"] = kind
        outcome.structured = {"error": scrubbed}
    return outcome


def _scrub_any(value: Any) -> Any:
    return scrub_text(value) if isinstance(value, str) else value
