"""Running tasks: each task's call goes through the policy gate like any other, in the background.

A high-risk call asks the person through `TaskAsker`: one approval, announced on the out-of-band
channels and answerable on every one of them (the approvals page, Telegram, the approval card, the
CLI, and a form the client shows through `tasks/result` or `tasks/update`), waited for as long as
the approval lives. The task is `input_required` meanwhile. Then the call runs and the task ends
with its result; a refusal ends it with the refusal.

The runner leases the tasks it runs in the state store and renews the lease while it runs; a task
whose lease ran out (its server stopped) is taken over by the next runner of the same endpoint that
looks: at start, every few seconds, and whenever a client asks about it.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from mcp_tools.policy.channels import approve_command
from mcp_tools.policy.gate import Answer, AskLater, BoundTool, Caller, ConfirmationRequest
from mcp_tools.state.tasks import TaskRow, TaskStore

if TYPE_CHECKING:
    from mcp_tools.composition.app import App
    from mcp_tools.resources.face import Documents
    from mcp_tools.tasks.face import Face

logger = logging.getLogger("mcp_tools.tasks")
LEASE_SECONDS = 30.0
KEEP_SECONDS = 10.0  # how often leases are renewed, expired tasks forgotten and orphans taken over
CHANGE_POLL_SECONDS = 0.5  # a waiter's fallback for changes made by another replica
PROGRESS_EVERY_SECONDS = 1.0  # progress is written to the task's status message at most this often,
PROGRESS_STEP = 0.1  # or when it has gone another tenth of the way (and at the end)
RESULT_KEEP_SECONDS = 3600  # how long a finished task's result is kept after the approval could have lived
MAX_EXTRA_SECONDS = 24 * 3600

Notify = Callable[[TaskRow], Awaitable[None]]


def task_ttl_ms(requested_ms: int | None, approval_ttl_seconds: float) -> int:
    """The ttl a task gets: long enough to wait as long as its approval lives and then hand out the
    result, at least what the client asked, within a day beyond the approval's life."""
    floor = (approval_ttl_seconds + 600) * 1000
    ceiling = (approval_ttl_seconds + MAX_EXTRA_SECONDS) * 1000
    wanted = (approval_ttl_seconds + RESULT_KEEP_SECONDS) * 1000 if requested_ms is None else requested_ms
    return int(min(max(wanted, floor), ceiling))


def may_wait(tool: BoundTool) -> bool:
    """Whether a call of this tool may wait for the person: high risk, or raised to it by its arguments."""
    from mcp_tools.core.tooling import Risk

    return tool.configured_risk >= Risk.HIGH or tool.spec.dynamic_risk is not None


def _amount(value: float) -> str:
    """A progress count as a person reads it: `1,048,576`, not `1.04858e+06`."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def is_long(tool: BoundTool, arguments: Mapping[str, Any]) -> bool:
    """Whether these arguments make a long call of a tool that lists task support for its long
    calls (a large transfer): one worth a task whether or not it may wait for the person."""
    spec = tool.spec
    return spec.task_support != "forbidden" and (spec.long_call is None or spec.long_call(arguments))


def runs_as_task(tool: BoundTool, arguments: Mapping[str, Any], asked: bool) -> bool:
    """Whether this call becomes a task: one that may wait for the person, or one of a tool that
    lists task support because its calls may take long, where the client asked (2025-11-25) or,
    unasked (2026-07-28), where these arguments make a long call."""
    if may_wait(tool):
        return True
    if asked:
        return tool.spec.task_support != "forbidden"
    return is_long(tool, arguments)


class TaskAsker:
    """Asks the person about a task's call: one approval, answered on any channel, for as long as it lives."""

    def __init__(self, runner: TaskRunner, task_id: str, caller: Caller) -> None:
        self.runner = runner
        self.task_id = task_id
        self.caller = caller
        self.channel = "task"  # set to who answered before `ask` returns (the gate records it)

    async def ask(self, request: ConfirmationRequest) -> Answer | AskLater:
        runner, app = self.runner, self.runner.app
        store = app.store
        row = await anyio.to_thread.run_sync(runner.tasks.row, self.task_id)
        if row is None or row.terminal:
            return Answer.CANCEL
        approval = None
        if row.approval_id is not None:  # a task taken over after a restart: its approval, as it stands
            approval = await anyio.to_thread.run_sync(store.get_approval, row.approval_id)
            if approval is not None and approval.args_sha256 != request.args_sha256:
                approval = None  # its target changed since: the person is asked about it as it is now
        if approval is None:
            approval = await anyio.to_thread.run_sync(
                lambda: store.request_approval(
                    tool=request.tool,
                    args_sha256=request.args_sha256,
                    args_display=request.arguments,
                    summary=request.summary,
                    risk=request.risk.label,
                    principal=self.caller.principal,
                    ttl_seconds=app.config.policy.approval_ttl_seconds,
                    origin=(self.caller.transport, self.caller.client),
                )
            )
        out_of_band = app.out_of_band
        places = out_of_band.places(approval.id)
        command = f"`{approve_command(approval.id)}`"
        where = f"approve it {places} or run {command}" if places else f"run {command}"
        waiting = f"Waiting for the person to approve {approval.id} ({request.headline()}): {where}."
        await anyio.to_thread.run_sync(runner.tasks.waiting, self.task_id, approval.id, request.message(), waiting)
        await runner.changed(self.task_id)
        if out_of_band.reaches_person:
            await out_of_band.announce(approval, request.message(), self.caller.transport, self.caller.client)
        verdict = await self._verdict(approval.id, approval.expires)
        decided_by = await anyio.to_thread.run_sync(store.decided_by, approval.id)
        if verdict == "approved":
            used = await anyio.to_thread.run_sync(store.consume_approval_id, approval.id)
            if used is None:
                return Answer.CANCEL
            self.channel = decided_by or "out_of_band"
            await anyio.to_thread.run_sync(runner.tasks.working, self.task_id, f"Approved by {self.channel}; running.")
            await runner.changed(self.task_id)
            return Answer.ACCEPT
        if verdict == "denied":
            self.channel = decided_by or "out_of_band"
            return Answer.DECLINE
        if verdict in ("expired", None):
            self.channel = "task:expired"
            return Answer.TIMEOUT
        self.channel = "task:cancelled"  # withdrawn (the task was cancelled), or used by another call
        return Answer.CANCEL

    async def _verdict(self, approval_id: str, expires: float) -> str | None:
        decisions = self.runner.app.out_of_band.decisions
        # The store's clock says when the approval expires; real time is only the backstop.
        left = max(1.0, expires - self.runner.tasks.clock() + 1.0)
        return await decisions.wait(approval_id, left)


