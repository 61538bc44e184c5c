"""The People API searches the Google namespaces share: contacts, other contacts, the directory.

`contacts.search` lists what they find; gmail resolves a recipient's name with them. Every method
is blocking (googleapiclient is synchronous) and runs in a worker thread. Google answers searches
from a cache that a search with an empty query warms, so each source is warmed once before its
first search, as the People API documentation asks.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from mcp_tools.core.tooling import ToolFailure

if TYPE_CHECKING:
    from mcp_tools.servers.google.service import GoogleService

CONTACT_MASK = "names,emailAddresses,phoneNumbers,organizations"
OTHER_MASK = "names,emailAddresses,phoneNumbers"  # otherContacts hold no organisations
DIRECTORY_SOURCES = ["DIRECTORY_SOURCE_TYPE_DOMAIN_PROFILE", "DIRECTORY_SOURCE_TYPE_DOMAIN_CONTACT"]
MAX_TEXT, MAX_PHONE, MAX_VALUES = 120, 40, 5
MAX_PAGE = 30  # searchContacts and otherContacts.search return at most 30


def contact_view(person: dict[str, Any]) -> dict[str, Any]:
    """Name, addresses, phones and organisation: nothing else of the person leaves here.

    Bounded so that a page of 30 stays within the result budget: a few addresses and phones
    each, values of a sane length (an address longer than any real one is left out).
    """
    names = person.get("names") or []
    organizations = person.get("organizations") or []
    emails = [str(item["value"]) for item in person.get("emailAddresses") or [] if item.get("value")]
    phones = [str(item["value"]) for item in person.get("phoneNumbers") or [] if item.get("value")]
    organization = str(organizations[0].get("name") or "") if organizations else ""
    return {
        "name": str(names[0].get("displayName", ""))[:MAX_TEXT] if names else "",
        "emails": [address for address in dict.fromkeys(emails) if len(address) <= MAX_TEXT][:MAX_VALUES],
        "phones": [phone for phone in phones if len(phone) <= MAX_PHONE][:MAX_VALUES],
        "organization": organization[:MAX_TEXT] or None,
    }


class People:
    """The searches, through one namespace's service (its client, its tool names for errors)."""

    def __init__(self, service: GoogleService) -> None:
        self.service = service
        self._warmed: set[str] = set()
        self._warm_lock = threading.Lock()

    def _call(self, tool: str, build: Any) -> Any:
        return self.service.call(tool, build, "people", "v1")

    def _warm(self, tool: str, source: str, request: Any) -> None:
        with self._warm_lock:
            if source in self._warmed:
                return
            self._call(tool, request)
            self._warmed.add(source)

    def search(
        self, tool: str, query: str, limit: int, *, other: bool = True, directory: bool = True
    ) -> list[dict[str, Any]]:
        """Matches from the contacts, then other contacts, then the directory; one entry per address."""
        size = min(limit, MAX_PAGE)

        def contacts(text: str) -> Any:
            return lambda s: s.people().searchContacts(query=text, readMask=CONTACT_MASK, pageSize=size)

        def others(text: str) -> Any:
            return lambda s: s.otherContacts().search(query=text, readMask=OTHER_MASK, pageSize=size)

        self._warm(tool, "contacts", contacts(""))
        if other:
            self._warm(tool, "other", others(""))
        people = [item.get("person") or {} for item in self._call(tool, contacts(query)).get("results") or []]
        if other:
            people += [item.get("person") or {} for item in self._call(tool, others(query)).get("results") or []]
        if directory:
            people += self._directory(tool, query, size)
        found: list[dict[str, Any]] = []
        seen: set[str] = set()
        for person in people:
            view = contact_view(person)
            keys = {address.lower() for address in view["emails"]} or {view["name"] + "|" + ",".join(view["phones"])}
            if keys & seen:
                continue
            seen |= keys
            found.append(view)
            if len(found) == limit:
                break
        return found

    def _directory(self, tool: str, query: str, size: int) -> list[dict[str, Any]]:
        """Directory matches; an account outside Workspace has no directory, which is no error."""
        try:
            answer = self._call(
                tool,
                lambda s: s.people().searchDirectoryPeople(
                    query=query, readMask=CONTACT_MASK, sources=DIRECTORY_SOURCES, pageSize=size
                ),
            )
        except ToolFailure as failure:
            if failure.kind in ("permission_denied", "invalid_arguments", "upstream_error"):
                return []
            raise
        return list(answer.get("people") or [])
