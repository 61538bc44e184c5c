"""A fake of the People API's three searches: contacts, other contacts and the Workspace directory.

Requests are checked as Google documents them: `readMask` is required and names only fields the
source holds (other contacts: names, emailAddresses, phoneNumbers, photos, metadata); `pageSize`
is at most 30 (directory: 500); the directory needs `sources`. Google answers contact searches
from a cache that an empty query warms: until the warm-up, a search finds nothing, and an empty
query itself returns nothing. A person who is not in a Workspace domain has no directory.
"""

from __future__ import annotations

import secrets
from typing import Any

from tests.servers.fake_google.discovery import Discovery
from tests.servers.fake_google.server import ApiError, FakeGoogle, Token

PERSON_FIELDS = frozenset(
    {
        "addresses",
        "ageRanges",
        "biographies",
        "birthdays",
        "calendarUrls",
        "clientData",
        "coverPhotos",
        "emailAddresses",
        "events",
        "externalIds",
        "genders",
        "imClients",
        "interests",
        "locales",
        "locations",
        "memberships",
        "metadata",
        "miscKeywords",
        "names",
        "nicknames",
        "occupations",
        "organizations",
        "phoneNumbers",
        "photos",
        "relations",
        "sipAddresses",
        "skills",
        "urls",
        "userDefined",
    }
)
OTHER_FIELDS = frozenset({"emailAddresses", "metadata", "names", "phoneNumbers", "photos"})


def person(name: str, emails: list[str], phones: list[str] = (), organization: str | None = None) -> dict[str, Any]:  # type: ignore[assignment]
    """A person resource as Google returns it with every field, notes and birthday included."""
    found: dict[str, Any] = {
        "resourceName": f"people/c{secrets.randbelow(10**18)}",
        "etag": "%EgUBAi43PRoEAQIFByIMR0xhSk1XT0hNU0E9",
        "names": [{"displayName": name, "givenName": name.split()[0]}],
        "emailAddresses": [{"value": address, "type": "work"} for address in emails],
        "phoneNumbers": [{"value": phone, "canonicalForm": phone.replace(" ", "")} for phone in phones],
        "biographies": [{"value": f"private notes about {name}"}],
        "birthdays": [{"date": {"year": 1980, "month": 1, "day": 2}}],
    }
    if organization:
        found["organizations"] = [{"name": organization, "title": "Secret title"}]
    return found


class PeopleDiscovery(Discovery):
    """Methods at a fixed path (`v1/people:searchContacts`) before those under `v1/{+resourceName}`,
    whose resource name Google matches by pattern (`contactGroups/...`), not by any text."""

    def __init__(self) -> None:
        super().__init__("people", "v1")
        self.methods.sort(key=lambda method: "?P<" in method.pattern.pattern)


class FakePeople:
    def __init__(self, google: FakeGoogle, workspace: bool = True) -> None:
        self.google = google
        self.contacts: list[dict[str, Any]] = []
        self.other: list[dict[str, Any]] = []
        self.directory: list[dict[str, Any]] = []
        self.workspace = workspace
        self.warmed: set[str] = set()
        self.queries: list[tuple[str, str]] = []  # (method id, query)
        discovery = PeopleDiscovery()
        google.apis["/v1/people"] = (discovery, self)
        google.apis["/v1/otherContacts"] = (discovery, self)

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
        query = str(params.get("query", ""))
        self.queries.append((method_id, query))
        mask = str(params.get("readMask", ""))
        if not mask:
            raise ApiError(400, "Request must set a readMask.", "badRequest")
        fields = set(mask.split(","))
        if method_id == "people.people.searchContacts":
            return self._cached("contacts", self.contacts, query, fields, PERSON_FIELDS, params, 30)
        if method_id == "people.otherContacts.search":
            return self._cached("other", self.other, query, fields, OTHER_FIELDS, params, 30)
        if method_id == "people.people.searchDirectoryPeople":
            self._check_mask(fields, PERSON_FIELDS)
            if not params.get("sources"):
                raise ApiError(400, "Request must specify sources.", "badRequest")
            self._check_size(params, 500)
            if not self.workspace:
                raise ApiError(400, "Must be a G Suite domain user.", "failedPrecondition")
            return {"people": self._matches(self.directory, query, fields)}
        raise ApiError(501, f"{method_id} is not implemented by the fake")

    @staticmethod
    def _check_mask(fields: set[str], allowed: frozenset[str]) -> None:
        unknown = sorted(fields - allowed)
        if unknown:
            raise ApiError(400, f"Invalid readMask path: {unknown[0]}", "badRequest")

    @staticmethod
    def _check_size(params: dict[str, Any], most: int) -> None:
        size = int(params.get("pageSize", 10))
        if not 0 <= size <= most:
            raise ApiError(400, f"pageSize must be between 0 and {most}.", "badRequest")

    def _cached(
        self,
        source: str,
        people: list[dict[str, Any]],
        query: str,
        fields: set[str],
        allowed: frozenset[str],
        params: dict[str, Any],
        most: int,
    ) -> dict[str, Any]:
        self._check_mask(fields, allowed)
        self._check_size(params, most)
        if not query:
            self.warmed.add(source)
            return {}
        if source not in self.warmed:
            return {}  # the cache was never warmed: Google finds nothing yet
        size = int(params.get("pageSize", 10)) or 10
        return {"results": [{"person": item} for item in self._matches(people, query, fields)[:size]]}

    @staticmethod
    def _matches(people: list[dict[str, Any]], query: str, fields: set[str]) -> list[dict[str, Any]]:
        """People whose name (or a word of it) starts with the query, or whose address or phone does."""
        wanted = query.lower()
        found = []
        for item in people:
            names = [name["displayName"].lower() for name in item.get("names", [])]
            words = names + [word for name in names for word in name.split()]
            values = [
                entry["value"].lower() for key in ("emailAddresses", "phoneNumbers") for entry in item.get(key, [])
            ]
            if any(word.startswith(wanted) for word in words) or any(value.startswith(wanted) for value in values):
                found.append(
                    {key: value for key, value in item.items() if key in fields or key in ("resourceName", "etag")}
                )
        return found
