"""The gate's stages one at a time: what each hands on, what each answers, and the verdict the
audit row is built from.

Each stage is entered (or left) directly with a `Call` as the gate would hand it over; the gate's
own runs of whole calls are in tests/policy/test_gate.py and its neighbours.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_tools.composition.app import App, build_app
from mcp_tools.core.tooling import Arguments, CallContext, Output, Risk, ToolFailure, ToolSpec
from mcp_tools.policy.calls import BoundTool, Call, Caller, CallOutcome, Decision, Verdict, Waiting
from mcp_tools.policy.stages.arguments import Shape, UnicodeText, Validate
from mcp_tools.policy.stages.assess import AssessRisk, Precheck, Prepare
from mcp_tools.policy.stages.audit import Audit
from mcp_tools.policy.stages.confirm import Confirm
from mcp_tools.policy.stages.outgoing import Budget, Scrub
from mcp_tools.policy.stages.reach import ArgumentReach, Visibility
from mcp_tools.policy.stages.run import Run
from mcp_tools.util.secrets import known_secrets
from tests.harness import make_config

pytestmark = pytest.mark.anyio


class NoteArgs(Arguments):
    text: str
    count: int = 1


class NoteOut(Output):
    said: str


async def note(service: Any, args: NoteArgs, ctx: CallContext) -> NoteOut:
    return NoteOut(said=args.text * args.count)


async def always_deny(service: Any, args: NoteArgs) -> Risk:
    return Risk.DENY


async def stale(service: Any, args: NoteArgs) -> None:
    raise ToolFailure("conflict", "the note changed since it was read")


async def broken(service: Any, args: NoteArgs) -> None:
    raise RuntimeError("a bug in the check")


def spec(**changes: Any) -> ToolSpec[Any, Any, Any]:
    settings: dict[str, Any] = {
        "name": "demo.note",
        "description": "Say a note.",
        "input_model": NoteArgs,
        "output_model": NoteOut,
        "handler": note,
        "risk": Risk.LOW,
        "describe": lambda args: f"say {args.text}",
    }
    settings.update(changes)
    return ToolSpec(**settings)


def bound(risk: Risk = Risk.LOW, **changes: Any) -> BoundTool:
    return BoundTool(spec(risk=risk, **changes), None, "demo_note", risk)


def call_of(tool: BoundTool, raw_args: Any, caller: Caller | None = None) -> Call:
    args = raw_args if isinstance(raw_args, dict) else {}
    return Call(tool, tool.spec.name, caller or Caller(), raw_args, time.perf_counter(), verdict=Verdict(args=args))


async def validated(tool: BoundTool, raw_args: dict[str, Any], caller: Caller | None = None) -> Call:
    step = await Validate().enter(call_of(tool, raw_args, caller))
    assert isinstance(step, Call)
    return step


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    (tmp_path / "files").mkdir()
    built = build_app(make_config(tmp_path, {"files": {"root": str(tmp_path / "files")}}))
    async with built.running():
        yield built


def test_a_verdict_is_a_value_no_stage_can_change() -> None:
    verdict = Verdict(Decision.CONFIRMED, {"path": "a"}, Risk.HIGH, answered_by="elicitation:stdio")
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.decision = Decision.DENIED  # type: ignore[misc]
    call = call_of(bound(), {"text": "x"})
    decided = call.deciding(risk=Risk.MEDIUM)
    assert (call.verdict.risk, decided.verdict.risk) == (None, Risk.MEDIUM)  # a new call; the old one as it was


async def test_the_chain_of_a_tool_leaves_out_the_stages_it_does_not_need(app: App) -> None:
    names = {
        tool: [type(stage).__name__ for stage in app.gate.chain(app.gate.tools[tool], nested).entering]
        for tool, nested in (("files.list", False), ("files.delete", False))
    }
    assert names["files.list"] == ["Shape", "UnicodeText", "Validate", "AssessRisk", "Run"]
    assert names["files.delete"][-2:] == ["Confirm", "Run"]  # high risk: the person is asked first
    out = [type(stage).__name__ for stage in app.gate.chain(app.gate.tools["files.list"]).leaving]
    nested = [type(stage).__name__ for stage in app.gate.chain(app.gate.tools["files.list"], True).leaving]
    assert (out, nested) == (["Scrub", "Budget", "Audit"], ["Audit"])  # a nested result is the outer call's to scrub
    # a caller whose OAuth scopes limit it is asked whether they reach the tool
    scoped = [type(stage).__name__ for stage in app.gate.chain(app.gate.tools["files.list"], scoped=True).entering]
    assert scoped[0] == "Visibility"


async def test_a_tool_the_policy_hides_keeps_visibility_in_every_chain(tmp_path: Path) -> None:
    (tmp_path / "files").mkdir()
    settings = {"files": {"root": str(tmp_path / "files")}, "policy": {"disabled": ["files.list"]}}
    built = build_app(make_config(tmp_path, settings))
    built.store.close()
    chain = built.gate.chain(built.gate.tools["files.list"])
    assert type(chain.entering[0]).__name__ == "Visibility"


async def test_visibility_refuses_a_tool_outside_the_sign_ins_scopes(app: App) -> None:
    caller = Caller(reaches=lambda spec: spec.name != "demo.note")
    verdict = await Visibility(app.rules).enter(call_of(bound(), {"text": "x"}, caller))
    assert isinstance(verdict, Verdict) and verdict.decision is Decision.DENIED
    assert verdict.outcome is not None and verdict.outcome.error is not None
    assert verdict.outcome.error["kind"] == "denied_by_policy"
    assert "outside the scopes this sign-in was granted" in verdict.outcome.error["message"]
    passed = await Visibility(app.rules).enter(call_of(bound(), {"text": "x"}))
    assert isinstance(passed, Call)


@pytest.mark.parametrize(
    ("raw_args", "kind", "kept"),
    [
        (["not", "an", "object"], "invalid_arguments", {}),
        ({f"k{i}": i for i in range(10_001)}, "invalid_arguments", {}),  # past the names any call takes
    ],
)
async def test_shape_refuses_what_no_call_takes_and_the_row_keeps_nothing_of_it(
    raw_args: Any, kind: str, kept: dict[str, Any]
) -> None:
    verdict = await Shape().enter(call_of(bound(), raw_args))
    assert isinstance(verdict, Verdict) and verdict.decision is Decision.DENIED
    assert verdict.outcome is not None and verdict.outcome.error is not None
    assert (verdict.outcome.error["kind"], verdict.args) == (kind, kept)


async def test_unicode_text_names_where_a_lone_surrogate_sits() -> None:
    verdict = await UnicodeText().enter(call_of(bound(), {"text": "ok\ud800"}))
    assert isinstance(verdict, Verdict) and verdict.decision is Decision.DENIED and verdict.args == {}
    assert verdict.outcome is not None and verdict.outcome.error is not None
    assert verdict.outcome.error["message"].startswith("text is not valid Unicode text")
    assert isinstance(await UnicodeText().enter(call_of(bound(), {"text": "ok"})), Call)


async def test_validate_says_what_to_fix_or_hands_on_the_canonical_arguments() -> None:
    refused = await Validate().enter(call_of(bound(), {"text": 3}))
    assert isinstance(refused, Verdict) and refused.decision is Decision.DENIED
    assert refused.args == {"text": 3}  # the row records what was sent
    call = await validated(bound(), {"text": "hi"})
    assert isinstance(call.args, NoteArgs)
    assert call.verdict.args == {"text": "hi", "count": 1}  # defaults filled in: what a digest covers


async def test_argument_reach_refuses_an_argument_acting_through_a_tool_that_cannot_run(app: App) -> None:
    class SaveArgs(Arguments):
        text: str
        save_to: str | None = None

    tool = bound(input_model=SaveArgs, reaches={"save_to": "nowhere.write"})
    stage = ArgumentReach(app.gate)
    assert stage.applies(tool, False) and not stage.applies(bound(), False)
    verdict = await stage.enter(await validated(tool, {"text": "x", "save_to": "a.txt"}))
    assert isinstance(verdict, Verdict) and verdict.outcome is not None and verdict.outcome.error is not None
    assert verdict.outcome.error["kind"] == "not_configured"
    assert "save_to acts through nowhere.write" in verdict.outcome.error["message"]
    assert isinstance(await stage.enter(await validated(tool, {"text": "x"})), Call)


async def test_prepare_failing_is_a_failed_precondition(app: App) -> None:
    async def gone(service: Any, args: NoteArgs, ctx: CallContext) -> None:
        raise ToolFailure("not_found", "no such note")

    tool = bound(prepare=gone)
    stage = Prepare(app.gate)
    assert stage.applies(tool, False) and not stage.applies(bound(), False)
    verdict = await stage.enter(await validated(tool, {"text": "x"}))
    assert isinstance(verdict, Verdict) and verdict.decision is Decision.PRECHECK_FAILED


async def test_assess_risk_takes_the_configured_risk_and_refuses_deny() -> None:
    call = await AssessRisk().enter(await validated(bound(Risk.MEDIUM), {"text": "x"}))
    assert isinstance(call, Call) and call.verdict.risk is Risk.MEDIUM
    denied = await AssessRisk().enter(await validated(bound(dynamic_risk=always_deny), {"text": "x"}))
    assert isinstance(denied, Verdict) and (denied.decision, denied.risk) == (Decision.DENIED, Risk.DENY)
    preview = bound(Risk.HIGH, preview=lambda args: args.count == 0)
    dry = await AssessRisk().enter(await validated(preview, {"text": "x", "count": 0}))
    assert isinstance(dry, Call) and dry.verdict.risk is Risk.LOW  # a dry run changes nothing


async def test_precheck_failing_answers_before_anyone_is_asked() -> None:
    tool = bound(Risk.HIGH, precheck=stale)
    assert Precheck().applies(tool, False) and not Precheck().applies(bound(), False)
    verdict = await Precheck().enter(await validated(tool, {"text": "x"}))
    assert isinstance(verdict, Verdict) and verdict.decision is Decision.PRECHECK_FAILED
    assert verdict.outcome is not None and verdict.outcome.error is not None
    assert verdict.outcome.error["kind"] == "conflict"


async def test_run_answers_with_the_output_and_says_what_a_medium_call_did(app: App) -> None:
    call = await AssessRisk().enter(await validated(bound(Risk.MEDIUM), {"text": "ab", "count": 2}))
    assert isinstance(call, Call)
    verdict = await Run(app.store, app.gate).enter(call)
    assert isinstance(verdict, Verdict) and (verdict.decision, verdict.risk) == (Decision.RAN, Risk.MEDIUM)
    assert verdict.outcome is not None and verdict.outcome.structured == {"said": "abab"}
    assert verdict.outcome.action == "say ab (demo.note, medium risk)"
    assert verdict.outcome.notice is not None and verdict.outcome.notice.startswith("Action performed: say ab")


async def test_scrub_takes_a_known_secret_out_of_the_answer() -> None:
    known_secrets.add("s3cr3t-value-for-the-stage-test")
    answer = CallOutcome(text="the key is s3cr3t-value-for-the-stage-test", structured={"said": "ok"})
    verdict = await Scrub().leave(call_of(bound(), {}), Verdict(outcome=answer))
    assert verdict.outcome is not None and "s3cr3t-value-for-the-stage-test" not in verdict.outcome.text


async def test_budget_cuts_a_result_to_what_fits_and_says_so() -> None:
    answer = CallOutcome(text="x" * 20_000, structured={"said": "x" * 20_000})
    verdict = await Budget(max_result_tokens=1_000).leave(call_of(bound(), {}), Verdict(outcome=answer))
    assert verdict.outcome is not None and verdict.outcome is not answer
    assert len(verdict.outcome.text) < 4_000 and "result budget" in verdict.outcome.text
    small = CallOutcome(text="short", structured={"said": "short"})
    assert (await Budget(1_000).leave(call_of(bound(), {}), Verdict(outcome=small))).outcome is small


async def test_the_audit_row_is_built_from_the_verdict(app: App) -> None:
    call = call_of(bound(), {"text": "x"}, Caller(transport="test", principal="ada"))
    failure = ToolFailure("declined_by_user", "the person said no")
    verdict = call.refused(failure, Decision.DECLINED, risk=Risk.HIGH, approval_id="a1", answered_by="page")
    assert await Audit(app.config.policy, app.store).leave(call, verdict) is verdict
    (row,) = app.store.tail(1)
    assert (row.tool, row.transport, row.principal, row.args) == ("demo.note", "test", "ada", {"text": "x"})
    assert (row.risk, row.decision, row.approval_id, row.answered_by, row.outcome) == (
        "high",
        "declined",
        "a1",
        "page",
        "declined_by_user",
    )


async def test_what_fails_unexpectedly_is_settled_as_the_call_then_stood(app: App) -> None:
    tool = bound(Risk.MEDIUM, precheck=broken)
    outcome = await app.gate.call(tool, "demo.note", {"text": "x"}, Caller(transport="test"))
    assert outcome.error is not None and outcome.error["kind"] == "internal_error"
    (row,) = app.store.tail(1)
    assert (row.risk, row.decision, row.args) == ("medium", "ran", {"text": "x", "count": 1})


class Watch:
    """A caller's `ConfirmationWatch`: what a task would report while its call waits."""

    def __init__(self, hold: bool) -> None:
        self.hold_while_approval_lives = hold
        self.seen: list[tuple[str, Waiting]] = []
        self.waiting_now = anyio.Event()

    async def waiting(self, wait: Waiting) -> None:
        self.seen.append(("waiting", wait))
        self.waiting_now.set()

    async def resumed(self, wait: Waiting) -> None:
        self.seen.append(("resumed", wait))


