"""web_search through a real MCP client, with the policy layer in front, against the fake Tavily."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.composition.app import build_app
from mcp_tools.core.config import ConfigError
from mcp_tools.servers import CATALOG
from tests.harness import annotation, connect, failure, make_config, ok, text_of
from tests.servers.fake_tavily import VALID_KEY, FakeTavily, Reply


@pytest.fixture
def fake() -> Iterator[FakeTavily]:
    with FakeTavily() as server:
        yield server


def settings(fake: FakeTavily, **web: Any) -> dict[str, Any]:
    return {"server": {"servers": ["web"]}, "web": {"api_key": VALID_KEY, "api_base_url": fake.url, **web}}


@pytest.mark.anyio
async def test_tool_listing(tmp_path: Path, fake: FakeTavily) -> None:
    async with connect(tmp_path, settings(fake)) as client:
        listing = await client.list_tools()
    (tool,) = [tool for tool in listing.tools if tool.name == "web_search"]
    assert tool.annotations is not None
    assert annotation(tool, "read_only_hint") is True and annotation(tool, "open_world_hint") is True
    properties = tool.input_schema["properties"]
    assert set(properties) == {
        "query",
        "max_results",
        "search_depth",
        "topic",
        "time_range",
        "include_domains",
        "exclude_domains",
    }
    assert tool.input_schema.get("additionalProperties") is False
    assert tool.output_schema is not None and "results" in tool.output_schema["properties"]
    assert "untrusted" in (tool.description or "")


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_search_over_mcp_without_asking(tmp_path: Path, fake: FakeTavily, mode: str) -> None:
    async with connect(tmp_path, settings(fake), elicit=None, mode=mode) as client:
        result = await client.call_tool("web_search", {"query": "python packaging", "topic": "news"})
    data = ok(result)
    assert data["answer"] == fake.answer
    assert len(data["results"]) == 5
    assert data["results"][0]["published_date"] == "Tue, 17 Nov 2026 09:30:00 GMT"
    text = text_of(result)
    assert "UNTRUSTED WEB CONTENT" in text and "<<<web-content " in text
    assert "https://example1.org/packaging" in text
    assert fake.requests[-1].body["include_raw_content"] is False


@pytest.mark.anyio
async def test_key_from_environment(tmp_path: Path, fake: FakeTavily) -> None:
    config = make_config(
        tmp_path,
        {"server": {"servers": ["web"]}, "web": {"api_base_url": fake.url}},
        environ={"TAVILY_API_KEY": VALID_KEY},
    )
    async with connect(tmp_path, app=build_app(config)) as client:
        data = ok(await client.call_tool("web_search", {"query": "q", "max_results": 1}))
    assert len(data["results"]) == 1


def test_without_a_key_the_namespace_is_off(tmp_path: Path, fake: FakeTavily) -> None:
    with pytest.raises(ConfigError, match=r"namespace web cannot start: set TAVILY_API_KEY or \[web\] api_key"):
        build_app(make_config(tmp_path, {"server": {"servers": ["web"]}, "web": {"api_base_url": fake.url}}))
    saved = dict(CATALOG)  # restored in order: the search namespace must stay last
    try:
        for other in [name for name in CATALOG if name != "web"]:
            del CATALOG[other]
        app = build_app(make_config(tmp_path / "other", {"web": {"api_base_url": fake.url}}))
    finally:
        CATALOG.clear()
        CATALOG.update(saved)
    assert "web_search" not in app.tools
    (status,) = [status for status in app.statuses if status.name == "web"]
    assert not status.enabled and status.needs_account
    assert status.reason == "set TAVILY_API_KEY or [web] api_key"
    assert fake.requests == []


@pytest.mark.anyio
async def test_bad_key_is_a_clear_error_that_never_shows_the_key(tmp_path: Path, fake: FakeTavily) -> None:
    wrong = "tvly-wrong-0123456789"
    async with connect(tmp_path, settings(fake, api_key=wrong)) as client:
        result = await client.call_tool("web_search", {"query": "q"})
    error = failure(result)
    assert error["kind"] == "not_configured" and "TAVILY_API_KEY" in error["hint"]
    assert wrong not in str(result.model_dump())


@pytest.mark.anyio
async def test_quota_and_malformed_requests(tmp_path: Path, fake: FakeTavily) -> None:
    fake.push(Reply(432))
    async with connect(tmp_path, settings(fake)) as client:
        spent = failure(await client.call_tool("web_search", {"query": "q"}))
        too_many = failure(await client.call_tool("web_search", {"query": "q", "max_results": 11}))
        raw = failure(await client.call_tool("web_search", {"query": "q", "include_raw_content": True}))
        url = failure(await client.call_tool("web_search", {"query": "q", "include_domains": ["http://a.com"]}))
    assert spent["kind"] == "upstream_error" and "plan limit" in spent["message"]
    assert too_many["kind"] == "invalid_arguments" and "max_results" in too_many["message"]
    assert raw["kind"] == "invalid_arguments" and "include_raw_content" in raw["message"]
    assert url["kind"] == "invalid_arguments" and "bare domain" in url["message"]
    assert len(fake.requests) == 1


@pytest.mark.anyio
async def test_timeout_over_mcp(tmp_path: Path, fake: FakeTavily) -> None:
    fake.push(Reply(delay=3))
    async with connect(tmp_path, settings(fake, timeout_seconds=0.3)) as client:
        error = failure(await client.call_tool("web_search", {"query": "q"}))
    assert error["kind"] == "timeout"


@pytest.mark.anyio
async def test_policy_can_make_searches_ask_first(tmp_path: Path, fake: FakeTavily) -> None:
    strict = {**settings(fake), "policy": {"rules": [{"match": "web.search", "risk": "high"}]}}
    async with connect(tmp_path, strict, elicit=None) as client:
        error = failure(await client.call_tool("web_search", {"query": "my private question"}))
    assert error["kind"] == "approval_required"
    assert fake.requests == []
