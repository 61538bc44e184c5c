"""The six tasks tools, declared as data.

A list is named by id, title or `@default`; a task by its id within that list. Due dates are
dates (`YYYY-MM-DD`): Google keeps no time, so none is asked for and none is shown. Task
titles and notes may come from anywhere (mail turned into tasks): the text blocks fence them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from mcp_tools.text import fence
from mcp_tools.tooling import Arguments, CallContext, Output, Risk, ToolSpec

if TYPE_CHECKING:
    from mcp_tools.servers.tasks.service import TasksService

DUE_NOTE = "date (YYYY-MM-DD); Google keeps no time"


def _date_text(value: Any) -> Any:
    """Only a plain date: a time or a zone would suggest Google keeps one (it drops it)."""
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if not isinstance(value, str) or len(value) != 10:
        raise ValueError(f"{str(value)[:40]!r} is not a {DUE_NOTE}")
    return value


def _task_id(value: Any) -> Any:
    """Google's ids are letters, digits, '-' and '_'; checked here to keep the schemas small."""
    if isinstance(value, str) and not (value.isascii() and value.replace("-", "").replace("_", "").isalnum()):
        raise ValueError(f"{str(value)[:60]!r} is not a task id (ids come from tasks_list)")
    return value


Day = Annotated[dt.date, BeforeValidator(_date_text)]
TaskId = Annotated[str, BeforeValidator(_task_id), Field(min_length=1, max_length=100)]
ListRef = Annotated[str, Field(min_length=1, max_length=300)]  # an id, a title or @default, as tasks_list says


class Task(Output):
    id: str
    title: str
    notes: str
    status: Literal["open", "completed"]
    due: str | None  # YYYY-MM-DD
    completed: str | None  # RFC 3339, when it was completed
    parent: str | None  # the parent task's id for a subtask


class ListedTask(Task):
    depth: int  # 0 top level, 1 subtask, ...
    notes_chars: int = 0  # of the whole notes; a listing carries their first NOTES_PREVIEW characters


# A listing shows this much of each task's notes (100 tasks with 8 KB notes would not fit a
# result); tasks_get returns them whole.
NOTES_PREVIEW = 200


class OneTask(Output):
    list_id: str
    list_title: str
    task: Task


def _task_line(task: Task, depth: int = 0, notes: bool = True) -> str:
    box = "[x]" if task.status == "completed" else "[ ]"
    due = f" (due {task.due})" if task.due else ""
    line = f"{'  ' * depth}- {box} {task.title}{due} id {task.id}"
    if notes and task.notes.strip():
        first = task.notes.strip().splitlines()[0][:120]
        whole = getattr(task, "notes_chars", 0) or len(task.notes)
        more = f" ... ({whole:,} characters; tasks_get id={task.id} reads them)" if whole > len(first) + 1 else ""
        line += f"\n{'  ' * depth}    notes: {first}{more}"
    return line


def render_one(result: OneTask) -> str:
    task = result.task
    lines = [f"Task {task.id} in list {result.list_title!r} (id {result.list_id}):", _task_line(task, notes=False)]
    if task.notes:
        lines.append("Notes:\n" + task.notes)
    if task.completed:
        lines.append(f"Completed {task.completed}")
    if task.parent:
        lines.append(f"Subtask of {task.parent}")
    return fence("task", "\n".join(lines))


# --- list ---------------------------------------------------------------------------------------


class ListArgs(Arguments):
    list: str = Field(default="", max_length=300, description="Id, title or @default.")
    status: Literal["open", "completed", "all"] = "open"
    due_from: Day | None = Field(default=None, description="Inclusive (YYYY-MM-DD).")
    due_to: Day | None = Field(default=None, description="Inclusive (YYYY-MM-DD).")
    limit: int = Field(default=50, ge=1, le=100)
    cursor: str = Field(default="", max_length=500)

    @model_validator(mode="after")
    def _check(self) -> ListArgs:
        if self.due_from and self.due_to and self.due_from > self.due_to:
            raise ValueError("due_from: must not be after due_to")
        if not self.list and (self.status != "open" or self.due_from or self.due_to):
            raise ValueError("list: name a list to filter its tasks (or leave the filters out to see the lists)")
        return self


