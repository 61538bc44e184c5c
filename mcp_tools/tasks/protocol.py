"""The tasks methods on the wire, each protocol version its own.

2025-11-25 (experimental `tasks`): the server declares `capabilities.tasks` (list, cancel,
`requests.tools.call`); a tool that may wait for the person lists `execution.taskSupport:
"optional"`; a `tools/call` with a `task` field returns a `CreateTaskResult` at once; `tasks/get`,
`tasks/result` (blocks until the task ends; while it waits for the person it asks with a form
where the client can answer one), `tasks/list` and `tasks/cancel`; `notifications/tasks/status` to
the client that made the task; the related-task `_meta` on the result and the form.

2026-07-28 (`io.modelcontextprotocol/tasks`): the server lists the extension in `server/discover`;
a `tools/call` of a tool that may wait, from a client that declares the extension in the request's
capabilities, returns a `CreateTaskResult` (`resultType: "task"`) where the person can answer it
while it waits (`Tasks.person_answers_task`); `tasks/get` carries the result,
the error or the outstanding form inline; `tasks/update` answers the form; `tasks/cancel` is an
acknowledgement. `tasks/result` and `tasks/list` do not exist there (-32601).

Every task belongs to the principal that made it: another principal's task id is unknown (-32602).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, cast

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND
from pydantic import Field, ValidationError

from mcp_tools.policy.gate import Answer, Caller
from mcp_tools.state.tasks import TaskRow
from mcp_tools.tasks.face import Face, Progress
from mcp_tools.tasks.runner import TaskAsker, TaskRunner, is_long, may_wait, runs_as_task, task_ttl_ms
from mcp_tools.tasks.wire import (
    CLIENT_CAPABILITIES,
    EXTENSION,
    IMMEDIATE_RESPONSE,
    LEGACY_CAPABILITY,
    LEGACY_VERSION,
    confirm_key,
    legacy_task,
    modern_task,
    related,
)

if TYPE_CHECKING:
    from mcp_tools.composition.app import App

logger = logging.getLogger("mcp_tools.tasks")
MISSING_CLIENT_CAPABILITY = -32021
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"
LIST_PAGE = 50
MAX_OPEN_TASKS = 32  # a principal's tasks still open at once; the next one is refused until one ends
NOT_FOUND = "Failed to retrieve task: Task not found"


class TaskIdParams(types.RequestParams):
    task_id: str = Field(alias="taskId")


class UpdateTaskParams(types.RequestParams):
    task_id: str = Field(alias="taskId")
    input_responses: dict[str, Any] = Field(alias="inputResponses")


def serve_tasks(
    server: Server[Any], app: App, transport: str, namespace: str | None, view: Callable[..., Any], face: Face
) -> None:
    """Serve tasks on this MCP server: its methods, the task-making `tools/call`, and a runner for
    the server's life. `face` is the MCP face that reads requests (`mcp_tools.transports.mcp_server`)."""
    tasks = Tasks(server, app, transport, namespace, view, face)
    outer = server.lifespan

    @asynccontextmanager
    async def lifespan(running: Server[Any]) -> Any:
        async with outer(running) as state, tasks.runner.serving():
            yield state

    server.lifespan = lifespan
    server.middleware.append(tasks.middleware)
    server.extensions[EXTENSION] = {}
    server.add_request_handler("tasks/get", TaskIdParams, tasks.get)
    server.add_request_handler("tasks/result", TaskIdParams, tasks.result)
    server.add_request_handler("tasks/list", types.PaginatedRequestParams, tasks.list)
    server.add_request_handler("tasks/cancel", TaskIdParams, tasks.cancel)
    server.add_request_handler("tasks/update", UpdateTaskParams, tasks.update)


def is_legacy(ctx: ServerRequestContext[Any, Any]) -> bool:
    return ctx.protocol_version == LEGACY_VERSION