async def test_a_watch_hears_when_the_call_waits_for_an_approval_and_may_hold_it_while_the_approval_lives(
    app: App,
) -> None:
    # No channel reaches the person and `[approvals] wait_seconds` is 0: without the watch the
    # call answers approval_required at once; with it, the call waits until the person answers.
    assert not app.out_of_band.reaches_person
    tool = bound(Risk.HIGH)
    watch = Watch(hold=True)
    outcomes: list[CallOutcome] = []

    async def call() -> None:
        outcomes.append(await app.gate.call(tool, "demo.note", {"text": "x"}, Caller(transport="test", watch=watch)))

    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await watch.waiting_now.wait()
            (event, wait), *_ = watch.seen
            assert event == "waiting" and wait.approval_id is not None and wait.channel == "out_of_band"
            assert wait.expires is not None and wait.expires > time.time()
            app.out_of_band.decisions.decide(wait.approval_id, True, "cli")
    (outcome,) = outcomes
    assert not outcome.is_error, outcome.text
    assert [event for event, _ in watch.seen] == ["waiting", "resumed"]
    (row,) = app.store.tail(1)
    assert (row.decision, row.approval_id, row.answered_by) == ("approved_out_of_band", wait.approval_id, "cli")


async def test_a_watch_hears_nothing_of_a_call_that_does_not_wait(app: App) -> None:
    watch = Watch(hold=False)
    outcome = await app.gate.call(bound(Risk.HIGH), "demo.note", {"text": "x"}, Caller(transport="test", watch=watch))
    assert outcome.error is not None and outcome.error["kind"] == "approval_required"
    assert watch.seen == []  # nothing waited: the call answered at once


