"""The six tasks tools, declared as data.

A list is named by id, title or `@default`; a task by its id within that list. Due dates are
dates (`YYYY-MM-DD`): Google keeps no time, so none is asked for and none is shown. Task
titles and notes may come from anywhere (mail turned into tasks): the text blocks fence them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_tools.core.tooling import CallContext, Risk, ToolAlias, ToolSpec, UpstreamScopes
from mcp_tools.servers.google.aliases import PAGING
from mcp_tools.servers.google.scopes import TASKS, TASKS_READONLY
from mcp_tools.servers.tasks.models import (
    CompleteArgs,
    CreateArgs,
    DeleteArgs,
    DeleteResult,
    ListArgs,
    ListResult,
    OneTask,
    Task,
    TaskArgs,
    UpdateArgs,
)
from mcp_tools.util.text import fence

if TYPE_CHECKING:
    from mcp_tools.servers.tasks.service import TasksService


# A listing shows this much of each task's notes (100 tasks with 8 KB notes would not fit a
# result); tasks_get returns them whole.
NOTES_PREVIEW = 200


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


async def list_tasks(service: TasksService, args: ListArgs, ctx: CallContext) -> ListResult:
    tool = LIST.name
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


async def get(service: TasksService, args: TaskArgs, ctx: CallContext) -> OneTask:
    tool = GET.name

    def run() -> OneTask:
        found = service.resolve_list(tool, args.list)
        task = service.get(tool, found["id"], args.id, found["title"])
        return OneTask(list_id=found["id"], list_title=found["title"], task=Task.model_validate(task))

    result: OneTask = await service.run(tool, run)
    return result


# --- create -------------------------------------------------------------------------------------


async def create(service: TasksService, args: CreateArgs, ctx: CallContext) -> OneTask:
    from mcp_tools.servers.tasks.service import due_text

    tool = CREATE.name
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


async def update(service: TasksService, args: UpdateArgs, ctx: CallContext) -> OneTask:
    from mcp_tools.servers.tasks.service import due_text

    tool = UPDATE.name
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


async def complete(service: TasksService, args: CompleteArgs, ctx: CallContext) -> OneTask:
    tool = COMPLETE.name
    # reopening clears the completion time too, as Google's own apps do
    body = {"status": "needsAction", "completed": None} if args.undo else {"status": "completed"}

    def run() -> OneTask:
        found = service.resolve_list(tool, args.list)
        task = service.patch(tool, found["id"], args.id, found["title"], body)
        return OneTask(list_id=found["id"], list_title=found["title"], task=Task.model_validate(task))

    result: OneTask = await service.run(tool, run)
    return result


# --- delete -------------------------------------------------------------------------------------


@dataclass
class DeleteFacts:
    """The task about to be deleted, as the precheck read it (None until it has)."""

    task_list: dict[str, Any] | None = None
    task: dict[str, Any] | None = None
    subtasks: int = 0


async def precheck_delete(service: TasksService, args: DeleteArgs, facts: DeleteFacts) -> None:
    tool = DELETE.name

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
    tool = DELETE.name
    if facts.task is None:
        await precheck_delete(service, args, facts)
    task, task_list = facts.task, facts.task_list
    assert task is not None and task_list is not None  # the precheck found both or raised
    await service.run(tool, service.delete, tool, task_list["id"], args.id, task_list["title"])
    return DeleteResult(deleted=args.id, title=task["title"], list_title=task_list["title"], subtasks=facts.subtasks)


# Tasks API argument names, as other systems' tasks tools pass them.
_ALIAS_RENAMES = {
    **PAGING,
    "taskListId": "list",
    "tasklist": "list",
    "list_id": "list",
    "taskId": "id",
    "task_id": "id",
    "dueMin": "due_from",
    "dueMax": "due_to",
}


def _dates_alias(arguments: dict[str, Any]) -> dict[str, Any]:
    """Google's RFC 3339 `due`/`dueMin`/`dueMax` become the date Google keeps (the part before the T);
    `showCompleted` becomes tasks.list's `status`."""
    out = dict(arguments)
    for key in ("due", "due_from", "due_to"):
        value = out.get(key)
        if isinstance(value, str) and len(value) > 10 and value[10] == "T":
            out[key] = value[:10]
    if "showCompleted" in out and "status" not in out:
        out["status"] = "all" if out.pop("showCompleted") else "open"
    return out


TOOLS: list[ToolSpec[Any, Any, Any]] = [
    LIST := ToolSpec(
        name="tasks.list",
        scopes=UpstreamScopes((TASKS_READONLY,), ("tasks.tasklists.list", "tasks.tasklists.get", "tasks.tasks.list")),
        aliases=(ToolAlias("tasks_list", _ALIAS_RENAMES, _dates_alias),),
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
    GET := ToolSpec(
        name="tasks.get",
        scopes=UpstreamScopes((TASKS_READONLY,), ("tasks.tasklists.list", "tasks.tasklists.get", "tasks.tasks.get")),
        aliases=(ToolAlias("tasks_get", _ALIAS_RENAMES, _dates_alias),),
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
    CREATE := ToolSpec(
        name="tasks.create",
        scopes=UpstreamScopes((TASKS,), ("tasks.tasklists.list", "tasks.tasklists.get", "tasks.tasks.insert")),
        aliases=(ToolAlias("tasks_create", _ALIAS_RENAMES, _dates_alias),),
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
    UPDATE := ToolSpec(
        name="tasks.update",
        scopes=UpstreamScopes((TASKS,), ("tasks.tasklists.list", "tasks.tasklists.get", "tasks.tasks.patch")),
        aliases=(ToolAlias("tasks_update", _ALIAS_RENAMES, _dates_alias),),
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
    COMPLETE := ToolSpec(
        name="tasks.complete",
        scopes=UpstreamScopes((TASKS,), ("tasks.tasklists.list", "tasks.tasklists.get", "tasks.tasks.patch")),
        aliases=(ToolAlias("tasks_complete", _ALIAS_RENAMES, _dates_alias),),
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
    DELETE := ToolSpec(
        name="tasks.delete",
        scopes=UpstreamScopes(
            (TASKS,),
            (
                "tasks.tasklists.list",
                "tasks.tasklists.get",
                "tasks.tasks.get",
                "tasks.tasks.list",
                "tasks.tasks.delete",
            ),
        ),
        aliases=(ToolAlias("tasks_delete", _ALIAS_RENAMES, _dates_alias),),
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
