"""The arguments and result of `web.search`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from mcp_tools.core.tooling import Arguments, Output
from mcp_tools.servers.web.config import MAX_RESULTS_CAP, SearchDepth

MAX_QUERY_CHARS = 400  # the Tavily API refuses longer queries
MAX_DOMAINS = 20
Topic = Literal["general", "news", "finance"]
TimeRange = Literal["day", "week", "month", "year"]
Domain = Annotated[str, Field(max_length=253)]


class SearchArgs(Arguments):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    max_results: int | None = Field(default=None, ge=1, le=MAX_RESULTS_CAP)
    search_depth: SearchDepth | None = Field(default=None, description="advanced: slower, costlier")
    topic: Topic | None = None
    time_range: TimeRange | None = None
    include_domains: list[Domain] = Field(default_factory=list, max_length=MAX_DOMAINS)
    exclude_domains: list[Domain] = Field(default_factory=list, max_length=MAX_DOMAINS)


class SearchResult(Output):
    title: str
    url: str
    content: str  # the snippet
    score: float | None = None
    published_date: str | None = None


class SearchOutput(Output):
    query: str
    answer: str | None  # the search engine's summary
    results: list[SearchResult]