class TaskListInfo(Output):
    id: str
    title: str


class ListResult(Output):
    lists: list[TaskListInfo]  # when no list was named
    list_id: str | None
    list_title: str | None
    tasks: list[ListedTask]
    next_cursor: str | None


async def list_tasks(service: TasksService, args: ListArgs, ctx: CallContext) -> ListResult:
    tool = "tasks.list"
    if not args.list:
        lists, cursor = await service.run(tool, service.task_lists, tool, args.limit, args.cursor)
        return ListResult(lists=lists, list_id=None, list_title=None, tasks=[], next_cursor=cursor)

    def run() -> tuple[dict[str, str], list[dict[str, Any]], str | None]:
        found = service.resolve_list(tool, args.list)
        items, cursor = service.tasks(
            tool, found["id"], args.status, args.due_from, args.due_to, args.limit, args.cursor
        )
        return found, items, cursor

    found, items, cursor = await service.run(tool, run)
    for item in items:
        notes = item.get("notes") or ""
        item["notes_chars"] = len(notes)
        if len(notes) > NOTES_PREVIEW:
            item["notes"] = notes[:NOTES_PREVIEW]
    return ListResult(lists=[], list_id=found["id"], list_title=found["title"], tasks=items, next_cursor=cursor)


def render_list(result: ListResult) -> str:
    if result.list_id is None:
        lines = [f"- {item.title} (id {item.id})" for item in result.lists]
        text = fence("task lists", "\n".join(lines)) if lines else "No task lists."
    else:
        head = f"List {result.list_title!r} (id {result.list_id}): {len(result.tasks)} task(s)"
        lines = [_task_line(task, task.depth) for task in result.tasks]
        text = head + ("\n" + fence("task list", "\n".join(lines)) if lines else "")
    if result.next_cursor:
        text += f"\nMore tasks: call again with cursor={result.next_cursor}"
    return text


# --- get ----------------------------------------------------------------------------------------


class TaskArgs(Arguments):
    list: ListRef = "@default"
    id: TaskId


async def get(service: TasksService, args: TaskArgs, ctx: CallContext) -> OneTask:
    tool = "tasks.get"

    def run() -> OneTask:
        found = service.resolve_list(tool, args.list)
        task = service.get(tool, found["id"], args.id, found["title"])
        return OneTask(list_id=found["id"], list_title=found["title"], task=Task.model_validate(task))

    result: OneTask = await service.run(tool, run)
    return result


# --- create -------------------------------------------------------------------------------------


class CreateArgs(Arguments):
    title: str = Field(min_length=1, max_length=1024)
    notes: str = Field(default="", max_length=8192)
    due: Day | None = Field(default=None, description=DUE_NOTE)
    parent: TaskId | None = Field(default=None, description="Task id: make it a subtask.")
    list: ListRef = "@default"

    @model_validator(mode="after")
    def _one_line(self) -> CreateArgs:
        if not self.title.strip() or "\n" in self.title or "\r" in self.title:
            raise ValueError("title: must be one line of text")
        return self


async def create(service: TasksService, args: CreateArgs, ctx: CallContext) -> OneTask:
    from mcp_tools.servers.tasks.service import due_text

    tool = "tasks.create"
    body: dict[str, Any] = {"title": args.title.strip(), "status": "needsAction"}
    if args.notes:
        body["notes"] = args.notes
    if args.due is not None:
        body["due"] = due_text(args.due)

    def run() -> OneTask:
        found = service.resolve_list(tool, args.list)
        task = service.create(tool, found["id"], found["title"], body, args.parent)
        return OneTask(list_id=found["id"], list_title=found["title"], task=Task.model_validate(task))

    result: OneTask = await service.run(tool, run)
    return result


