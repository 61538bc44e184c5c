"""A stateful fake of the Google Tasks API v1: task lists and tasks, with subtasks and positions.

It keeps what Google keeps: `due` only as a date (any time part sent is dropped to midnight
UTC), `status` needsAction or completed with a `completed` timestamp set and cleared with it,
`parent` and `position` among siblings (new tasks go first unless `previous` names a sibling),
a fresh `etag` and `updated` on every change, `hidden` after a list is cleared, and deleted
tasks that answer 404 (a parent's subtasks go with it). Listing filters as Google does:
completed and hidden tasks only when asked, `dueMin` inclusive and `dueMax` exclusive,
`completedMin`/`completedMax` keeping completed tasks only, at most 100 a page.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from tests.servers.fake_google.discovery import Discovery
from tests.servers.fake_google.server import ApiError, FakeGoogle, Response, Token

RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
MAX_PAGE = 100


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def parse_time(value: str, name: str) -> dt.datetime:
    if not isinstance(value, str) or not RFC3339.match(value):
        raise ApiError(400, f"Invalid value for {name}: {value!r} is not an RFC 3339 timestamp", "invalid")
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


def date_only(value: str) -> str:
    """Google keeps only the date of `due`, as written: the time part becomes midnight UTC."""
    moment = parse_time(value, "due")
    return moment.strftime("%Y-%m-%d") + "T00:00:00.000Z"


def new_id() -> str:
    return secrets.token_urlsafe(16).rstrip("=")


@dataclass
class StoredTask:
    id: str
    list_id: str
    title: str = ""
    notes: str | None = None
    due: str | None = None
    status: str = "needsAction"
    completed: str | None = None
    parent: str | None = None
    hidden: bool = False
    deleted: bool = False
    etag: str = ""
    updated: str = ""

    def touch(self) -> None:
        self.etag = f'"{secrets.token_urlsafe(12)}"'
        self.updated = now()


@dataclass
class StoredList:
    id: str
    title: str
    order: dict[str | None, list[str]] = field(default_factory=dict)  # parent (None: top) -> children in order
    etag: str = ""
    updated: str = ""


class FakeTasks:
    def __init__(self, google: FakeGoogle, default_title: str = "My Tasks") -> None:
        self.google = google
        self.lists: dict[str, StoredList] = {}
        self.tasks: dict[str, StoredTask] = {}
        self.bodies: list[tuple[str, Any]] = []  # (method id, request body) of every write, as received
        self.default_id = self.add_list(default_title).id
        google.apis["/tasks/v1/"] = (Discovery("tasks", "v1"), self)

    # --- set-up helpers ------------------------------------------------------------------------
    def add_list(self, title: str) -> StoredList:
        stored = StoredList(new_id(), title, {None: []}, f'"{secrets.token_urlsafe(8)}"', now())
        with self.google.lock:
            self.lists[stored.id] = stored
        return stored

    def add(
        self,
        title: str,
        list_id: str | None = None,
        *,
        parent: str | None = None,
        due: str | None = None,
        notes: str | None = None,
        completed: bool = False,
        hidden: bool = False,
        last: bool = True,
    ) -> StoredTask:
        """A task as the person made it in Google's own apps (added last among its siblings by default)."""
        with self.google.lock:
            stored = self._insert(
                list_id or self.default_id, {"title": title, "notes": notes, "due": due}, parent, None, last
            )
            if completed:
                self._set_status(stored, "completed")
            stored.hidden = hidden
        return stored

    def clear(self, list_id: str | None = None) -> None:
        with self.google.lock:
            for task in self.tasks.values():
                if task.list_id == (list_id or self.default_id) and task.status == "completed":
                    task.hidden = True

    def titles(self, list_id: str | None = None) -> list[str]:
        """Titles of the live tasks in Google's order, subtasks indented by two spaces."""
        return ["  " * self._depth(t) + t.title for t in self._ordered(self.lists[list_id or self.default_id])]

    # --- dispatch ------------------------------------------------------------------------------
    def handle(
        self,
        method_id: str,
        path: dict[str, str],
        params: dict[str, Any],
        body: Any,
        token: Token,
        media: bytes | None,
        headers: dict[str, str],
    ) -> Any:
        path = {key: unquote(value) for key, value in path.items()}
        if body is not None:
            self.bodies.append((method_id, body))
        handler = getattr(self, "do_" + method_id.removeprefix("tasks.").replace(".", "_"), None)
        if handler is None:
            raise ApiError(501, f"{method_id} is not implemented by the fake")
        return handler(path, params, body)

    def _list(self, list_id: str) -> StoredList:
        if list_id == "@default":
            list_id = self.default_id
        stored = self.lists.get(list_id)
        if stored is None:
            raise ApiError(404, "Task list not found.", "notFound")
        return stored

    def _task(self, tasks_list: StoredList, task_id: str) -> StoredTask:
        stored = self.tasks.get(task_id)
        if stored is None or stored.deleted or stored.list_id != tasks_list.id:
            raise ApiError(404, "Task not found.", "notFound")
        return stored

    # --- order ---------------------------------------------------------------------------------
    def _siblings(self, tasks_list: StoredList, parent: str | None) -> list[str]:
        return tasks_list.order.setdefault(parent, [])

    def _position(self, task: StoredTask) -> str:
        siblings = self._siblings(self.lists[task.list_id], task.parent)
        return f"{siblings.index(task.id):020d}"

    def _depth(self, task: StoredTask) -> int:
        depth, parent = 0, task.parent
        while parent is not None:
            depth, parent = depth + 1, self.tasks[parent].parent
        return depth

    def _ordered(self, tasks_list: StoredList, parent: str | None = None) -> list[StoredTask]:
        """Google's order: each task by position, its subtasks right after it."""
        out: list[StoredTask] = []
        for task_id in self._siblings(tasks_list, parent):
            task = self.tasks[task_id]
            if not task.deleted:
                out += [task, *self._ordered(tasks_list, task_id)]
        return out

    def _place(self, task: StoredTask, parent: str | None, previous: str | None, last: bool = False) -> None:
        tasks_list = self.lists[task.list_id]
        if parent is not None:
            self._task(tasks_list, parent)
        old = self._siblings(tasks_list, task.parent)
        if task.id in old:
            old.remove(task.id)
        siblings = self._siblings(tasks_list, parent)
        if previous:
            if previous not in siblings:
                raise ApiError(400, "Invalid previous task: it is not a sibling under this parent.", "invalid")
            siblings.insert(siblings.index(previous) + 1, task.id)
        elif last:
            siblings.append(task.id)
        else:
            siblings.insert(0, task.id)
        task.parent = parent

    # --- representation ------------------------------------------------------------------------
    def resource(self, task: StoredTask) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "tasks#task",
            "id": task.id,
            "etag": task.etag,
            "title": task.title,
            "updated": task.updated,
            "selfLink": f"https://www.googleapis.com/tasks/v1/lists/{task.list_id}/tasks/{task.id}",
            "position": self._position(task) if not task.deleted else "00000000000000000000",
            "status": task.status,
            "links": [],
            "webViewLink": f"https://tasks.google.com/task/{task.id}",
        }
        for key in ("notes", "due", "completed", "parent"):
            if getattr(task, key) is not None:
                out[key] = getattr(task, key)
        if task.hidden:
            out["hidden"] = True
        if task.deleted:
            out["deleted"] = True
        return out

    @staticmethod
    def list_resource(tasks_list: StoredList) -> dict[str, Any]:
        return {
            "kind": "tasks#taskList",
            "id": tasks_list.id,
            "etag": tasks_list.etag,
            "title": tasks_list.title,
            "updated": tasks_list.updated,
            "selfLink": f"https://www.googleapis.com/tasks/v1/users/@me/lists/{tasks_list.id}",
        }

    # --- task lists ----------------------------------------------------------------------------
    def do_tasklists_list(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        size = int(params.get("maxResults", 1000))
        if not 1 <= size <= 1000:
            raise ApiError(400, "Invalid value for maxResults (1 to 1000).", "invalid")
        found = list(self.lists.values())
        token = params.get("pageToken") or "0"
        if not token.isdigit():
            raise ApiError(400, "Invalid page token.", "invalid")
        start = int(token)
        out: dict[str, Any] = {
            "kind": "tasks#taskLists",
            "etag": '"lists"',
            "items": [self.list_resource(item) for item in found[start : start + size]],
        }
        if start + size < len(found):
            out["nextPageToken"] = str(start + size)
        return out

    def do_tasklists_get(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        return self.list_resource(self._list(path["tasklist"]))

    def do_tasklists_insert(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        title = (body or {}).get("title", "")
        if not title.strip():
            raise ApiError(400, "Missing title.", "invalid")
        return self.list_resource(self.add_list(title))

    # --- tasks ---------------------------------------------------------------------------------
    def do_tasks_list(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        tasks_list = self._list(path["tasklist"])
        size = int(params.get("maxResults", 20))
        if not 1 <= size <= MAX_PAGE:
            self.google.violations.append(f"tasks.tasks.list: maxResults {size} (1 to {MAX_PAGE})")
            raise ApiError(400, f"Invalid value for maxResults (1 to {MAX_PAGE}).", "invalid")
        show_completed = params.get("showCompleted", "true") == "true"
        show_hidden = params.get("showHidden", "false") == "true"
        show_deleted = params.get("showDeleted", "false") == "true"
        bounds = {
            key: parse_time(params[key], key)
            for key in ("dueMin", "dueMax", "completedMin", "completedMax", "updatedMin")
            if key in params
        }
        candidates = self._ordered(tasks_list)
        if show_deleted:
            candidates += [t for t in self.tasks.values() if t.deleted and t.list_id == tasks_list.id]
        found = []
        for task in candidates:
            if task.status == "completed" and not show_completed:
                continue
            if task.hidden and not show_hidden:
                continue
            due = parse_time(task.due, "due") if task.due else None
            if ("dueMin" in bounds or "dueMax" in bounds) and due is None:
                continue
            if due is not None and (
                ("dueMin" in bounds and due < bounds["dueMin"]) or ("dueMax" in bounds and due >= bounds["dueMax"])
            ):
                continue
            done = parse_time(task.completed, "completed") if task.completed else None
            if ("completedMin" in bounds or "completedMax" in bounds) and done is None:
                continue
            if done is not None and (
                ("completedMin" in bounds and done < bounds["completedMin"])
                or ("completedMax" in bounds and done > bounds["completedMax"])
            ):
                continue
            if "updatedMin" in bounds and parse_time(task.updated, "updated") < bounds["updatedMin"]:
                continue
            found.append(task)
        token = params.get("pageToken")
        start = 0
        if token:
            if not token.startswith("p") or not token[1:].isdigit():
                raise ApiError(400, "Invalid page token.", "invalid")
            start = int(token[1:])
        out: dict[str, Any] = {
            "kind": "tasks#tasks",
            "etag": f'"{len(found)}"',
            "items": [self.resource(task) for task in found[start : start + size]],
        }
        if start + size < len(found):
            out["nextPageToken"] = f"p{start + size}"
        return out

    def do_tasks_get(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        return self.resource(self._task(self._list(path["tasklist"]), path["task"]))

    def _write_fields(self, task: StoredTask, body: dict[str, Any]) -> None:
        if "title" in body:
            task.title = body["title"] or ""
        if "notes" in body:
            task.notes = body["notes"] or None
            if task.notes is not None and len(task.notes) > 8192:
                raise ApiError(400, "Notes are longer than 8192 characters.", "invalid")
        if len(task.title) > 1024:
            raise ApiError(400, "Title is longer than 1024 characters.", "invalid")
        if "due" in body:
            task.due = date_only(body["due"]) if body["due"] else None
        if "status" in body and body["status"] is not None:
            if body["status"] not in ("needsAction", "completed"):
                raise ApiError(400, f"Invalid status {body['status']!r}.", "invalid")
            self._set_status(task, body["status"])
        if body.get("completed") and task.status == "completed":
            parse_time(body["completed"], "completed")
            task.completed = body["completed"]
        if body.get("deleted") is True:
            self._delete(task)

    @staticmethod
    def _set_status(task: StoredTask, status: str) -> None:
        if status == "completed" and task.status != "completed":
            task.completed = now()
        elif status == "needsAction":
            task.completed, task.hidden = None, False
        task.status = status

    def _insert(
        self, list_id: str, body: dict[str, Any], parent: str | None, previous: str | None, last: bool = False
    ) -> StoredTask:
        tasks_list = self._list(list_id)
        task = StoredTask(new_id(), tasks_list.id)
        self._write_fields(task, {key: value for key, value in body.items() if value is not None})
        self._place(task, parent, previous, last)
        task.touch()
        self.tasks[task.id] = task
        return task

    def do_tasks_insert(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        task = self._insert(path["tasklist"], body or {}, params.get("parent"), params.get("previous"))
        return self.resource(task)

    def do_tasks_patch(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        task = self._task(self._list(path["tasklist"]), path["task"])
        self._write_fields(task, body or {})
        task.touch()
        return self.resource(task)

    def do_tasks_update(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        task = self._task(self._list(path["tasklist"]), path["task"])
        full = {"title": "", "notes": None, "due": None, "status": "needsAction", **(body or {})}
        self._write_fields(task, full)
        task.touch()
        return self.resource(task)

    def _delete(self, task: StoredTask) -> None:
        task.deleted = True
        task.touch()
        for child in list(self._siblings(self.lists[task.list_id], task.id)):
            self._delete(self.tasks[child])

    def do_tasks_delete(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        self._delete(self._task(self._list(path["tasklist"]), path["task"]))
        return Response(204)

    def do_tasks_move(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        tasks_list = self._list(path["tasklist"])
        task = self._task(tasks_list, path["task"])
        if params.get("destinationTasklist"):
            raise ApiError(501, "moving between lists is not implemented by the fake")
        if params.get("parent") == task.id:
            raise ApiError(400, "A task cannot be its own parent.", "invalid")
        self._place(task, params.get("parent"), params.get("previous"))
        task.touch()
        return self.resource(task)

    def do_tasks_clear(self, path: dict[str, str], params: dict[str, Any], body: Any) -> Any:
        self.clear(self._list(path["tasklist"]).id)
        return Response(204)
