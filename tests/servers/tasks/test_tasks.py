"""The tasks tools over the real MCP client, against the fake Google Tasks (validated requests)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from mcp_tools.servers.google import scopes
from tests.harness import annotation, connect, failure, ok, text_of
from tests.servers.fake_google import FakeGoogle, FakeTasks
from tests.servers.tasks.fixtures import BOTH
from tests.servers.tasks.fixtures import tasks_settings as settings_for

pytestmark = pytest.mark.anyio


def titles(data: dict[str, Any]) -> list[str]:
    return ["  " * task["depth"] + task["title"] for task in data["tasks"]]


@pytest.fixture(params=["Pacific/Honolulu", "Pacific/Tongatapu"])
def far_zone(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The process runs in UTC-10 or UTC+13, where a date read through local time moves a day."""
    monkeypatch.setenv("TZ", request.param)
    time.tzset()
    try:
        yield request.param
    finally:
        monkeypatch.undo()
        time.tzset()


# --- list ---------------------------------------------------------------------------------------


async def test_without_a_list_the_task_lists_are_listed(tmp_path: Path, google: FakeGoogle, tasks: FakeTasks):
    work = tasks.add_list("Work")
    async with connect(tmp_path, settings_for(tmp_path, google)) as client:
        result = await client.call_tool("tasks_list", {})
        paged = ok(await client.call_tool("tasks_list", {"limit": 1}))
        rest = ok(await client.call_tool("tasks_list", {"limit": 1, "cursor": paged["next_cursor"]}))
    data = ok(result)
    assert data["lists"] == [{"id": tasks.default_id, "title": "My Tasks"}, {"id": work.id, "title": "Work"}]
    assert data["tasks"] == [] and data["list_id"] is None and data["next_cursor"] is None
    assert "<<<untrusted task lists" in text_of(result)
    assert [item["title"] for item in paged["lists"] + rest["lists"]] == ["My Tasks", "Work"]


async def test_subtasks_come_under_their_parent_in_googles_order(tmp_path: Path, google: FakeGoogle, tasks: FakeTasks):
    trip = tasks.add("Plan the trip")
    tasks.add("Water the plants")
    tasks.add("Book the train", parent=trip.id)
    tasks.add("Pack", parent=trip.id)
    async with connect(tmp_path, settings_for(tmp_path, google)) as client:
        ok(await client.call_tool("tasks_create", {"title": "Renew passport", "parent": trip.id}))
        ok(await client.call_tool("tasks_create", {"title": "Call mum"}))
        result = await client.call_tool("tasks_list", {"list": "@default"})
    data = ok(result)
    expected = ["Call mum", "Plan the trip", "  Renew passport", "  Book the train", "  Pack", "Water the plants"]
    assert titles(data) == expected == tasks.titles()  # new tasks go first among their siblings, as at Google
    assert data["list_title"] == "My Tasks" and data["list_id"] == tasks.default_id
    renewed = data["tasks"][2]
    assert renewed["parent"] == trip.id and renewed["status"] == "open"
    text = text_of(result)
    assert "  - [ ] Renew passport" in text and "- [ ] Call mum" in text and "<<<untrusted task list" in text


async def test_a_subtask_without_its_parent_on_the_page_keeps_the_parent_id(
    tmp_path: Path, google: FakeGoogle, tasks: FakeTasks
):
    done = tasks.add("Finished project", completed=True)
    tasks.add("Follow-up", parent=done.id)
    first = tasks.add("First")
    tasks.add("Second", parent=first.id)
    tasks.add("Third", parent=first.id)
    async with connect(tmp_path, settings_for(tmp_path, google)) as client:
        open_ = ok(await client.call_tool("tasks_list", {"list": "@default"}))
        page = ok(await client.call_tool("tasks_list", {"list": "@default", "limit": 2}))
        rest = ok(await client.call_tool("tasks_list", {"list": "@default", "cursor": page["next_cursor"]}))
    assert [(t["title"], t["depth"], t["parent"]) for t in open_["tasks"]] == [
        ("Follow-up", 0, done.id),  # its parent is completed, so not listed
        ("First", 0, None),
        ("Second", 1, first.id),
        ("Third", 1, first.id),
    ]
    assert titles(page) == ["Follow-up", "First"] and titles(rest) == ["Second", "Third"]
    assert rest["tasks"][0]["parent"] == first.id


