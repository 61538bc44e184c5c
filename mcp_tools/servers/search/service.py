"""What `search.all` searches: the search hooks of the enabled namespaces, bound to their services."""

from __future__ import annotations

from mcp_tools.core.tooling import SearchSource
from mcp_tools.servers.search.config import SearchConfig


class SearchService:
    def __init__(self, config: SearchConfig, sources: dict[str, SearchSource]) -> None:
        self.config = config
        self.sources = sources  # filled by the core as namespaces start; read at call time
