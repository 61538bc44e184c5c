"""The Google Tasks service: the shared Google client plus what the tasks tools do with it.

Every method here is blocking (googleapiclient is synchronous) and runs in a worker thread.
Due dates cross the wire as `YYYY-MM-DDT00:00:00.000Z` and come back as their first ten
characters: they are dates, and never pass through a local time zone.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from mcp_tools.core.tooling import Environment, ToolFailure
from mcp_tools.servers.google.config import GoogleConfig
from mcp_tools.servers.google.service import GoogleService

DEFAULT_LIST = "@default"
LIST_PAGES = 20  # task lists read when a list is named by title (1000 a page)
SCAN_PAGES = 10  # pages of 100 tasks read to count a task's subtasks before deleting it
LIST_HINT = "list ids and titles come from tasks_list without a list"


def due_text(day: dt.date) -> str:
    """The RFC 3339 timestamp Google takes for a date: midnight UTC of that very date."""
    return f"{day.isoformat()}T00:00:00.000Z"


def due_date(value: str | None) -> str | None:
    """The date Google keeps, read off the timestamp's own date part (no zone conversion)."""
    if not value:
        return None
    day = value[:10]
    try:
        dt.date.fromisoformat(day)
    except ValueError:
        return None
    return day


def task_view(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": item.get("id", ""),
        "title": item.get("title", ""),
        "notes": item.get("notes", ""),
        "status": "completed" if item.get("status") == "completed" else "open",
        "due": due_date(item.get("due")),
        "completed": item.get("completed") if item.get("status") == "completed" else None,
        "parent": item.get("parent"),
    }


def tree_order(items: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int]]:
    """Tasks by position, each followed by its subtasks; a subtask whose parent is not among
    them (on another page, or filtered out) stands at the top level where Google put it."""
    ids = {item.get("id") for item in items}
    children: dict[str | None, list[dict[str, Any]]] = {}
    roots: list[dict[str, Any]] = []
    for item in items:
        parent = item.get("parent")
        if parent in ids and parent != item.get("id"):
            children.setdefault(parent, []).append(item)
        else:
            roots.append(item)
    out: list[tuple[dict[str, Any], int]] = []
    seen: set[str] = set()

    def walk(item: dict[str, Any], depth: int) -> None:
        if item.get("id") in seen:
            return
        seen.add(item.get("id", ""))
        out.append((item, depth))
        for child in sorted(children.get(item.get("id"), []), key=lambda c: c.get("position", "")):
            walk(child, depth + 1)

    for root in roots:  # the page's own order among the top level (Google's order)
        walk(root, 0)
    return out