async def test_status_filters_include_tasks_completed_in_googles_own_apps(
    tmp_path: Path, google: FakeGoogle, tasks: FakeTasks
):
    tasks.add("Open one")
    tasks.add("Done here", completed=True)
    tasks.add("Done in the app", completed=True, hidden=True)  # Google's apps hide completed tasks at once
    tasks.add("Cleared long ago", completed=True)
    tasks.clear()
    tasks.add("Done after clearing", completed=True)
    async with connect(tmp_path, settings_for(tmp_path, google)) as client:
        open_ = ok(await client.call_tool("tasks_list", {"list": "@default"}))
        done = ok(await client.call_tool("tasks_list", {"list": "@default", "status": "completed"}))
        every = ok(await client.call_tool("tasks_list", {"list": "@default", "status": "all"}))
    assert titles(open_) == ["Open one"]
    assert titles(done) == ["Done here", "Done in the app", "Cleared long ago", "Done after clearing"]
    assert all(task["status"] == "completed" and task["completed"] for task in done["tasks"])
    assert titles(every) == ["Open one", *titles(done)]


async def test_long_lists_are_paged_to_the_end(tmp_path: Path, google: FakeGoogle, tasks: FakeTasks):
    for number in range(7):
        tasks.add(f"Task {number}")
    seen: list[str] = []
    async with connect(tmp_path, settings_for(tmp_path, google)) as client:
        cursor = ""
        pages = 0
        while True:
            data = ok(await client.call_tool("tasks_list", {"list": "My Tasks", "limit": 3, "cursor": cursor}))
            seen += titles(data)
            pages += 1
            if data["next_cursor"] is None:
                break
            cursor = data["next_cursor"]
        result = await client.call_tool("tasks_list", {"list": "My Tasks", "limit": 3})
    assert seen == [f"Task {number}" for number in range(7)] and pages == 3
    assert "call again with cursor=" in text_of(result)


async def test_a_list_is_named_by_id_or_title_in_any_case(tmp_path: Path, google: FakeGoogle, tasks: FakeTasks):
    work = tasks.add_list("Work")
    tasks.add("Send the report", work.id)
    tasks.add_list("Home")
    tasks.add_list("home")
    async with connect(tmp_path, settings_for(tmp_path, google)) as client:
        by_title = ok(await client.call_tool("tasks_list", {"list": "work"}))
        by_id = ok(await client.call_tool("tasks_list", {"list": work.id}))
        missing = failure(await client.call_tool("tasks_list", {"list": "Garden"}))
        twice = failure(await client.call_tool("tasks_list", {"list": "HOME"}))
    assert titles(by_title) == titles(by_id) == ["Send the report"] and by_title["list_id"] == work.id
    assert missing["kind"] == "not_found" and "'Work'" in missing["hint"] and "tasks_list" in missing["hint"]
    assert twice["kind"] == "invalid_arguments" and "pass an id" in twice["hint"]


# --- get and create ----------------------------------------------------------------------------


async def test_get_shows_the_notes_and_a_missing_task_is_not_found(
    tmp_path: Path, google: FakeGoogle, tasks: FakeTasks
):
    stored = tasks.add("Buy paint", notes="White, matte.\nTwo litres.", due="2026-03-05T00:00:00.000Z")
    gone = tasks.add("Old idea")
    async with connect(tmp_path, settings_for(tmp_path, google)) as client:
        ok(await client.call_tool("tasks_delete", {"id": gone.id}))
        result = await client.call_tool("tasks_get", {"id": stored.id})
        deleted = failure(await client.call_tool("tasks_get", {"id": gone.id}))
        unknown = failure(await client.call_tool("tasks_get", {"id": "nope", "list": "My Tasks"}))
    data = ok(result)
    assert data["task"] == {
        "id": stored.id,
        "title": "Buy paint",
        "notes": "White, matte.\nTwo litres.",
        "status": "open",
        "due": "2026-03-05",
        "completed": None,
        "parent": None,
    }
    assert data["list_title"] == "My Tasks" and "Two litres." in text_of(result)
    for error in (deleted, unknown):
        assert error["kind"] == "not_found" and "'My Tasks'" in error["message"] and "tasks_list" in error["hint"]


