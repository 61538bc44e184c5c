"""The arguments and results of the tasks tools, and the checks their fields share."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from mcp_tools.core.tooling import Arguments, Output

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


class OneTask(Output):
    list_id: str
    list_title: str
    task: Task


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


class TaskArgs(Arguments):
    list: ListRef = "@default"
    id: TaskId


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


class CompleteArgs(TaskArgs):
    undo: bool = Field(default=False, description="Reopen it.")


class DeleteArgs(TaskArgs):
    """The task to delete."""


class DeleteResult(Output):
    deleted: str  # the task's id
    title: str
    list_title: str
    subtasks: int  # deleted with it