class TasksService(GoogleService):
    NAMESPACE, API, VERSION = "tasks", "tasks", "v1"

    def __init__(self, google: GoogleConfig, env: Environment, scopes: list[str]) -> None:
        super().__init__(google, env, scopes)

    # --- lists --------------------------------------------------------------------------------
    def task_lists(self, tool: str, limit: int, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
        found = self.call(tool, lambda s: s.tasklists().list(maxResults=limit, pageToken=cursor or None))
        lists = [{"id": item.get("id", ""), "title": item.get("title", "")} for item in found.get("items", [])]
        return lists, found.get("nextPageToken")

    def resolve_list(self, tool: str, ref: str) -> dict[str, str]:
        """A list named by id, title (any case) or @default, as {id, title}."""
        if ref == DEFAULT_LIST:
            found = self._not_found(
                tool, lambda s: s.tasklists().get(tasklist=DEFAULT_LIST), "there is no default task list"
            )
            return {"id": found.get("id", ""), "title": found.get("title", "")}
        every: list[dict[str, str]] = []
        cursor = None
        for _ in range(LIST_PAGES):
            page, cursor = self.task_lists(tool, 1000, cursor)
            every += page
            if not cursor:
                break
        for item in every:
            if item["id"] == ref:
                return item
        named = [item for item in every if item["title"].casefold() == ref.strip().casefold()]
        if len(named) == 1:
            return named[0]
        if named:
            ids = ", ".join(item["id"] for item in named)
            raise ToolFailure("invalid_arguments", f"{len(named)} task lists are titled {ref!r}", f"pass an id: {ids}")
        titles = ", ".join(repr(item["title"]) for item in every[:30])
        raise ToolFailure("not_found", f"no task list {ref!r}", f"lists: {titles or 'none'}; {LIST_HINT}")

    def _not_found(self, tool: str, build: Any, message: str, hint: str = LIST_HINT) -> Any:
        try:
            return self.call(tool, build)
        except ToolFailure as failure:
            if failure.kind == "not_found":
                raise ToolFailure("not_found", message, hint) from None
            raise

    # --- tasks --------------------------------------------------------------------------------
    def tasks(
        self,
        tool: str,
        list_id: str,
        status: str,
        due_from: dt.date | None,
        due_to: dt.date | None,
        limit: int,
        cursor: str | None,
    ) -> tuple[list[dict[str, Any]], str | None]:
        query: dict[str, Any] = {"tasklist": list_id, "maxResults": limit, "pageToken": cursor or None}
        if status == "open":
            query["showCompleted"] = False
        else:
            query.update(showCompleted=True, showHidden=True)  # done in Google's apps: hidden at once
        if status == "completed":
            query["completedMin"] = "1970-01-01T00:00:00.000Z"  # only tasks with a completion time
        if due_from is not None:
            query["dueMin"] = due_text(due_from)
        if due_to is not None:
            # dues are midnight UTC; the end of the day includes it whether Google's bound is < or <=
            query["dueMax"] = f"{due_to.isoformat()}T23:59:59.999Z"
        found = self.call(tool, lambda s: s.tasks().list(**query))
        items = [{**task_view(item), "depth": depth} for item, depth in tree_order(found.get("items", []))]
        return items, found.get("nextPageToken")

    def get(self, tool: str, list_id: str, task_id: str, list_title: str) -> dict[str, Any]:
        found = self._not_found(
            tool,
            lambda s: s.tasks().get(tasklist=list_id, task=task_id),
            f"no task {task_id} in the list {list_title!r}",
            "task ids come from tasks_list with that list",
        )
        return task_view(found)

    def create(
        self, tool: str, list_id: str, list_title: str, body: dict[str, Any], parent: str | None
    ) -> dict[str, Any]:
        created = self._not_found(
            tool,
            lambda s: s.tasks().insert(tasklist=list_id, parent=parent or None, body=body),
            f"no parent task {parent} in the list {list_title!r}",
            "task ids come from tasks_list with that list",
        )
        return task_view(created)

    def patch(self, tool: str, list_id: str, task_id: str, list_title: str, body: dict[str, Any]) -> dict[str, Any]:
        changed = self._not_found(
            tool,
            lambda s: s.tasks().patch(tasklist=list_id, task=task_id, body=body),
            f"no task {task_id} in the list {list_title!r}",
            "task ids come from tasks_list with that list",
        )
        return task_view(changed)

    def subtask_count(self, tool: str, list_id: str, task_id: str) -> int:
        """How many tasks of the list name this one as parent (they go with it when it is deleted)."""
        count, cursor = 0, None
        for _ in range(SCAN_PAGES):
            query = {"tasklist": list_id, "maxResults": 100, "showHidden": True, "pageToken": cursor}
            found = self.call(tool, lambda s, q=query: s.tasks().list(**q))
            count += sum(1 for item in found.get("items", []) if item.get("parent") == task_id)
            cursor = found.get("nextPageToken")
            if not cursor:
                break
        return count

    def delete(self, tool: str, list_id: str, task_id: str, list_title: str) -> None:
        self._not_found(
            tool,
            lambda s: s.tasks().delete(tasklist=list_id, task=task_id),
            f"no task {task_id} in the list {list_title!r}",
            "it may be deleted already; task ids come from tasks_list",
        )
