"""web_search against a Tavily that answers with megabytes, with the largest arguments the schema
takes: each result fits the result budget, and every part of it is held to its documented size."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.budgets import assert_fits, structured, text
from tests.harness import connect
from tests.servers.fake_tavily import VALID_KEY, FakeTavily, Reply

pytestmark = pytest.mark.anyio
HUGE = "Words from a very long page about packaging, repeated at length. " * 16_000  # ~1 MB
LARGEST = {
    "query": "python packaging " * 23,  # 391 of the 400 characters
    "max_results": 10,
    "search_depth": "advanced",
    "topic": "news",
    "time_range": "year",
    "include_domains": [f"{'d' * 60}.{'e' * 60}.{'f' * 60}.example{n}.org" for n in range(20)],
}


def huge_result(number: int, url_length: int = 2_000) -> dict[str, Any]:
    path = "p" * (url_length - len(f"https://example{number}.org/"))
    return {
        "title": f"Result {number} " + HUGE[:200_000],
        "url": f"https://example{number}.org/{path}",
        "content": HUGE,
        "score": 0.9,
        "raw_content": HUGE,
        "published_date": HUGE[:50_000],
    }


@pytest.fixture
def fake() -> Iterator[FakeTavily]:
    with FakeTavily() as server:
        server.answer = HUGE
        server.results = [huge_result(number) for number in range(20)]
        yield server


def settings(fake: FakeTavily) -> dict[str, Any]:
    return {"server": {"servers": ["web"]}, "web": {"api_key": VALID_KEY, "api_base_url": fake.url}}


async def test_megabytes_from_tavily_fit_the_budget(tmp_path: Path, fake: FakeTavily) -> None:
    async with connect(tmp_path, settings(fake), elicit=None) as client:
        result = await client.call_tool("web_search", LARGEST)
    data = structured(result)
    assert_fits(result)
    assert len(data["results"]) == 10
    assert len(data["answer"]) <= 4_000 and data["answer"].endswith("…")
    for item in data["results"]:
        assert len(item["title"]) <= 300 and len(item["content"]) <= 2_000 and item["content"].endswith("…")
        assert len(item["published_date"] or "") <= 64 and len(item["url"]) == 2_000
        assert HUGE[:5_000] not in text(result)  # no raw page content, whatever the API sent


async def test_raw_content_and_extra_fields_sent_unasked_stay_out(tmp_path: Path, fake: FakeTavily) -> None:
    body = {
        "query": "q",
        "answer": HUGE,
        "follow_up_questions": [HUGE] * 3,
        "images": [{"url": "https://example.org/i.png", "description": HUGE}],
        "results": [huge_result(number) for number in range(20)],
        "response_time": 1.0,
    }
    fake.push(Reply(body=body))
    async with connect(tmp_path, settings(fake), elicit=None) as client:
        result = await client.call_tool("web_search", LARGEST)
    data = structured(result)
    assert_fits(result)
    assert set(data) == {"query", "answer", "results"} and len(data["results"]) == 10
    assert all(set(item) == {"title", "url", "content", "score", "published_date"} for item in data["results"])


async def test_a_megabyte_url_is_dropped_not_passed_on(tmp_path: Path, fake: FakeTavily) -> None:
    fake.results = [huge_result(0, url_length=1_000_000), *(huge_result(number) for number in range(1, 20))]
    async with connect(tmp_path, settings(fake), elicit=None) as client:
        result = await client.call_tool("web_search", LARGEST)
    data = structured(result)
    assert_fits(result)
    assert [item["url"].split("/")[2] for item in data["results"]][:2] == ["example1.org", "example2.org"]
    assert all(len(item["url"]) <= 2_048 for item in data["results"])
