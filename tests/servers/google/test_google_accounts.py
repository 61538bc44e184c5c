"""Several Google accounts in one server: the `account` argument, results and confirmations that
name the account, `account: "all"`, per-account policy, and one account's failure kept to itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from mcp_tools.servers.drive.tools import TOOLS as DRIVE_TOOLS
from mcp_tools.servers.gmail.tools import TOOLS as GMAIL_TOOLS
from tests.harness import connect, failure, ok, text_of
from tests.servers.fake_google import FakeDrive, FakeGmail, FakeGoogle
from tests.servers.gmail.fixtures import plain, sign_in
from tests.servers.google_accounts_fixtures import WORK, raw_mail, store_token, stored_token, two_accounts

pytestmark = pytest.mark.anyio

DRIVE_SCOPES = ["https://www.googleapis.com/auth/drive.file"]


@pytest.fixture
def work(google: FakeGoogle) -> FakeGoogle:
    return google.add_account(WORK)


@pytest.fixture
def work_gmail(work: FakeGoogle) -> FakeGmail:
    return FakeGmail(work)


def _by_name(tools: list[types.Tool]) -> dict[str, types.Tool]:
    return {tool.name: tool for tool in tools}


async def test_with_one_account_the_tools_read_as_they_did_before_accounts(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail
):
    from mcp_tools.composition.app import build_app
    from mcp_tools.policy.gate import BoundTool
    from mcp_tools.transports.mcp_server import tool_definition
    from tests.harness import make_config

    gmail.add(plain())
    app = build_app(make_config(tmp_path, sign_in(tmp_path, google)))
    async with connect(tmp_path, app=app) as client:
        listed = _by_name((await client.list_tools()).tools)
        for spec in GMAIL_TOOLS:  # the declarations as they are, without the account argument
            bound = app.tools[spec.name.replace(".", "_")]
            before = tool_definition(BoundTool(spec, None, bound.wire_name, bound.configured_risk))
            assert tool_definition(bound) == before
            assert listed[bound.wire_name].input_schema == before.input_schema
            assert listed[bound.wire_name].output_schema == before.output_schema
        found = ok(await client.call_tool("gmail_search", {}))
        assert "account" not in found and "Account:" not in text_of(await client.call_tool("gmail_search", {}))
        # naming the one account is allowed, and changes nothing in the answer
        assert "account" not in ok(await client.call_tool("gmail_search", {"account": "default"}))


async def test_each_account_reaches_its_own_mailbox_and_says_so(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, work: FakeGoogle, work_gmail: FakeGmail
):
    home = gmail.add(plain(subject="Dinner"))
    office = work_gmail.add(plain(subject="Board meeting", to=WORK))
    async with connect(tmp_path, two_accounts(tmp_path, google, work)) as client:
        listed = _by_name((await client.list_tools()).tools)
        assert listed["gmail_search"].input_schema["properties"]["account"] == {"type": "string"}
        assert listed["gmail_read"].input_schema["properties"]["account"] == {"type": "string"}
        default = ok(await client.call_tool("gmail_search", {}))
        assert default["account"] == "default" and [m["id"] for m in default["messages"]] == [home.id]
        assert google.calls_for(WORK) == []
        result = await client.call_tool("gmail_search", {"account": "work"})
        found = ok(result)
        assert found["account"] == "work" and [m["id"] for m in found["messages"]] == [office.id]
        assert text_of(result).startswith("Account: work")
        by_address = ok(await client.call_tool("gmail_read", {"id": office.id, "account": WORK.upper()}))
        assert by_address["account"] == "work" and "Board meeting" in by_address["messages"][0]["subject"]
        home_reads = google.calls_for("me@example.com").count("gmail.users.messages.get")
        # an id without an account: the default account does not have it, the work account answers
        found = ok(await client.call_tool("gmail_read", {"id": office.id}))
        assert found["account"] == "work"
        assert google.calls_for("me@example.com").count("gmail.users.messages.get") == home_reads + 1
        missing = failure(await client.call_tool("gmail_read", {"id": "18c0000000000000"}))
        assert missing["kind"] == "not_found"
    assert "gmail.users.messages.get" in google.calls_for(WORK)
    assert "gmail.users.messages.list" in google.calls_for("me@example.com")


async def test_an_unknown_account_names_the_accounts_there_are(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, work: FakeGoogle, work_gmail: FakeGmail
):
    async with connect(tmp_path, two_accounts(tmp_path, google, work)) as client:
        error = failure(await client.call_tool("gmail_search", {"account": "play"}))
        assert error["kind"] == "invalid_arguments"
        assert "default (me@example.com)" in error["message"] and f"work ({WORK})" in error["message"]
        error = failure(await client.call_tool("gmail_send", {"account": "all", "to": ["x@example.org"]}))
        assert error["kind"] == "invalid_arguments" and "gmail.search" in error["message"]
    assert google.requests == []


async def test_sending_from_the_work_account_says_so_and_sends_from_there(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, work: FakeGoogle, work_gmail: FakeGmail
):
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, two_accounts(tmp_path, google, work), seen=seen) as client:
        sent = ok(
            await client.call_tool(
                "gmail_send", {"account": "work", "to": ["bob@example.org"], "subject": "Hi", "body": "Hello Bob"}
            )
        )
    assert sent["account"] == "work"
    [asked] = seen
    assert asked.message.splitlines()[0].startswith(f"Send email from work ({WORK})"), asked.message
    assert "gmail.users.messages.send" in google.calls_for(WORK)
    assert "gmail.users.messages.send" not in google.calls_for("me@example.com")
    [message] = [m for m in work_gmail.messages.values() if "SENT" in m.labels]
    assert f"From: {WORK}" in message.raw.decode()
    assert not any("SENT" in m.labels for m in gmail.messages.values())


async def test_all_accounts_merge_newest_first_and_page_with_one_cursor(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, work: FakeGoogle, work_gmail: FakeGmail
):
    days = {
        gmail: ["Mon, 3 Nov 2025 09:00:00 +0000", "Wed, 5 Nov 2025 09:00:00 +0000", "Fri, 7 Nov 2025 09:00:00 +0000"],
        work_gmail: [
            "Tue, 4 Nov 2025 09:00:00 +0000",
            "Thu, 6 Nov 2025 09:00:00 +0000",
            "Sat, 8 Nov 2025 09:00:00 +0000",
            "Sun, 9 Nov 2025 09:00:00 +0000",
        ],
    }
    for mailbox, dates in days.items():
        for date in dates:
            mailbox.add(raw_mail(f"m {date[5:7].strip()}", date))
    pages: list[dict[str, Any]] = []
    async with connect(tmp_path, two_accounts(tmp_path, google, work)) as client:
        arguments: dict[str, Any] = {"account": "all", "limit": 2}
        while True:
            page = ok(await client.call_tool("gmail_search", arguments))
            pages.append(page)
            if not page["next_cursor"]:
                break
            arguments["cursor"] = page["next_cursor"]
            assert len(pages) < 10
        error = failure(await client.call_tool("gmail_search", {"account": "all", "cursor": "all.forged"}))
        assert error["kind"] == "invalid_arguments"
    hits = [hit for page in pages for hit in page["messages"]]
    assert [hit["subject"] for hit in hits] == [f"m {day}" for day in range(9, 2, -1)]
    assert [hit["account"] for hit in hits] == ["work", "work", "default", "work", "default", "work", "default"]
    assert all(page["account"] == "all" for page in pages) and all(len(page["messages"]) <= 2 for page in pages)


async def test_drive_search_of_every_account(tmp_path: Path, google: FakeGoogle, work: FakeGoogle):
    home, office = FakeDrive(google), FakeDrive(work)
    home.add("budget.txt", "a", app=True)
    office.add("roadmap.txt", "b", app=True)
    settings = two_accounts(tmp_path, google, work, DRIVE_SCOPES, servers=["drive", "files"])
    async with connect(tmp_path, settings) as client:
        found = ok(await client.call_tool("drive_search", {"account": "all"}))
        work_only = ok(await client.call_tool("drive_search", {"account": "work"}))
    assert sorted((f["name"], f["account"]) for f in found["files"]) == [
        ("budget.txt", "default"),
        ("roadmap.txt", "work"),
    ]
    assert [f["name"] for f in work_only["files"]] == ["roadmap.txt"] and work_only["account"] == "work"
    assert {spec.name for spec in DRIVE_TOOLS} >= {"drive.search"}


async def test_a_revoked_account_fails_alone_with_the_command_that_fixes_it(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, work: FakeGoogle, work_gmail: FakeGmail
):
    gmail.add(plain(subject="Still here"))
    work_gmail.add(plain(subject="Gone", to=WORK))
    settings = two_accounts(tmp_path, google, work, expires_in=0)
    google.revoke_refresh_tokens(WORK)
    async with connect(tmp_path, settings) as client:
        error = failure(await client.call_tool("gmail_search", {"account": "work"}))
        assert error["kind"] == "not_configured" and "'work'" in error["message"]
        assert "mcp-tools auth google --account work" in error["hint"]
        assert ok(await client.call_tool("gmail_search", {}))["messages"][0]["subject"] == "Still here"
        merged = ok(await client.call_tool("gmail_search", {"account": "all"}))
        assert [m["subject"] for m in merged["messages"]] == ["Still here"]
        assert merged["account"].startswith("all; not answering: work (not_configured")
    stored = stored_token(tmp_path, "work")
    assert stored["refresh_token"] not in json.dumps(merged)


async def test_two_calls_at_once_refresh_the_token_once(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, work: FakeGoogle, work_gmail: FakeGmail
):
    work_gmail.add(plain(to=WORK))
    settings = two_accounts(tmp_path, google, work, expires_in=0)
    results: list[Any] = []
    async with connect(tmp_path, settings) as client:

        async def search() -> None:
            results.append(await client.call_tool("gmail_search", {"account": "work"}))

        async with anyio.create_task_group() as group:
            group.start_soon(search)
            group.start_soon(search)
    assert all(ok(result)["account"] == "work" for result in results) and len(results) == 2
    work_refresh = stored_token(tmp_path, "work")["refresh_token"]
    refreshes = [r for r in google.token_requests if r.get("refresh_token") == work_refresh]
    assert len(refreshes) == 1


async def test_a_read_only_account_reads_but_does_not_send(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, work: FakeGoogle, work_gmail: FakeGmail
):
    work_gmail.add(plain(to=WORK))
    settings = two_accounts(tmp_path, google, work, google={"accounts": {"work": {"read_only": True}}})
    async with connect(tmp_path, settings) as client:
        assert ok(await client.call_tool("gmail_search", {"account": "work"}))["account"] == "work"
        error = failure(
            await client.call_tool("gmail_send", {"account": "work", "to": ["bob@example.org"], "subject": "x"})
        )
        assert error["kind"] == "denied_by_policy" and "read_only" in error["message"]
    assert "gmail.users.messages.send" not in google.calls_for(WORK)


async def test_each_account_has_its_own_allowed_recipients(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, work: FakeGoogle, work_gmail: FakeGmail
):
    settings = two_accounts(
        tmp_path, google, work, google={"accounts": {"work": {"allowed_recipients": ["*@corp.example"]}}}
    )
    async with connect(tmp_path, settings) as client:
        refused = failure(
            await client.call_tool("gmail_send", {"account": "work", "to": ["bob@example.org"], "subject": "x"})
        )
        assert refused["kind"] == "denied_by_policy" and "bob@example.org" in refused["message"]
        ok(await client.call_tool("gmail_send", {"account": "work", "to": ["carol@corp.example"], "subject": "x"}))
        ok(await client.call_tool("gmail_send", {"to": ["bob@example.org"], "subject": "x"}))


async def test_the_default_account_setting_picks_the_account(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, work: FakeGoogle, work_gmail: FakeGmail
):
    office = work_gmail.add(plain(to=WORK))
    settings = two_accounts(tmp_path, google, work, google={"default_account": "work"})
    async with connect(tmp_path, settings) as client:
        found = ok(await client.call_tool("gmail_search", {}))
    assert found["account"] == "work" and [m["id"] for m in found["messages"]] == [office.id]


async def test_only_a_labelled_account_is_the_default_without_naming_it(
    tmp_path: Path, google: FakeGoogle, work: FakeGoogle, work_gmail: FakeGmail
):
    office = work_gmail.add(plain(to=WORK))
    settings = sign_in(tmp_path, google)
    (tmp_path / "state" / "google" / "token.json").unlink()
    store_token(tmp_path, work, "work")
    async with connect(tmp_path, settings) as client:
        listed = _by_name((await client.list_tools()).tools)
        assert "account" not in listed["gmail_search"].input_schema["properties"]
        found = ok(await client.call_tool("gmail_search", {}))
    assert [m["id"] for m in found["messages"]] == [office.id] and "account" not in found


async def test_a_policy_rule_naming_an_account_raises_that_account_alone(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, work: FakeGoogle, work_gmail: FakeGmail
):
    gmail.add(plain())
    work_gmail.add(plain(to=WORK))
    settings = two_accounts(tmp_path, google, work)
    settings["policy"] = {"rules": [{"match": "gmail.search@work", "risk": "high"}]}
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, settings, seen=seen, elicit="decline") as client:
        assert ok(await client.call_tool("gmail_search", {}))["account"] == "default"
        declined = failure(await client.call_tool("gmail_search", {"account": "work"}))
        merged = failure(await client.call_tool("gmail_search", {"account": "all"}))
    assert declined["kind"] == "declined_by_user" and merged["kind"] == "declined_by_user"
    assert seen[0].message.startswith(f"as work ({WORK}): search Gmail")
    assert "gmail.users.messages.list" not in google.calls_for(WORK)


async def test_tasks_of_every_account_in_one_list(tmp_path: Path, google: FakeGoogle, work: FakeGoogle):
    from tests.servers.fake_google import FakeTasks
    from tests.servers.tasks.fixtures import BOTH

    home, office = FakeTasks(google), FakeTasks(work)
    home.add("buy milk", due="2025-11-03T00:00:00.000Z")
    office.add("file report", due="2025-11-05T00:00:00.000Z")
    office.add("book travel", due="2025-11-01T00:00:00.000Z")
    settings = two_accounts(tmp_path, google, work, BOTH, servers=["tasks"])
    del settings["gmail"]
    settings["tasks"] = {}
    async with connect(tmp_path, settings) as client:
        found = ok(await client.call_tool("tasks_list", {"account": "all"}))
        work_only = ok(await client.call_tool("tasks_list", {"account": "work", "list": "@default"}))
    assert [(task["title"], task["account"]) for task in found["tasks"]] == [
        ("file report", "work"),
        ("buy milk", "default"),
        ("book travel", "work"),
    ]
    assert [task["title"] for task in work_only["tasks"]] == ["file report", "book travel"]


async def test_an_account_with_its_own_drive_access_reads_its_whole_drive(
    tmp_path: Path, google: FakeGoogle, work: FakeGoogle
):
    from mcp_tools.servers.google import scopes

    home, office = FakeDrive(google), FakeDrive(work)
    home.add("private.txt", "a", app=False)
    office.add("handbook.txt", "b", app=False)
    settings = sign_in(tmp_path, google, DRIVE_SCOPES, servers=["drive"])
    store_token(tmp_path, work, "work", [scopes.DRIVE_READONLY, *DRIVE_SCOPES])
    settings["drive"] = {}
    settings["google"]["accounts"] = {"work": {"drive": {"access": "read"}}}
    async with connect(tmp_path, settings) as client:
        mine = ok(await client.call_tool("drive_search", {}))
        theirs = ok(await client.call_tool("drive_search", {"account": "work"}))
        store_token(tmp_path, work, "work", DRIVE_SCOPES, running=True)  # signed in again without the read scope
        lacking = failure(await client.call_tool("drive_search", {"account": "work"}))
    assert mine["files"] == [] and [f["name"] for f in theirs["files"]] == ["handbook.txt"]
    assert lacking["kind"] == "not_configured" and lacking["missing_scopes"] == ["drive.readonly"]
    assert "mcp-tools auth google --account work" in lacking["hint"]


async def test_calendar_events_of_every_account_soonest_first_asked_once(
    tmp_path: Path, google: FakeGoogle, work: FakeGoogle
):
    from mcp_tools.servers.google import scopes
    from tests.servers.fake_google import FakeCalendar

    granted = [scopes.CALENDAR_READONLY, scopes.CALENDAR_EVENTS, scopes.CALENDAR_FREEBUSY]
    home, office = FakeCalendar(google), FakeCalendar(work)
    for fake, title, hour in ((home, "Dentist", "09"), (office, "Standup", "08")):
        shared = fake.add_calendar("AI Assistant Shared")
        fake.add_event(
            shared,
            {
                "summary": title,
                "start": {"dateTime": f"2026-03-02T{hour}:00:00Z"},
                "end": {"dateTime": f"2026-03-02T{hour}:30:00Z"},
            },
        )
    settings = two_accounts(tmp_path, google, work, granted, servers=["calendar"])
    del settings["gmail"]
    settings["calendar"] = {"backend": "google", "calendar": "AI Assistant Shared", "timezone": "Europe/Berlin"}
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, settings, seen=seen) as client:
        listed = _by_name((await client.list_tools()).tools)
        assert listed["calendar_events"].input_schema["properties"]["account"] == {"type": "string"}
        found = ok(
            await client.call_tool("calendar_events", {"start": "2026-03-02", "end": "2026-03-02", "account": "all"})
        )
    assert [(event["title"], event["account"]) for event in found["events"]] == [
        ("Standup", "work"),
        ("Dentist", "default"),
    ]
    [asked] = seen  # one question covering both accounts' events
    assert f"as work ({WORK}): Show details of 1 event" in asked.message
    assert "as default (me@example.com): Show details of 1 event" in asked.message