async def test_create_in_a_named_list_with_notes_due_and_parent(tmp_path: Path, google: FakeGoogle, tasks: FakeTasks):
    work = tasks.add_list("Work")
    report = tasks.add("Quarterly report", work.id)
    async with connect(tmp_path, settings_for(tmp_path, google)) as client:
        result = await client.call_tool(
            "tasks_create",
            {
                "title": "Draft the summary",
                "notes": "Two pages",
                "due": "2026-04-01",
                "parent": report.id,
                "list": "Work",
            },
        )
        no_parent = failure(await client.call_tool("tasks_create", {"title": "x", "parent": "missing"}))
    data = ok(result)
    assert data["list_id"] == work.id and data["task"]["parent"] == report.id and data["task"]["due"] == "2026-04-01"
    stored = tasks.tasks[data["task"]["id"]]
    assert (stored.title, stored.notes, stored.due, stored.parent) == (
        "Draft the summary",
        "Two pages",
        "2026-04-01T00:00:00.000Z",
        report.id,
    )
    assert ("tasks.tasks.insert", {"title": "Draft the summary", "status": "needsAction", "notes": "Two pages",
            "due": "2026-04-01T00:00:00.000Z"}) in tasks.bodies  # fmt: skip
    assert "Action performed" in text_of(result)
    assert no_parent["kind"] == "not_found" and "parent" in no_parent["message"]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"title": "x", "due": "2026-03-05T10:00"}, "due"),
        ({"title": "x", "due": "05.03.2026"}, "due"),
        ({"title": "x", "due": "2026-02-30"}, "due"),
        ({"title": "x", "due": 1772668800}, "due"),
        ({"title": ""}, "title"),
        ({"title": "two\nlines"}, "title"),
        ({"title": "x", "parent": "../etc"}, "parent"),
        ({"title": "x", "list": ""}, "list"),
    ],
)
async def test_bad_create_arguments_name_the_field(
    tmp_path: Path, google: FakeGoogle, tasks: FakeTasks, arguments: dict[str, Any], field: str
):
    async with connect(tmp_path, settings_for(tmp_path, google)) as client:
        error = failure(await client.call_tool("tasks_create", arguments))
    assert error["kind"] == "invalid_arguments" and field in error["message"]
    assert "tasks.tasks.insert" not in google.calls


# --- due dates far from UTC --------------------------------------------------------------------


async def test_due_dates_keep_their_day_far_from_utc(
    tmp_path: Path, google: FakeGoogle, tasks: FakeTasks, far_zone: str
):
    tasks.add("Made in the app", due="2026-03-06T00:00:00.000Z")
    tasks.add("No due date")
    async with connect(tmp_path, settings_for(tmp_path, google)) as client:
        created = ok(await client.call_tool("tasks_create", {"title": "Pay rent", "due": "2026-03-05"}))["task"]
        got = ok(await client.call_tool("tasks_get", {"id": created["id"]}))["task"]

        async def due_between(start: str | None, end: str | None) -> list[tuple[str, str]]:
            query = {"list": "@default", **({"due_from": start} if start else {}), **({"due_to": end} if end else {})}
            data = ok(await client.call_tool("tasks_list", query))
            return [(task["title"], task["due"]) for task in data["tasks"]]

        on_the_day = await due_between("2026-03-05", "2026-03-05")
        both_days = await due_between("2026-03-05", "2026-03-06")
        day_before = await due_between(None, "2026-03-04")
        day_after = await due_between("2026-03-07", None)
        from_the_sixth = await due_between("2026-03-06", None)
        until_the_fifth = await due_between(None, "2026-03-05")
        moved = ok(await client.call_tool("tasks_update", {"id": created["id"], "due": "2026-03-31"}))["task"]
    assert created["due"] == got["due"] == "2026-03-05"
    sent = [body["due"] for method, body in tasks.bodies if method == "tasks.tasks.insert"]
    assert sent == ["2026-03-05T00:00:00.000Z"]  # midnight UTC of the date itself, whatever the local zone
    assert on_the_day == [("Pay rent", "2026-03-05")] == until_the_fifth
    assert both_days == [("Pay rent", "2026-03-05"), ("Made in the app", "2026-03-06")]
    assert day_before == [] and day_after == []
    assert from_the_sixth == [("Made in the app", "2026-03-06")]
    assert moved["due"] == "2026-03-31" and tasks.tasks[created["id"]].due == "2026-03-31T00:00:00.000Z"


