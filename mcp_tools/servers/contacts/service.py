"""The People API: the person's contacts, the people they wrote to, and their Workspace directory.

The searches themselves live in `mcp_tools.servers.google.people`, shared with gmail (which
resolves a recipient's name with them). Every method here is blocking and runs in a worker thread.
"""

from __future__ import annotations

from typing import Any

from mcp_tools.core.tooling import Environment
from mcp_tools.servers.google.config import GoogleConfig
from mcp_tools.servers.google.people import People
from mcp_tools.servers.google.service import GoogleService

SEARCH_TOOL = "contacts.search"


class ContactsService(GoogleService):
    NAMESPACE, API, VERSION = "contacts", "people", "v1"

    def __init__(self, google: GoogleConfig, env: Environment, scopes: list[str], directory: bool) -> None:
        super().__init__(google, env, scopes)
        self.directory = directory
        self.people = People(self)

    def search(self, query: str, limit: int) -> list[dict[str, Any]]:
        """Matches from the contacts, then other contacts, then the directory; one entry per address."""
        return self.people.search(SEARCH_TOOL, query, limit, directory=self.directory)