# --- update -------------------------------------------------------------------------------------


class UpdateArgs(Arguments):
    list: ListRef = "@default"
    id: TaskId
    title: str | None = Field(default=None, min_length=1, max_length=1024)
    notes: str | None = Field(default=None, max_length=8192, description='"" clears.')
    due: Day | None = Field(default=None, description=DUE_NOTE)
    clear_due: bool = False

    @model_validator(mode="after")
    def _check(self) -> UpdateArgs:
        if self.title is not None and (not self.title.strip() or "\n" in self.title or "\r" in self.title):
            raise ValueError("title: must be one line of text")
        if self.due is not None and self.clear_due:
            raise ValueError("due: give a due date or clear_due, not both")
        if self.title is None and self.notes is None and self.due is None and not self.clear_due:
            raise ValueError("title, notes, due or clear_due: say what to change")
        return self


async def update(service: TasksService, args: UpdateArgs, ctx: CallContext) -> OneTask:
    from mcp_tools.servers.tasks.service import due_text

    tool = "tasks.update"
    body: dict[str, Any] = {}
    if args.title is not None:
        body["title"] = args.title.strip()
    if args.notes is not None:
        body["notes"] = args.notes or None  # null clears the notes
    if args.due is not None:
        body["due"] = due_text(args.due)
    if args.clear_due:
        body["due"] = None

    def run() -> OneTask:
        found = service.resolve_list(tool, args.list)
        task = service.patch(tool, found["id"], args.id, found["title"], body)
        return OneTask(list_id=found["id"], list_title=found["title"], task=Task.model_validate(task))

    result: OneTask = await service.run(tool, run)
    return result


def describe_update(args: UpdateArgs) -> str:
    changes = [name for name in ("title", "notes", "due") if getattr(args, name) is not None]
    changes += ["clear due"] if args.clear_due else []
    return f"change {', '.join(changes)} of task {args.id} in list {args.list!r}"


# --- complete -----------------------------------------------------------------------------------


class CompleteArgs(TaskArgs):
    undo: bool = Field(default=False, description="Reopen it.")


async def complete(service: TasksService, args: CompleteArgs, ctx: CallContext) -> OneTask:
    tool = "tasks.complete"
    # reopening clears the completion time too, as Google's own apps do
    body = {"status": "needsAction", "completed": None} if args.undo else {"status": "completed"}

    def run() -> OneTask:
        found = service.resolve_list(tool, args.list)
        task = service.patch(tool, found["id"], args.id, found["title"], body)
        return OneTask(list_id=found["id"], list_title=found["title"], task=Task.model_validate(task))

    result: OneTask = await service.run(tool, run)
    return result


# --- delete -------------------------------------------------------------------------------------


class DeleteArgs(TaskArgs):
    """The task to delete."""


@dataclass
class DeleteFacts:
    """The task about to be deleted, as the precheck read it (None until it has)."""

    task_list: dict[str, Any] | None = None
    task: dict[str, Any] | None = None
    subtasks: int = 0


class DeleteResult(Output):
    deleted: str  # the task's id
    title: str
    list_title: str
    subtasks: int  # deleted with it


async def precheck_delete(service: TasksService, args: DeleteArgs, facts: DeleteFacts) -> None:
    tool = "tasks.delete"

    def run() -> None:
        facts.task_list = service.resolve_list(tool, args.list)
        facts.task = service.get(tool, facts.task_list["id"], args.id, facts.task_list["title"])
        facts.subtasks = service.subtask_count(tool, facts.task_list["id"], args.id)

    await service.run(tool, run)