async def test_a_watch_hears_the_question_asked_in_the_client(app: App) -> None:
    from mcp_tools.policy.calls import Answer, ConfirmationRequest

    class Asker:
        channel = "elicitation:test"

        async def ask(self, request: ConfirmationRequest) -> Answer:
            return Answer.ACCEPT

    watch = Watch(hold=False)
    caller = Caller(transport="test", asker=Asker(), watch=watch)
    outcome = await app.gate.call(bound(Risk.HIGH), "demo.note", {"text": "x"}, caller)
    assert not outcome.is_error, outcome.text
    assert [(event, wait.channel, wait.approval_id) for event, wait in watch.seen] == [
        ("waiting", "elicitation:test", None),
        ("resumed", "elicitation:test", None),
    ]


async def test_confirm_applies_only_where_the_risk_can_be_high(app: App) -> None:
    confirm = Confirm(app.config.policy, app.store, app.out_of_band, Audit(app.config.policy, app.store))
    assert confirm.applies(bound(Risk.HIGH), False)
    assert confirm.applies(bound(dynamic_risk=always_deny), False)
    assert not confirm.applies(bound(Risk.MEDIUM), False)


def test_http_takes_its_utf8_helpers_from_the_text_module_not_the_gate() -> None:
    from tests.layers import imports_of, modules

    known = modules()
    targets = {edge.target for edge in imports_of("mcp_tools.transports.http", known)}
    assert "mcp_tools.util.text" in targets
    assert not targets & {"mcp_tools.policy.unicode", "mcp_tools.policy.gate", "mcp_tools.policy.stages"}