async def test_a_due_time_google_was_sent_elsewhere_is_dropped_to_the_date(
    tmp_path: Path, google: FakeGoogle, tasks: FakeTasks, far_zone: str
):
    stored = tasks.add("From another client", due="2026-12-31T23:30:00-05:00")
    async with connect(tmp_path, settings_for(tmp_path, google)) as client:
        data = ok(await client.call_tool("tasks_get", {"id": stored.id}))
    assert data["task"]["due"] == "2026-12-31"  # Google keeps the date as written, at midnight UTC


# --- update, complete, delete ------------------------------------------------------------------


async def test_update_title_notes_and_due_then_clear_them(tmp_path: Path, google: FakeGoogle, tasks: FakeTasks):
    stored = tasks.add("Call Bob", notes="about the fence", due="2026-05-01T00:00:00.000Z")
    async with connect(tmp_path, settings_for(tmp_path, google)) as client:
        renamed = ok(await client.call_tool("tasks_update", {"id": stored.id, "title": "Call Bob and Ann"}))
        cleared = ok(await client.call_tool("tasks_update", {"id": stored.id, "notes": "", "clear_due": True}))
        nothing = failure(await client.call_tool("tasks_update", {"id": stored.id}))
        both = failure(
            await client.call_tool("tasks_update", {"id": stored.id, "due": "2026-05-02", "clear_due": True})
        )
        missing = failure(await client.call_tool("tasks_update", {"id": "gone", "title": "x"}))
    assert renamed["task"]["title"] == "Call Bob and Ann" and renamed["task"]["notes"] == "about the fence"
    assert renamed["task"]["due"] == "2026-05-01"
    assert cleared["task"]["notes"] == "" and cleared["task"]["due"] is None
    assert stored.notes is None and stored.due is None and stored.title == "Call Bob and Ann"
    assert ("tasks.tasks.patch", {"notes": None, "due": None}) in tasks.bodies
    assert nothing["kind"] == both["kind"] == "invalid_arguments" and "clear_due" in both["message"]
    assert missing["kind"] == "not_found"


async def test_complete_and_undo(tmp_path: Path, google: FakeGoogle, tasks: FakeTasks):
    stored = tasks.add("File taxes")
    async with connect(tmp_path, settings_for(tmp_path, google)) as client:
        done = ok(await client.call_tool("tasks_complete", {"id": stored.id}))["task"]
        open_after_done = ok(await client.call_tool("tasks_list", {"list": "@default"}))
        completed = ok(await client.call_tool("tasks_list", {"list": "@default", "status": "completed"}))
        reopened = ok(await client.call_tool("tasks_complete", {"id": stored.id, "undo": True}))["task"]
        open_again = ok(await client.call_tool("tasks_list", {"list": "@default"}))
    assert done["status"] == "completed" and done["completed"].startswith("20")
    assert titles(open_after_done) == [] and titles(completed) == ["File taxes"]
    assert reopened["status"] == "open" and reopened["completed"] is None and stored.completed is None
    assert titles(open_again) == ["File taxes"]


