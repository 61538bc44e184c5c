"""MCP tasks: a tool call that returns a task at once and runs (or waits for the person) after.

Two wire dialects, each served to the clients of its protocol version: the experimental `tasks`
of 2025-11-25 (`protocol.py`: task-augmented `tools/call`, `tasks/get`, `tasks/result`,
`tasks/list`, `tasks/cancel`, `notifications/tasks/status`) and the `io.modelcontextprotocol/tasks`
extension of 2026-07-28 (`tasks/get`, `tasks/update`, `tasks/cancel`). `runner.py` runs a task's
call through the policy gate, waiting for the person as long as the approval lives; the tasks
themselves are state (`mcp_tools.state.tasks`).
"""

from mcp_tools.tasks.protocol import serve_tasks

__all__ = ["serve_tasks"]