def declares_extension(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this 2026-07-28 request's own capabilities list the tasks extension."""
    meta = (ctx.params or {}).get("_meta") if isinstance(ctx.params, dict) else None
    declared = meta.get(CLIENT_CAPABILITIES) if isinstance(meta, dict) else None
    extensions = declared.get("extensions") if isinstance(declared, dict) else None
    if isinstance(extensions, dict):
        return EXTENSION in extensions
    capabilities = ctx.session.client_capabilities
    return bool(capabilities is not None and capabilities.extensions and EXTENSION in capabilities.extensions)


class Tasks:
    """The tasks of one MCP endpoint (`/mcp`, or one namespace's)."""

    def __init__(
        self,
        server: Server[Any],
        app: App,
        transport: str,
        namespace: str | None,
        view: Callable[..., Any],
        face: Face,
    ) -> None:
        self.server = server
        self.face = face
        self.app = app
        self.transport = transport
        self.namespace = namespace
        self.view = view
        self.runner = TaskRunner(app, transport, namespace, face)

    def forms_answered(self, ctx: ServerRequestContext[Any, Any]) -> bool:
        """Whether this client's answer to a confirmation form is the person's own (as for a live call)."""
        return self.face.can_elicit_form(ctx) and self.face.forms_reach_person(ctx)

    def person_answers_task(self, ctx: ServerRequestContext[Any, Any]) -> bool:
        """Whether a task that waits for the person's approval can be answered while it waits.

        On 2026-07-28 the server decides which calls become tasks. A task waits as long as its
        approval lives, and the model learns nothing of it until it ends; so a call becomes one
        only where the person can answer it there: the client shows them the form, a channel tells
        them (Telegram, the notify hook, a configured page), or the approvals page is served.
        Otherwise (stdio with no channel, say) the plain call answers `approval_required` at once,
        and the model tells the person what to approve.
        """
        if self.forms_answered(ctx):
            return True
        out_of_band = self.app.out_of_band
        if self.app.config.policy.on_no_elicitation == "deny":
            return False
        return out_of_band.reaches_person or bool(out_of_band.page_url)

    # -- the gate of every request --------------------------------------------------------

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "initialize":
            return self._declared(await call_next(ctx))
        if ctx.method == "tools/call" and ctx.request_id is not None:
            made = await self._maybe_task(ctx)
            if made is not None:
                return made
        if ctx.method == "subscriptions/listen" and self.server.get_request_handler(ctx.method) is not None:
            self._listen_allowed(ctx)
        return await call_next(ctx)

    def _listen_allowed(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """Task status notifications asked for by a client that did not declare the extension: -32021.
        (Those that do are acknowledged without them: this server sends none; clients poll.)"""
        notifications = (ctx.params or {}).get("notifications") if isinstance(ctx.params, dict) else None
        if isinstance(notifications, dict) and notifications.get("taskIds") and not declares_extension(ctx):
            raise MCPError(
                MISSING_CLIENT_CAPABILITY,
                "Missing required client capability",
                {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
            )

    def _declared(self, result: HandlerResult) -> HandlerResult:
        """`capabilities.tasks` for a 2025-11-25 client; no other version has it."""
        if isinstance(result, dict) and result.get("protocolVersion") == LEGACY_VERSION:
            capabilities = result.setdefault("capabilities", {})
            if isinstance(capabilities, dict):
                capabilities["tasks"] = LEGACY_CAPABILITY
        return result

    def _served(self, ctx: ServerRequestContext[Any, Any], method: str) -> None:
        """The method exists for this version (and, on 2026-07-28, this client declared the extension)."""
        if is_legacy(ctx):
            if method == "tasks/update":
                raise MCPError(METHOD_NOT_FOUND, "Method not found", method)
            return
        if not self.face.is_modern(ctx) or method in ("tasks/result", "tasks/list"):
            raise MCPError(METHOD_NOT_FOUND, "Method not found", method)
        if not declares_extension(ctx):
            raise MCPError(
                MISSING_CLIENT_CAPABILITY,
                "Missing required client capability",
                {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
            )

    # -- making a task --------------------------------------------------------------------

    async def _maybe_task(self, ctx: ServerRequestContext[Any, Any]) -> dict[str, Any] | None:
        """A `CreateTaskResult` when this call becomes a task; None runs it as a plain call."""
        raw = ctx.params if isinstance(ctx.params, dict) else {}
        legacy = is_legacy(ctx)
        if legacy:
            if raw.get("task") is None:
                return None
        elif not (self.face.is_modern(ctx) and declares_extension(ctx)):
            return None
        try:
            params = types.CallToolRequestParams.model_validate(raw, by_name=False)
        except ValidationError:
            return None  # the plain path says what is wrong
        arguments = params.arguments or {}
        reaches = self.face.reach_of(ctx)
        found = self.app.catalog.resolve(
            params.name,
            arguments,
            self.transport,
            namespace=self.namespace,
            view=self.view(ctx),
            reaches=reaches,
        )
        tool = found.tool
        if tool is None or not runs_as_task(tool, found.arguments or {}, legacy):
            if legacy:  # taskSupport absent means forbidden: the spec's answer is -32601
                raise MCPError(
                    METHOD_NOT_FOUND,
                    f'{params.name} does not run as a task (its execution.taskSupport is not "optional"); '
                    "call it without the task field",
                )
            return None  # the server decides: this one answers at once
        answerable = legacy or self.person_answers_task(ctx)
        if not answerable and may_wait(tool) and not is_long(tool, found.arguments or {}):
            return None  # nobody would learn that it waits: `approval_required` at once tells the model
        principal = self.face.principal_of(ctx, "local")
        if await anyio.to_thread.run_sync(self.runner.tasks.open_count, principal) >= MAX_OPEN_TASKS:
            raise MCPError(
                INVALID_REQUEST,
                f"too many open tasks: {MAX_OPEN_TASKS} of this principal's tasks are still open; wait for one to "
                "end, or cancel one with tasks/cancel",
            )
        caller = Caller(transport=self.transport, principal=principal, client=self.face.client_of(ctx), reaches=reaches)
        requested = raw.get("task", {}).get("ttl") if legacy and isinstance(raw.get("task"), dict) else None
        ttl = task_ttl_ms(
            requested if isinstance(requested, int) else None, self.app.config.policy.approval_ttl_seconds
        )
        logger.info("task for %s of %s over %s", tool.spec.name, principal, self.transport)
        row = await anyio.to_thread.run_sync(
            lambda: self.runner.tasks.create(
                principal=principal,
                endpoint=self.runner.endpoint,
                transport=self.transport,
                client=caller.client,
                tool=tool.wire_name,
                arguments=dict(found.arguments or {}),
                ttl_ms=ttl,
                owner=self.runner.owner,
                lease_seconds=30.0,
                message="The call is in progress.",
                scoped=reaches is not None,
            )
        )
        if answerable and (self.forms_answered(ctx) or self.app.config.policy.on_no_elicitation != "deny"):
            caller.asker = TaskAsker(self.runner, row.id, caller)  # else a long call that turns out high
            # answers `approval_required` at once, as the plain call would, and the task ends with it
        caller.progress = self.runner.progress(row.id, self._progress(ctx, row.id) if legacy else None)
        if legacy:
            self.runner.notifiers[row.id] = self._status_notifier(ctx)
        self.runner.start(row, tool, params.name, dict(found.arguments or {}), caller)
        if legacy:
            immediate = (
                f"{params.name} is running as task {row.id}; it may wait for the person's approval. "
                "Its result follows when the task ends."
            )
            return {"task": legacy_task(row), "_meta": {IMMEDIATE_RESPONSE: immediate}}
        return {
            "resultType": "task",
            **modern_task(row),
            "_meta": {SERVER_INFO_META_KEY: self.server.server_info_stamp},
        }

    def _progress(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> Progress | None:
        """Progress of a 2025-11-25 task, on the token of the call that made it, with the related-task `_meta`."""
        meta = (ctx.params or {}).get("_meta") if isinstance(ctx.params, dict) else None
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if not isinstance(token, str | int):
            return None
        session = ctx.session

        async def report(done: float, total: float | None, message: str | None) -> None:
            params = types.ProgressNotificationParams(
                progress_token=token, progress=done, total=total, message=message, _meta=cast(Any, related(task_id))
            )
            await session.send_notification(types.ProgressNotification(params=params))

        return report

    def _status_notifier(self, ctx: ServerRequestContext[Any, Any]) -> Any:
        session = ctx.session

        async def notify(row: TaskRow) -> None:
            params = types.TaskStatusNotificationParams.model_validate(legacy_task(row), by_name=False)
            await session.send_notification(cast(Any, types.TaskStatusNotification(params=params)))

        return notify

    # -- reading tasks --------------------------------------------------------------------

    async def _find(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> TaskRow:
        row = await anyio.to_thread.run_sync(self.runner.tasks.get, task_id, self.face.principal_of(ctx, "local"))
        if row is None:
            raise MCPError(INVALID_PARAMS, NOT_FOUND)
        if not row.terminal and row.id not in self.runner.running and row.lease_until <= self.runner.tasks.clock():
            await self.runner.adopt(row.id)  # its server stopped: this one runs it from here
        return row

    async def get(self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> dict[str, Any]:
        self._served(ctx, "tasks/get")
        row = await self._find(ctx, params.task_id)
        if is_legacy(ctx):
            return legacy_task(row)
        return {"resultType": "complete", **modern_task(row, self._input_requests(ctx, row))}

    def _input_requests(self, ctx: ServerRequestContext[Any, Any], row: TaskRow) -> dict[str, Any]:
        """The confirmation form, for a client whose answer is the person's own."""
        if (
            row.status != "input_required"
            or row.approval_id is None
            or not row.question
            or not self.forms_answered(ctx)
        ):
            return {}
        form = {"mode": "form", "message": row.question, "requestedSchema": self.face.CONFIRM_SCHEMA}
        return {confirm_key(row.approval_id): {"method": "elicitation/create", "params": form}}

    async def list(self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams) -> dict[str, Any]:
        self._served(ctx, "tasks/list")
        principal = self.face.principal_of(ctx, "local")
        try:
            rows, cursor = await anyio.to_thread.run_sync(self.runner.tasks.page, principal, params.cursor, LIST_PAGE)
        except ValueError:
            raise MCPError(INVALID_PARAMS, "invalid cursor: list again without one") from None
        listed: dict[str, Any] = {"tasks": [legacy_task(row) for row in rows]}
        if cursor is not None:
            listed["nextCursor"] = cursor
        return listed

    async def result(self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> dict[str, Any]:
        """Blocks until the task ends, then answers what the call would have; while the task waits for
        the person, a client that answers forms is asked with one, on this request."""
        self._served(ctx, "tasks/result")
        row = await self._find(ctx, params.task_id)
        asked: set[str] = set()
        async with anyio.create_task_group() as group:
            while not row.terminal:
                approval_id = row.approval_id
                if (
                    row.status == "input_required"
                    and approval_id
                    and approval_id not in asked
                    and self.forms_answered(ctx)
                    and ctx.session.can_send_request
                ):
                    asked.add(approval_id)
                    group.start_soon(self._ask, ctx, row)
                await self.runner.wait_for_change(row.id)
                found = await anyio.to_thread.run_sync(self.runner.tasks.get, row.id, row.principal)
                if found is None:
                    raise MCPError(INVALID_PARAMS, "Failed to retrieve task: Task has expired")
                row = found
            group.cancel_scope.cancel()  # a form still open has nothing left to decide
        if row.status == "failed":
            error = row.error_json() or {}
            raise MCPError(int(error.get("code", -32603)), str(error.get("message", "the task failed")))
        if row.status == "cancelled":
            raise MCPError(INVALID_PARAMS, "the task was cancelled before it ended; it has no result")
        result = row.result_json() or {}
        result["_meta"] = {**(result.get("_meta") or {}), **related(row.id)}
        return result

    async def _ask(self, ctx: ServerRequestContext[Any, Any], row: TaskRow) -> None:
        """The confirmation form, sent on the tasks/result request; the answer decides the approval."""
        assert row.approval_id is not None and row.question is not None
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(
                message=row.question, requested_schema=self.face.CONFIRM_SCHEMA, _meta=cast(Any, related(row.id))
            )
        )
        try:
            answered = await ctx.session.send_request(
                request,
                types.ElicitResult,
                metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
            )
        except Exception:  # a client that errors instead of answering has not confirmed: ask elsewhere
            logger.debug("the task's confirmation form was not answered", exc_info=True)
            return
        self._decide(row.approval_id, self.face.answer_from(answered.action, answered.content))

    def _decide(self, approval_id: str, answer: Answer) -> None:
        decisions = self.app.out_of_band.decisions
        with contextlib.suppress(LookupError, ValueError):  # answered elsewhere first: that answer stands
            decisions.decide(approval_id, answer is Answer.ACCEPT, f"elicitation:{self.transport}")

    # -- changing tasks -------------------------------------------------------------------

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> dict[str, Any]:
        self._served(ctx, "tasks/cancel")
        principal = self.face.principal_of(ctx, "local")
        tasks = self.runner.tasks
        row = await anyio.to_thread.run_sync(
            tasks.cancel, params.task_id, principal, "The task was cancelled by request."
        )
        if row is None:
            current = await anyio.to_thread.run_sync(tasks.get, params.task_id, principal)
            if current is None:
                raise MCPError(INVALID_PARAMS, NOT_FOUND)
            if is_legacy(ctx):
                raise MCPError(
                    INVALID_PARAMS, f"Cannot cancel task: already in terminal status '{legacy_task(current)['status']}'"
                )
            return {"resultType": "complete"}  # cooperative: it had ended already
        if row.approval_id is not None:  # the person can no longer approve it anywhere
            await anyio.to_thread.run_sync(self.app.out_of_band.decisions.withdraw, row.approval_id)
        await self.runner.changed(row.id)
        return legacy_task(row) if is_legacy(ctx) else {"resultType": "complete"}

    async def update(self, ctx: ServerRequestContext[Any, Any], params: UpdateTaskParams) -> dict[str, Any]:
        """Answers to the task's outstanding forms; keys that are not outstanding are ignored."""
        self._served(ctx, "tasks/update")
        row = await self._find(ctx, params.task_id)
        outstanding = self._input_requests(ctx, row)
        for key, response in params.input_responses.items():
            if key not in outstanding or row.approval_id is None:
                continue
            try:
                answered = types.ElicitResult.model_validate(response, by_name=False)
            except ValidationError:
                answered = types.ElicitResult(action="cancel")
            self._decide(row.approval_id, self.face.answer_from(answered.action, answered.content))
        return {"resultType": "complete"}
