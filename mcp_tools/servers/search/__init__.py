"""The `search` namespace: one query over every enabled namespace that holds documents.

It knows no other namespace: the core hands it the search hooks of the enabled ones
(`Environment.search_sources`), each bound to its service. Each source answers from its own
index within a time limit; a slow or failing one is reported as partial and never holds the
others back.
"""

from __future__ import annotations

from mcp_tools.core.tooling import Environment, Namespace, NotConfigured
from mcp_tools.servers.search.config import SearchConfig
from mcp_tools.servers.search.service import SearchService
from mcp_tools.servers.search.tools import TOOLS


def create(config: SearchConfig, env: Environment) -> SearchService:
    if not config.enabled:
        raise NotConfigured("set [search] enabled = true")
    if not env.search_sources:
        raise NotConfigured("no enabled namespace holds searchable documents (files, notes, inbox)")
    return SearchService(config, env.search_sources)


NAMESPACE: Namespace[SearchService] = Namespace(
    name="search",
    description="One search over every enabled namespace that holds documents.",
    config_model=SearchConfig,
    create=create,
    tools=TOOLS,
    status=lambda service: f"searches: {', '.join(service.sources)} (each within {service.config.timeout_seconds:g} s)",
)