async def test_delete_asks_naming_the_task_and_its_list(tmp_path: Path, google: FakeGoogle, tasks: FakeTasks):
    work = tasks.add_list("Work")
    launch = tasks.add("Launch plan", work.id, due="2026-06-01T00:00:00.000Z")
    tasks.add("Press release", work.id, parent=launch.id)
    tasks.add("Slides", work.id, parent=launch.id, completed=True, hidden=True)
    keep = tasks.add("Keep me", work.id)
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, settings_for(tmp_path, google), elicit="decline", seen=seen) as client:
        declined = failure(await client.call_tool("tasks_delete", {"id": launch.id, "list": "Work"}))
    assert declined["kind"] == "declined_by_user" and "tasks.tasks.delete" not in google.calls
    assert len(seen) == 1
    assert "Delete the task 'Launch plan' from the list 'Work' (due 2026-06-01, with its 2 subtask(s))" in (
        seen[0].message
    )
    seen.clear()
    async with connect(tmp_path, settings_for(tmp_path, google), seen=seen) as client:
        deleted = ok(await client.call_tool("tasks_delete", {"id": launch.id, "list": work.id}))
        missing = failure(await client.call_tool("tasks_delete", {"id": launch.id, "list": "Work"}))
        left = ok(await client.call_tool("tasks_list", {"list": "Work", "status": "all"}))
    assert deleted == {"deleted": launch.id, "title": "Launch plan", "list_title": "Work", "subtasks": 2}
    assert missing["kind"] == "not_found" and len(seen) == 1  # a missing task is reported before asking
    assert titles(left) == ["Keep me"] and left["tasks"][0]["id"] == keep.id
    assert google.calls.count("tasks.tasks.delete") == 1


async def test_delete_without_a_form_waits_for_an_approval(tmp_path: Path, google: FakeGoogle, tasks: FakeTasks):
    stored = tasks.add("Cancel gym")
    async with connect(tmp_path, settings_for(tmp_path, google), elicit=None) as client:
        error = failure(await client.call_tool("tasks_delete", {"id": stored.id}))
    assert error["kind"] == "approval_required" and "'Cancel gym'" in error["message"]
    assert "'My Tasks'" in error["message"] and not stored.deleted


# --- scopes and errors -------------------------------------------------------------------------


async def test_a_read_only_sign_in_reads_and_names_the_scope_a_write_needs(
    tmp_path: Path, google: FakeGoogle, tasks: FakeTasks
):
    stored = tasks.add("Read me")
    async with connect(tmp_path, settings_for(tmp_path, google, [scopes.TASKS_READONLY])) as client:
        ok(await client.call_tool("tasks_get", {"id": stored.id}))
        error = failure(await client.call_tool("tasks_complete", {"id": stored.id}))
    assert error["kind"] == "not_configured" and error["missing_scopes"] == ["tasks"]
    assert "mcp-tools auth google" in error["hint"] and "tasks.tasks.patch" not in google.calls


async def test_a_403_for_scopes_from_google_is_mapped(tmp_path: Path, google: FakeGoogle, tasks: FakeTasks):
    stored = tasks.add("Read me")
    settings = settings_for(tmp_path, google, [scopes.TASKS_READONLY])
    token_file = tmp_path / "state" / "google" / "token.json"
    data = json.loads(token_file.read_text())
    data["scopes"] = sorted(BOTH)  # the file claims more than Google granted
    token_file.write_text(json.dumps(data))
    async with connect(tmp_path, settings) as client:
        error = failure(await client.call_tool("tasks_update", {"id": stored.id, "title": "x"}))
    assert error["kind"] == "not_configured" and error["missing_scopes"] == ["tasks"]
    assert "403" not in error["message"] and stored.title == "Read me"


async def test_a_429_is_retried_and_one_that_lasts_is_reported(tmp_path: Path, google: FakeGoogle, tasks: FakeTasks):
    tasks.add("Still here")
    google.fail("tasks.tasks.list", 429, "rateLimitExceeded", times=2)
    async with connect(tmp_path, settings_for(tmp_path, google)) as client:
        data = ok(await client.call_tool("tasks_list", {"list": "@default"}))
        google.fail("tasks.tasks.list", 429, "rateLimitExceeded", times=1, retry_after=120)
        error = failure(await client.call_tool("tasks_list", {"list": "@default"}))
    assert titles(data) == ["Still here"] and google.calls.count("tasks.tasks.list") == 4
    assert error["kind"] == "upstream_error" and error["retry_after_seconds"] == 120


