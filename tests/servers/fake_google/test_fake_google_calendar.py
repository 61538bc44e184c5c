"""The fake Google Calendar answers as Calendar API v3 does, so the calendar tests on it can be trusted."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

import pytest

from mcp_tools.servers.google import scopes
from tests.servers.fake_google import FakeCalendar, FakeGoogle
from tests.servers.fake_google.test_fake_google import call

READ = [scopes.CALENDAR_READONLY]


def events_path(calendar_id: str, tail: str = "", **query: Any) -> str:
    path = f"calendar/v3/calendars/{quote(calendar_id)}/events{tail}"
    return path + ("?" + urlencode(query) if query else "")


@pytest.fixture
def shared(gcal: FakeCalendar) -> Any:
    return gcal.add_calendar("Shared", time_zone="Europe/Berlin")


def weekly(gcal: FakeCalendar, shared: Any, *recurrence: str) -> dict[str, Any]:
    return gcal.add_event(
        shared,
        {
            "summary": "Yoga",
            "start": {"dateTime": "2026-03-02T18:00:00+01:00", "timeZone": "Europe/Berlin"},
            "end": {"dateTime": "2026-03-02T19:00:00+01:00", "timeZone": "Europe/Berlin"},
            "recurrence": ["RRULE:FREQ=WEEKLY;COUNT=6", *recurrence],
        },
    )


def test_single_events_expand_with_exdate_and_keep_the_local_hour_across_dst(
    google: FakeGoogle, gcal: FakeCalendar, shared: Any
) -> None:
    series = weekly(gcal, shared, "EXDATE;TZID=Europe/Berlin:20260309T180000")
    token, _ = google.issue(READ)
    query = {
        "singleEvents": "true",
        "orderBy": "startTime",
        "timeMin": "2026-03-01T00:00:00Z",
        "timeMax": "2026-05-01T00:00:00Z",
        "timeZone": "Europe/Berlin",
    }
    status, page = call(google, token, "GET", events_path(shared.id, **query))
    assert status == 200
    assert [item["start"]["dateTime"] for item in page["items"]] == [
        "2026-03-02T18:00:00+01:00",
        "2026-03-16T18:00:00+01:00",
        "2026-03-23T18:00:00+01:00",
        "2026-03-30T18:00:00+02:00",
        "2026-04-06T18:00:00+02:00",
    ]
    first = page["items"][0]
    assert first["recurringEventId"] == series["id"] and first["id"] == f"{series['id']}_20260302T170000Z"
    assert first["originalStartTime"]["dateTime"] == "2026-03-02T18:00:00+01:00"
    assert "recurrence" not in first


def test_moved_and_cancelled_occurrences_replace_what_they_change(
    google: FakeGoogle, gcal: FakeCalendar, shared: Any
) -> None:
    series = weekly(gcal, shared)
    token, _ = google.issue([scopes.CALENDAR_EVENTS])
    moved = f"{series['id']}_20260309T170000Z"
    patch = {"start": {"dateTime": "2026-03-10T07:00:00Z"}, "end": {"dateTime": "2026-03-10T08:00:00Z"}}
    assert call(google, token, "PATCH", events_path(shared.id, f"/{moved}"), patch)[0] == 200
    assert call(google, token, "DELETE", events_path(shared.id, f"/{series['id']}_20260316T170000Z"))[0] == 204
    again = call(google, token, "DELETE", events_path(shared.id, f"/{series['id']}_20260316T170000Z"))
    assert again[0] == 410
    window = {"timeMin": "2026-03-01T00:00:00Z", "timeMax": "2026-03-22T00:00:00Z"}
    _, page = call(google, token, "GET", events_path(shared.id, f"/{series['id']}/instances", **window))
    assert [(item["id"], item["start"]["dateTime"]) for item in page["items"]] == [
        (f"{series['id']}_20260302T170000Z", "2026-03-02T18:00:00+01:00"),
        (moved, "2026-03-10T07:00:00Z"),
    ]
    _, deleted = call(google, token, "GET", events_path(shared.id, f"/{series['id']}/instances", showDeleted="true"))
    assert [item["status"] for item in deleted["items"]].count("cancelled") == 1
    _, found = call(
        google,
        token,
        "GET",
        events_path(shared.id, f"/{series['id']}/instances", originalStart="2026-03-09T18:00:00+01:00"),
    )
    assert [item["id"] for item in found["items"]] == [moved]


def test_ranges_overlap_and_all_day_dates_are_read_in_the_asked_zone(
    google: FakeGoogle, gcal: FakeCalendar, shared: Any
) -> None:
    gcal.add_event(shared, {"summary": "Holiday", "start": {"date": "2026-03-06"}, "end": {"date": "2026-03-07"}})
    token, _ = google.issue(READ)

    def titles(**query: str) -> list[str]:
        status, page = call(google, token, "GET", events_path(shared.id, singleEvents="true", **query))
        assert status == 200, page
        return [item["summary"] for item in page["items"]]

    evening_in_honolulu = {"timeMin": "2026-03-07T06:00:00Z", "timeMax": "2026-03-07T09:00:00Z"}
    assert titles(**evening_in_honolulu, timeZone="Pacific/Honolulu") == ["Holiday"]
    assert titles(**evening_in_honolulu, timeZone="Europe/Berlin") == []
    assert titles(timeMin="2026-03-07T00:00:00+01:00", timeMax="2026-03-08T00:00:00+01:00") == []  # end exclusive


def test_paging_ordering_and_refusals(google: FakeGoogle, gcal: FakeCalendar, shared: Any) -> None:
    for day in range(2, 7):
        start = f"2026-03-0{day}T09:00:00Z"
        gcal.add_event(shared, {"summary": f"Day {day}", "start": {"dateTime": start}, "end": {"dateTime": start}})
    token, _ = google.issue(READ)
    seen, page_token = [], None
    while True:
        query = {"singleEvents": "true", "orderBy": "startTime", "maxResults": "2"}
        if page_token is not None:
            query["pageToken"] = page_token
        _, page = call(google, token, "GET", events_path(shared.id, **query))
        seen += [item["summary"] for item in page["items"]]
        page_token = page.get("nextPageToken")
        if page_token is None:
            break
    assert seen == [f"Day {day}" for day in range(2, 7)]
    status, error = call(google, token, "GET", events_path(shared.id, orderBy="startTime"))
    assert status == 400 and "ordering is not available" in error["error"]["message"]
    status, _ = call(google, token, "GET", events_path(shared.id, timeMin="2026-03-02T09:00:00"))
    assert status == 400  # no offset
    assert call(google, token, "GET", events_path("nobody@group.calendar.google.com"))[0] == 404
    status, error = call(
        google,
        token,
        "GET",
        f"calendar/v3/calendars/{quote(shared.id)}/events?singleEvent=true",
    )
    assert status == 400 and any("singleEvent" in violation for violation in google.violations)
    google.violations.clear()  # expected here


def test_inserts_are_checked_as_google_checks_them(google: FakeGoogle, gcal: FakeCalendar, shared: Any) -> None:
    token, _ = google.issue([scopes.CALENDAR_EVENTS])
    timed = {"start": {"dateTime": "2026-03-02T10:00:00+01:00"}, "end": {"dateTime": "2026-03-02T11:00:00+01:00"}}
    repeating = {**timed, "recurrence": ["RRULE:FREQ=DAILY"]}
    status, error = call(google, token, "POST", events_path(shared.id), repeating)
    assert status == 400 and "time zone" in error["error"]["message"]
    backwards = {"start": {"date": "2026-03-03"}, "end": {"date": "2026-03-03"}}
    assert call(google, token, "POST", events_path(shared.id), backwards)[0] == 400
    assert call(google, token, "POST", events_path(shared.id), {**timed, "id": "abc"})[0] == 400  # too short
    assert call(google, token, "POST", events_path(shared.id), {**timed, "id": "abcdef1"})[0] == 200
    assert call(google, token, "POST", events_path(shared.id), {**timed, "id": "abcdef1"})[0] == 409
    read_only, _ = google.issue([scopes.CALENDAR_FREEBUSY])
    status, error = call(google, read_only, "POST", events_path(shared.id), timed)
    assert status == 403 and error["error"]["errors"][0]["reason"] == "insufficientPermissions"


def test_freebusy_gives_busy_slots_only_for_the_calendars_asked(
    google: FakeGoogle, gcal: FakeCalendar, shared: Any
) -> None:
    other = gcal.add_calendar("Other")
    weekly(gcal, shared)
    free = {"summary": "FYI", "transparency": "transparent"}
    gcal.add_event(
        shared,
        {**free, "start": {"dateTime": "2026-03-02T08:00:00Z"}, "end": {"dateTime": "2026-03-02T09:00:00Z"}},
    )
    gcal.add_event(other, {"summary": "Elsewhere", "start": {"date": "2026-03-02"}, "end": {"date": "2026-03-03"}})
    token, _ = google.issue([scopes.CALENDAR_FREEBUSY])
    body = {
        "timeMin": "2026-03-02T00:00:00Z",
        "timeMax": "2026-03-10T00:00:00Z",
        "items": [{"id": shared.id}, {"id": "nobody@group.calendar.google.com"}],
    }
    status, answer = call(google, token, "POST", "calendar/v3/freeBusy", body)
    assert status == 200
    assert answer["calendars"][shared.id] == {
        "busy": [
            {"start": "2026-03-02T17:00:00Z", "end": "2026-03-02T18:00:00Z"},
            {"start": "2026-03-09T17:00:00Z", "end": "2026-03-09T18:00:00Z"},
        ]
    }
    assert answer["calendars"]["nobody@group.calendar.google.com"]["errors"] == [
        {"domain": "global", "reason": "notFound"}
    ]
    assert other.id not in answer["calendars"] and "Yoga" not in str(answer)