class TaskRunner:
    """Runs one endpoint's tasks in the background of a serving process."""

    def __init__(self, app: App, transport: str, namespace: str | None, face: Face) -> None:
        from mcp_tools.state import derive_key

        secret = app.config.state_secret()
        self.app = app
        self.face = face
        self.transport = transport
        self.endpoint = namespace or ""
        self.namespace = namespace
        self.tasks = TaskStore(app.store, derive_key(secret, "tasks") if secret else None)
        self.owner = f"{secrets.token_hex(6)}"
        self.running: set[str] = set()
        self.notifiers: dict[str, Notify] = {}
        self._events: dict[str, anyio.Event] = {}
        self._running_scopes: dict[str, anyio.CancelScope] = {}
        self._stoppable: dict[str, anyio.CancelScope] = {}  # tasks whose tool is running: cancelling stops it
        self._group: anyio.abc.TaskGroup | None = None
        self._documents: Documents | None = None

    @property
    def documents(self) -> Documents:
        """The stored documents a task's result links to (a download saved to the files store)."""
        if self._documents is None:
            from mcp_tools.resources.face import Documents

            self._documents = Documents(self.app, self.namespace)
        return self._documents

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[TaskRunner]:
        """For the life of the server: run tasks, keep their leases, take over orphans."""
        async with anyio.create_task_group() as group:
            self._group = group
            group.start_soon(self._keep)
            try:
                yield self
            finally:
                self._group = None
                group.cancel_scope.cancel()
        # The next server takes them over at once; a store that does not answer soon leaves them to
        # their leases, and a stop already under way still gets this far (shielded).
        with anyio.move_on_after(5, shield=True), contextlib.suppress(Exception):
            await anyio.to_thread.run_sync(self.tasks.release, self.owner, abandon_on_cancel=True)

    async def _keep(self) -> None:
        while True:
            try:
                await anyio.to_thread.run_sync(self.tasks.renew, self.owner, LEASE_SECONDS)
                await anyio.to_thread.run_sync(self.tasks.purge)
                for task_id in await anyio.to_thread.run_sync(self.tasks.orphans, self.endpoint):
                    await self.adopt(task_id)
            except Exception:  # the store away: try again at the next turn
                logger.debug("task upkeep failed", exc_info=True)
            await anyio.sleep(KEEP_SECONDS)

    # -- waking whoever waits on a task ---------------------------------------------------

    async def changed(self, task_id: str) -> None:
        await self._stop_if_cancelled(task_id)
        event = self._events.pop(task_id, None)
        if event is not None:
            event.set()
        notify = self.notifiers.get(task_id)
        if notify is not None:
            row = await anyio.to_thread.run_sync(self.tasks.row, task_id)
            if row is not None:
                with contextlib.suppress(Exception):  # a client gone away needs no notice
                    await notify(row)

    async def _stop_if_cancelled(self, task_id: str) -> None:
        """A task cancelled while its tool runs (it reported progress) stops there: a transfer between
        two chunks, a command killed. One still waiting for the person ends through its approval."""
        scope = self._stoppable.get(task_id)
        if scope is None:
            return
        row = await anyio.to_thread.run_sync(self.tasks.row, task_id)
        if row is None or row.status == "cancelled":
            scope.cancel()

    async def wait_for_change(self, task_id: str, timeout: float = CHANGE_POLL_SECONDS) -> None:
        event = self._events.setdefault(task_id, anyio.Event())
        with anyio.move_on_after(timeout):
            await event.wait()

    # -- starting and taking over ---------------------------------------------------------

    def start(self, row: TaskRow, tool: BoundTool, name: str, arguments: dict[str, Any], caller: Caller) -> None:
        if self._group is None:
            raise RuntimeError("the task runner is not serving")
        self.running.add(row.id)
        self._group.start_soon(self._run, row.id, tool, name, arguments, caller)

    async def adopt(self, task_id: str) -> None:
        """Run an open task nobody runs (its server stopped), if this runner can take it."""
        if task_id in self.running or self._group is None:
            return
        row = await anyio.to_thread.run_sync(self.tasks.claim, task_id, self.owner, LEASE_SECONDS, self.endpoint)
        if row is None or task_id in self.running:
            return
        logger.info("taking over task %s (%s)", row.id, row.tool)
        if row.scoped:
            await self._fail(
                row.id,
                "the server restarted while this task waited, and the sign-in's scopes it was made under are "
                "not kept: call the tool again",
            )
            return
        try:
            arguments = self.tasks.open_arguments(row)
        except ValueError as exc:
            await self._fail(row.id, str(exc))
            return
        tool = self.app.catalog.find(row.tool, self.namespace)
        if tool is None:
            await self._fail(row.id, f"{row.tool} is no longer served here: call it again")
            return
        caller = Caller(transport=row.transport, principal=row.principal, client=row.client)
        caller.asker = TaskAsker(self, row.id, caller)
        caller.progress = self.progress(row.id, None)
        self.start(row, tool, row.tool, arguments, caller)

    async def _fail(self, task_id: str, message: str) -> None:
        await anyio.to_thread.run_sync(
            self.tasks.fail, task_id, {"code": -32603, "message": message}, f"Failed: {message}"
        )
        await self.changed(task_id)

    def progress(
        self, task_id: str, report: Callable[[float, float | None, str | None], Awaitable[None]] | None
    ) -> Callable[[float, float | None, str | None], Awaitable[None]]:
        """Progress of a task's call: in its status message (at most once a second, or every tenth of
        the way), and to the client that made it while it listens. A task cancelled meanwhile stops here."""
        last = [0.0, -1.0]  # when the status message was last written, and what fraction it said

        async def progress(done: float, total: float | None, message: str | None) -> None:
            scope = self._running_scopes.get(task_id)
            if scope is not None:
                self._stoppable[task_id] = scope
                await self._stop_if_cancelled(task_id)  # cancelled here or through another replica
                if scope.cancel_called:
                    return  # no progress of a cancelled task reaches the client
            if report is not None:
                with contextlib.suppress(Exception):
                    await report(done, total, message)
            now, fraction = time.monotonic(), (done / total if total else -1.0)
            stepped = fraction >= 0 and (fraction - last[1] >= PROGRESS_STEP or fraction >= 1.0 > last[1])
            if message and (now - last[0] >= PROGRESS_EVERY_SECONDS or stepped):
                last[0], last[1] = now, fraction
                shown = f"{message} ({_amount(done)}/{_amount(total)})" if total else message
                await anyio.to_thread.run_sync(self.tasks.note, task_id, shown)

        return progress

    async def _run(self, task_id: str, tool: BoundTool, name: str, arguments: dict[str, Any], caller: Caller) -> None:
        with anyio.CancelScope() as scope:
            self._running_scopes[task_id] = scope
            try:
                await self._call(task_id, tool, name, arguments, caller)
            finally:
                self._running_scopes.pop(task_id, None)
                self._stoppable.pop(task_id, None)
        if scope.cancelled_caught:
            logger.info("task %s stopped: it was cancelled while %s ran", task_id, name)
        await self.changed(task_id)
        self.notifiers.pop(task_id, None)

    async def _call(self, task_id: str, tool: BoundTool, name: str, arguments: dict[str, Any], caller: Caller) -> None:
        try:
            outcome = await self.app.gate.call(tool, name, arguments, caller)
            answer = self.face.call_result(outcome)
            link = self.documents.link(tool, arguments, outcome, caller.reaches)  # a file it saved, as for a call
            if link is not None:
                answer = answer.model_copy(update={"content": [*answer.content, link]})
            result = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
            error = outcome.error or {}
            if outcome.is_error:
                message = f"{error.get('kind', 'error')}: {error.get('message', outcome.text)}"
            else:
                message = "Completed."
            finished = await anyio.to_thread.run_sync(self.tasks.finish, task_id, result, outcome.is_error, message)
            if not finished:
                logger.info("task %s ended after it was cancelled; its result is dropped", task_id)
        except anyio.get_cancelled_exc_class():
            raise  # the server stops: the task waits for the next one
        except Exception:
            logger.exception("task %s failed unexpectedly", task_id)
            with contextlib.suppress(Exception):
                await self._fail(task_id, f"{name} failed unexpectedly; the details are in the server log")
        finally:
            self.running.discard(task_id)