def test_read_only_policy_asks_for_tasks_readonly_only(tmp_path: Path):
    from mcp_tools.cli.google import enabled_tools
    from mcp_tools.core.config import parse_config

    def asked(policy: dict[str, Any]) -> list[str]:
        config = parse_config({"server": {"servers": ["tasks"]}, "tasks": {}, "policy": policy}, {})
        return scopes.requested_scopes(enabled_tools(config))

    assert asked({"read_only": True}) == [scopes.TASKS_READONLY]
    assert asked({}) == sorted(BOTH)
    assert scopes.missing_scopes("tasks.list", [scopes.TASKS]) == []  # the wider grant covers reading


async def test_definitions_fit_the_budget_and_say_what_they_do(tmp_path: Path, google: FakeGoogle, tasks: FakeTasks):
    from mcp_tools.transports import budget

    async with connect(tmp_path, settings_for(tmp_path, google)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {f"tasks_{m}" for m in ("list", "get", "create", "update", "complete", "delete")}
    costs = [
        budget.cost_of(tool.model_dump(mode="json", by_alias=True, exclude_none=True), name)
        for name, tool in tools.items()
    ]
    assert sum(cost.visible for cost in costs) / len(costs) <= 140 * 4
    assert sum(cost.full for cost in costs) / len(costs) <= 235 * 4
    due = tools["tasks_create"].input_schema["properties"]["due"]
    assert due["description"] == "date (YYYY-MM-DD); Google keeps no time" and due["format"] == "date"
    assert annotation(tools["tasks_delete"], "destructive_hint") is True
    assert annotation(tools["tasks_list"], "read_only_hint") is True
    assert annotation(tools["tasks_create"], "destructive_hint") is False
    assert "Risk: high" in (tools["tasks_delete"].description or "")


def test_tasks_runs_only_when_asked_for_so_a_gmail_sign_in_asks_no_tasks_scope(tmp_path: Path, google: FakeGoogle):
    from mcp_tools.cli.google import enabled_tools
    from mcp_tools.composition.app import build_app
    from tests.harness import make_config

    settings = settings_for(tmp_path, google)
    del settings["tasks"], settings["server"]["servers"]
    app = build_app(make_config(tmp_path, settings))
    status = next(status for status in app.statuses if status.name == "tasks")
    assert not status.enabled and "[tasks]" in (status.reason or "")
    assert not any(name.startswith("tasks.") for name in enabled_tools(app.config))
    assert "gmail" in app.namespaces  # the same sign-in serves gmail, which is on by default
    settings["tasks"] = {}
    app = build_app(make_config(tmp_path, settings))
    assert "tasks" in app.namespaces and "tasks.delete" in enabled_tools(app.config)


@pytest.mark.parametrize("zone", ["Pacific/Honolulu", "Pacific/Apia"])
async def test_a_real_server_process_in_a_far_zone_keeps_the_date(
    tmp_path: Path, google: FakeGoogle, tasks: FakeTasks, zone: str
):
    """The server as a separate process started with TZ set, over stdio: the date written is read back."""
    from mcp import Client

    from tests.processes import stdio_params

    settings = settings_for(tmp_path, google)
    config = tmp_path / "config.toml"
    config.write_text(
        f'[server]\nservers = ["tasks"]\ntools = ["tasks"]\nstate_dir = "{tmp_path / "state"}"\n'
        f'data_dir = "{tmp_path / "data"}"\n[tasks]\n'
        f'[google]\nclient_secrets = "{settings["google"]["client_secrets"]}"\napi_endpoint = "{google.url}"\n'
    )
    async with Client(stdio_params(config, TZ=zone)) as client:
        made = ok(await client.call_tool("tasks_create", {"title": "New year", "due": "2027-01-01"}))
        listed = ok(await client.call_tool("tasks_list", {"list": "@default", "due_from": "2027-01-01"}))
        before = ok(await client.call_tool("tasks_list", {"list": "@default", "due_to": "2026-12-31"}))
    assert made["task"]["due"] == "2027-01-01" and tasks.tasks[made["task"]["id"]].due == "2027-01-01T00:00:00.000Z"
    assert [(t["title"], t["due"]) for t in listed["tasks"]] == [("New year", "2027-01-01")] and before["tasks"] == []