def describe_delete(args: DeleteArgs, facts: DeleteFacts) -> str:
    task, task_list, subtasks = facts.task, facts.task_list, facts.subtasks
    if task is None or task_list is None:
        return f"delete task {args.id} from list {args.list!r}"
    line = f"Delete the task {task['title']!r} from the list {task_list['title']!r}"
    details = [f"due {task['due']}"] if task["due"] else []
    details += ["completed"] if task["status"] == "completed" else []
    details += [f"with its {subtasks} subtask(s)"] if subtasks else []
    return line + (f" ({', '.join(details)})" if details else "")


def render_delete(result: DeleteResult) -> str:
    subtasks = f" with its {result.subtasks} subtask(s)" if result.subtasks else ""
    return f"Deleted the task {result.title!r} (id {result.deleted}){subtasks} from the list {result.list_title!r}."


async def delete(service: TasksService, args: DeleteArgs, ctx: CallContext, facts: DeleteFacts) -> DeleteResult:
    tool = "tasks.delete"
    if facts.task is None:
        await precheck_delete(service, args, facts)
    task, task_list = facts.task, facts.task_list
    assert task is not None and task_list is not None  # the precheck found both or raised
    await service.run(tool, service.delete, tool, task_list["id"], args.id, task_list["title"])
    return DeleteResult(deleted=args.id, title=task["title"], list_title=task_list["title"], subtasks=facts.subtasks)


TOOLS: list[ToolSpec[Any, Any, Any]] = [
    ToolSpec(
        name="tasks.list",
        title="List Google Tasks",
        description="No list: the task lists; a list: its tasks, subtasks under parents.",
        input_model=ListArgs,
        output_model=ListResult,
        handler=list_tasks,
        risk=Risk.LOW,
        describe=lambda args: f"list the tasks of {args.list!r}" if args.list else "list the task lists",
        read_only=True,
        idempotent=True,
        open_world=True,
        tier="core",
        render_text=render_list,
    ),
    ToolSpec(
        name="tasks.get",
        title="Get a task",
        description="One task with its notes.",
        input_model=TaskArgs,
        output_model=OneTask,
        handler=get,
        risk=Risk.LOW,
        describe=lambda args: f"read task {args.id} of list {args.list!r}",
        read_only=True,
        idempotent=True,
        open_world=True,
        tier="extended",
        render_text=render_one,
    ),
    ToolSpec(
        name="tasks.create",
        title="Add a task",
        description="Add a task; parent makes it a subtask.",
        input_model=CreateArgs,
        output_model=OneTask,
        handler=create,
        risk=Risk.MEDIUM,
        describe=lambda args: f"add the task {args.title!r} to list {args.list!r}",
        open_world=True,
        tier="core",
        destructive=False,
        render_text=render_one,
    ),
    ToolSpec(
        name="tasks.update",
        title="Change a task",
        description="Change a task's title, notes or due date.",
        input_model=UpdateArgs,
        output_model=OneTask,
        handler=update,
        risk=Risk.MEDIUM,
        describe=describe_update,
        idempotent=True,
        open_world=True,
        tier="extended",
        destructive=True,
        render_text=render_one,
    ),
    ToolSpec(
        name="tasks.complete",
        title="Complete a task",
        description="Mark a task done.",
        input_model=CompleteArgs,
        output_model=OneTask,
        handler=complete,
        risk=Risk.MEDIUM,
        describe=lambda args: f"{'reopen' if args.undo else 'complete'} task {args.id} of list {args.list!r}",
        idempotent=True,
        open_world=True,
        tier="core",
        destructive=False,
        render_text=render_one,
    ),
    ToolSpec(
        name="tasks.delete",
        title="Delete a task",
        description="Delete a task and its subtasks.",
        input_model=DeleteArgs,
        output_model=DeleteResult,
        handler=delete,
        risk=Risk.HIGH,
        describe=describe_delete,
        precheck=precheck_delete,
        facts=DeleteFacts,
        open_world=True,
        tier="extended",
        destructive=True,
        render_text=render_delete,
    ),
]
