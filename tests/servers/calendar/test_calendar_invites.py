"""Guests, Meet links and answers to invitations: on Google through the fake Calendar API; refused on CalDAV."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from tests.harness import connect, failure, ok
from tests.servers.calendar.fixtures import (  # noqa: F401  (fixtures)
    GoogleUnderTest,
    World,
    person_event,
    radicale_server,
    world_fixture,
)
from tests.servers.fake_google import FakeCalendar, FakeGoogle

pytestmark = pytest.mark.anyio
WHEN = {"start": "2026-03-03T10:00", "end": "2026-03-03T11:00"}
LOWERED = {
    "rules": [{"match": "calendar.create_event", "risk": "low"}, {"match": "calendar.update_event", "risk": "low"}]
}


@pytest.fixture
def cal(tmp_path: Path, google: FakeGoogle, gcal: FakeCalendar) -> GoogleUnderTest:
    return GoogleUnderTest(tmp_path, google, gcal)


async def test_inviting_asks_first_and_the_question_lists_every_address(tmp_path, cal: GoogleUnderTest) -> None:
    guests = [f"guest{n}@example.org" for n in range(19)] + ["eve\u202e@example.net"]
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, {**cal.settings(), "policy": LOWERED}, seen=seen) as client:
        made = ok(await client.call_tool("calendar_create_event", {"title": "Review", **WHEN, "attendees": guests}))
    (asked,) = seen
    for address in guests[:19]:
        assert address in asked.message
    assert "eve\u202e" not in asked.message and "eve\\u202e@example.net" in asked.message  # escaped, not hidden
    assert "invite 20" in asked.message and "Google emails every guest" in asked.message
    stored = cal.fake.stored(cal.shared, made["event"]["uid"])
    assert [guest["email"] for guest in stored["attendees"]] == guests
    assert sorted(address for address, _ in cal.fake.mailed) == sorted(guests)  # sendUpdates=all
    assert "attendees" not in json.dumps(made) and "guest0" not in json.dumps(made)


async def test_without_guests_the_configured_risk_stands(tmp_path, cal: GoogleUnderTest) -> None:
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, {**cal.settings(), "policy": LOWERED}, elicit="decline", seen=seen) as client:
        alone = ok(await client.call_tool("calendar_create_event", {"title": "Focus", **WHEN}))
        invited = failure(
            await client.call_tool("calendar_create_event", {"title": "Sync", **WHEN, "attendees": ["bob@example.org"]})
        )
        mailed = failure(
            await client.call_tool("calendar_update_event", {"uid": alone["event"]["uid"], "notify": "all"})
        )
        moved = ok(await client.call_tool("calendar_update_event", {"uid": alone["event"]["uid"], "title": "Deep"}))
    assert invited["kind"] == mailed["kind"] == "declined_by_user"
    assert len(seen) == 2 and "bob@example.org" in seen[0].message
    assert moved["event"]["title"] == "Deep" and cal.fake.mailed == []
    assert len(cal.fake.calendars[cal.shared.id].events) == 1  # the declined invitation made nothing


async def test_a_meet_link_is_asked_for_through_conference_data(tmp_path, google: FakeGoogle, cal) -> None:
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        made = ok(await client.call_tool("calendar_create_event", {"title": "Call", **WHEN, "meet": True}))
        plain = ok(await client.call_tool("calendar_create_event", {"title": "Solo", **WHEN}))
        later = ok(await client.call_tool("calendar_update_event", {"uid": plain["event"]["uid"], "meet": True}))
    assert made["meet_link"].startswith("https://meet.google.com/")
    stored = cal.fake.stored(cal.shared, made["event"]["uid"])
    assert stored["conferenceData"]["conferenceSolution"]["key"]["type"] == "hangoutsMeet"
    assert stored["conferenceData"]["createRequest"]["status"]["statusCode"] == "success"
    assert plain["meet_link"] is None and later["meet_link"].startswith("https://meet.google.com/")
    assert cal.fake.mailed == []  # no guests, nobody mailed


@pytest.mark.parametrize(("notify", "mailed"), [("externalOnly", ["out@example.org"]), ("none", [])])
async def test_notify_says_whom_google_mails(tmp_path, google: FakeGoogle, cal, notify: str, mailed: list) -> None:
    colleague = "colleague@" + google.account.rpartition("@")[2]
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, cal.settings(), seen=seen) as client:
        arguments = {"title": "Plan", **WHEN, "attendees": [colleague, "out@example.org"], "notify": notify}
        ok(await client.call_tool("calendar_create_event", arguments))
    assert [address for address, _ in cal.fake.mailed] == mailed
    wording = {"externalOnly": "outside your domain", "none": "no email to guests"}[notify]
    assert wording in seen[0].message


async def test_changing_the_guest_list_keeps_the_answers_already_given(tmp_path, cal: GoogleUnderTest) -> None:
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        made = ok(
            await client.call_tool(
                "calendar_create_event", {"title": "Team", **WHEN, "attendees": ["a@example.org"], "notify": "none"}
            )
        )
        uid = made["event"]["uid"]
        cal.fake.stored(cal.shared, uid)["attendees"][0]["responseStatus"] = "accepted"
        ok(
            await client.call_tool(
                "calendar_update_event", {"uid": uid, "attendees": ["a@example.org", "b@example.org"]}
            )
        )
    guests = {guest["email"]: guest["responseStatus"] for guest in cal.fake.stored(cal.shared, uid)["attendees"]}
    assert guests == {"a@example.org": "accepted", "b@example.org": "needsAction"}


@pytest.mark.parametrize("address", ["not-an-address", "a@b@c", "x y@example.org", "a@example.org\nBcc: b@x"])
async def test_an_address_that_is_none_is_refused_before_asking(tmp_path, cal, address: str) -> None:
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, cal.settings(), seen=seen) as client:
        error = failure(await client.call_tool("calendar_create_event", {"title": "X", **WHEN, "attendees": [address]}))
    assert error["kind"] == "invalid_arguments" and "attendees" in error["message"] and seen == []


async def test_twenty_one_guests_are_too_many_to_show(tmp_path, cal) -> None:
    guests = [f"g{n}@example.org" for n in range(21)]
    async with connect(tmp_path, cal.settings(), elicit=None) as client:
        error = failure(await client.call_tool("calendar_create_event", {"title": "X", **WHEN, "attendees": guests}))
    assert error["kind"] == "invalid_arguments" and "at most 20" in error["message"]


# --- answering invitations ------------------------------------------------------------------------


def invitation(cal: GoogleUnderTest, account: str) -> str:
    event = {
        "summary": "Board meeting",
        "start": {"dateTime": "2026-03-04T09:00:00Z"},
        "end": {"dateTime": "2026-03-04T10:00:00Z"},
        "organizer": {"email": "boss@example.org"},
        "attendees": [
            {"email": "boss@example.org", "organizer": True, "responseStatus": "accepted"},
            {"email": account, "self": True, "responseStatus": "needsAction"},
            {"email": "other@example.org", "responseStatus": "declined", "comment": "away"},
        ],
    }
    return str(cal.fake.add_event(cal.shared, event)["id"])


async def test_respond_answers_as_the_account_and_touches_no_other_guest(tmp_path, google: FakeGoogle, cal) -> None:
    uid = invitation(cal, google.account)
    before = json.loads(json.dumps(cal.fake.stored(cal.shared, uid)["attendees"]))
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, cal.settings(), elicit=None, seen=seen) as client:
        answered = ok(
            await client.call_tool("calendar_respond", {"uid": uid, "response": "tentative", "note": "may be late"})
        )
    assert answered == {"uid": uid, "response": "tentative"} and seen == []  # medium: done, then told
    after = cal.fake.stored(cal.shared, uid)["attendees"]
    assert after[1] == {**before[1], "responseStatus": "tentative", "comment": "may be late"}
    assert [after[0], after[2]] == [before[0], before[2]]
    assert cal.fake.stored(cal.shared, uid)["summary"] == "Board meeting"


async def test_respond_to_an_event_without_the_account_is_refused(tmp_path, cal) -> None:
    async with connect(tmp_path, cal.settings(), elicit="accept") as client:
        mine = ok(await client.call_tool("calendar_create_event", {"title": "Solo", **WHEN}))
        error = failure(
            await client.call_tool("calendar_respond", {"uid": mine["event"]["uid"], "response": "accepted"})
        )
        missing = failure(await client.call_tool("calendar_respond", {"uid": "abcdef123", "response": "declined"}))
    assert error["kind"] == "invalid_arguments" and "does not invite" in error["message"]
    assert missing["kind"] == "not_found"


async def test_the_fake_refuses_a_guest_changing_other_guests(google: FakeGoogle, cal) -> None:
    from tests.servers.fake_google.test_fake_google import call
    from tests.servers.fake_google.test_fake_google_calendar import events_path

    uid = invitation(cal, google.account)
    token, _ = google.issue(["https://www.googleapis.com/auth/calendar.events"])
    guests = cal.fake.stored(cal.shared, uid)["attendees"]
    changed = [guests[0], guests[1], {**guests[2], "responseStatus": "accepted"}]
    status, body = call(google, token, "PATCH", events_path(cal.shared.id, f"/{uid}"), {"attendees": changed})
    assert status == 403 and body["error"]["errors"][0]["reason"] == "forbiddenForNonOrganizer"


@pytest.mark.parametrize(
    ("query", "conference", "words"),
    [
        (
            "conferenceDataVersion=1",
            {"createRequest": {"conferenceSolutionKey": {"type": "hangoutsMeet"}}},
            "requestId",
        ),
        (
            "conferenceDataVersion=1",
            {"createRequest": {"requestId": "r1", "conferenceSolutionKey": {"type": "zoom"}}},
            "type",
        ),
        ("conferenceDataVersion=2", {}, "conferenceDataVersion"),
        ("sendUpdates=everyone", {}, "sendUpdates"),
    ],
)
async def test_the_fake_refuses_malformed_conference_and_mail_requests(
    google: FakeGoogle, cal, query: str, conference: dict[str, Any], words: str
) -> None:
    from tests.servers.fake_google.test_fake_google import call
    from tests.servers.fake_google.test_fake_google_calendar import events_path

    token, _ = google.issue(["https://www.googleapis.com/auth/calendar.events"])
    body = {**json.loads(json.dumps(WHEN_BODY)), **({"conferenceData": conference} if conference else {})}
    status, answer = call(google, token, "POST", events_path(cal.shared.id) + "?" + query, body)
    assert status == 400 and words in json.dumps(answer)
    google.violations.clear()  # the query checks record what they refuse; expected here


async def test_version_zero_ignores_conference_data_as_google_does(google: FakeGoogle, cal) -> None:
    from tests.servers.fake_google.test_fake_google import call
    from tests.servers.fake_google.test_fake_google_calendar import events_path

    token, _ = google.issue(["https://www.googleapis.com/auth/calendar.events"])
    request = {"createRequest": {"requestId": "r1", "conferenceSolutionKey": {"type": "hangoutsMeet"}}}
    status, made = call(google, token, "POST", events_path(cal.shared.id), {**WHEN_BODY, "conferenceData": request})
    assert status == 200 and "conferenceData" not in made and "hangoutLink" not in made


WHEN_BODY = {"start": {"dateTime": "2026-03-03T10:00:00Z"}, "end": {"dateTime": "2026-03-03T11:00:00Z"}}


# --- CalDAV: one shared calendar, no guests -----------------------------------------------------------


@pytest.mark.parametrize(
    "extra",
    [{"attendees": ["bob@example.org"]}, {"meet": True}, {"notify": "all"}],
    ids=["attendees", "meet", "notify"],
)
async def test_caldav_does_not_invite_and_says_why(tmp_path, world: World, extra: dict[str, Any]) -> None:
    world.add_person_event(world.shared, person_event("Theirs", *_hour(), uid="theirs-1"))
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, world.settings(), seen=seen) as client:
        created = failure(await client.call_tool("calendar_create_event", {"title": "X", **WHEN, **extra}))
        updated = failure(await client.call_tool("calendar_update_event", {"uid": "theirs-1", **extra}))
        answered = failure(await client.call_tool("calendar_respond", {"uid": "theirs-1", "response": "accepted"}))
    for error in (created, updated):
        assert error["kind"] == "invalid_arguments" and "does not invite" in error["message"]
        assert "shared with the assistant" in error["message"] and "google" in error["hint"]
    assert answered["kind"] == "invalid_arguments" and "does not answer invitations" in answered["message"]
    assert seen == []  # refused before anyone was asked


def _hour() -> tuple[Any, Any]:
    import datetime as dt

    start = dt.datetime(2026, 3, 3, 8, tzinfo=dt.UTC)
    return start, start + dt.timedelta(hours=1)
