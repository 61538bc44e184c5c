"""A stored task as each protocol version writes it.

2025-11-25: `Task` with `ttl` and `pollInterval`; a tool result with `isError` is a `failed` task,
and the result itself comes from `tasks/result`. 2026-07-28 (the `io.modelcontextprotocol/tasks`
extension): `ttlMs` and `pollIntervalMs`, the result (or the JSON-RPC error, or the outstanding
input requests) inline; a tool result with `isError` is a `completed` task, since `failed` means
a JSON-RPC error only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mcp_tools.state.tasks import TaskRow

LEGACY_VERSION = "2025-11-25"
EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
IMMEDIATE_RESPONSE = "io.modelcontextprotocol/model-immediate-response"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
# What a 2025-11-25 server declares: tasks/list, tasks/cancel and task-augmented tools/call.
LEGACY_CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
POLL_INTERVAL_MS = 2000
WAITING_POLL_INTERVAL_MS = 5000  # a person answers in seconds to hours: no need to ask more often


def iso(timestamp: float) -> str:
    """ISO 8601 in UTC with milliseconds: `2026-12-02T01:51:23.042Z`."""
    moment = datetime.fromtimestamp(timestamp, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def poll_interval(row: TaskRow) -> int:
    return WAITING_POLL_INTERVAL_MS if row.status == "input_required" else POLL_INTERVAL_MS


def legacy_status(row: TaskRow) -> str:
    return "failed" if row.status == "completed" and row.is_error else row.status


def legacy_task(row: TaskRow) -> dict[str, Any]:
    """A 2025-11-25 `Task`."""
    task: dict[str, Any] = {"taskId": row.id, "status": legacy_status(row)}
    if row.status_message:
        task["statusMessage"] = row.status_message
    task.update(createdAt=iso(row.created), lastUpdatedAt=iso(row.updated), ttl=row.ttl_ms)
    if not row.terminal:
        task["pollInterval"] = poll_interval(row)
    return task


def modern_task(row: TaskRow, input_requests: dict[str, Any] | None = None) -> dict[str, Any]:
    """A 2026-07-28 `DetailedTask`: the status's own field inline."""
    task: dict[str, Any] = {"taskId": row.id, "status": row.status}
    if row.status_message:
        task["statusMessage"] = row.status_message
    task.update(createdAt=iso(row.created), lastUpdatedAt=iso(row.updated), ttlMs=row.ttl_ms)
    if not row.terminal:
        task["pollIntervalMs"] = poll_interval(row)
    if row.status == "input_required":
        task["inputRequests"] = input_requests or {}
    elif row.status == "completed":
        task["result"] = row.result_json() or {}
    elif row.status == "failed":
        task["error"] = row.error_json() or {"code": -32603, "message": row.status_message or "failed"}
    return task


def related(task_id: str) -> dict[str, Any]:
    return {RELATED_TASK: {"taskId": task_id}}


def confirm_key(approval_id: str) -> str:
    """The `inputRequests` key of one approval's question: unique over the task's life, as an approval id is."""
    return f"confirm-{approval_id}"
