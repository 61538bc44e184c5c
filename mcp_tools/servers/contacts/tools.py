"""contacts.search: find people by name, address or phone (low risk: read-only, little data)."""

from __future__ import annotations

from typing import Any

from mcp_tools.core.tooling import CallContext, Risk, ToolSpec, UpstreamScopes
from mcp_tools.servers.contacts.models import Contact, SearchArgs, SearchResult
from mcp_tools.servers.contacts.service import SEARCH_TOOL, ContactsService
from mcp_tools.servers.google.scopes import CONTACTS_OTHER_READONLY, CONTACTS_READONLY, DIRECTORY_READONLY


async def search(service: ContactsService, args: SearchArgs, ctx: CallContext) -> SearchResult:
    found = await service.run(SEARCH_TOOL, service.search, args.query, args.limit)
    return SearchResult(contacts=[Contact(**item) for item in found])


TOOLS: list[ToolSpec[Any, Any, Any]] = [
    ToolSpec(
        name=SEARCH_TOOL,
        # the person's contacts, the people they wrote to ("other contacts") and, on Workspace, the directory
        scopes=UpstreamScopes(
            (CONTACTS_READONLY, CONTACTS_OTHER_READONLY, DIRECTORY_READONLY),
            ("people.people.searchContacts", "people.otherContacts.search", "people.people.searchDirectoryPeople"),
        ),
        title="Find a contact",
        description="People in Google contacts (and the Workspace directory) by name, address or phone.",
        input_model=SearchArgs,
        output_model=SearchResult,
        handler=search,
        risk=Risk.LOW,
        describe=lambda args: f"Search contacts for {args.query!r}",
        read_only=True,
        open_world=True,
        idempotent=True,
    ),
]
