"""search_all over the real MCP client: notes, files and forwarded mail in one ranked list,
with a slow namespace reported as partial instead of holding the answer back."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_tools.composition.app import App, build_app
from tests.harness import connect, failure, make_config, ok, text_of
from tests.servers.inbox import fixtures as mail
from tests.servers.notes.fixtures import write_vault

pytestmark = pytest.mark.anyio

VAULT = {
    "Glacier trip.md": "# Glacier trip\n\nRadar survey of the glacier tongue, with the budget in files.\n",
    "Garden.md": "# Garden\n\nTomatoes and beans.\n",
}


async def make_app(tmp_path: Path, demo_namespace: str | None = None, **extra: Any) -> App:
    settings: dict[str, Any] = {
        "notes": {"vault": str(write_vault(tmp_path / "vault", VAULT)), "watch": False},
        "inbox": {"addresses": [mail.INBOX_ADDRESS]},
        "search": {"timeout_seconds": 0.5},
        **extra,
    }
    if demo_namespace:
        settings["demo"] = {"search_delay": 30}
    app = build_app(make_config(tmp_path, settings))
    files = tmp_path / "data" / "files"
    (files / "reports").mkdir(parents=True)
    (files / "reports" / "glacier-budget.txt").write_text("Budget for the glacier radar survey: 12,000 EUR.\n")
    (files / "shopping.txt").write_text("milk, bread\n")
    if "inbox" in app.services:
        raw = mail.simple(subject="Glacier survey dates", body="The glacier survey starts on Monday.")
        await app.services["inbox"].ingest(raw, via="test")
        await app.services["inbox"].ingest(
            mail.simple(subject="Lunch", body="Pizza?", message_id="<lunch@example.org>"), via="test"
        )
    if "notes" in app.services:
        await anyio.to_thread.run_sync(app.services["notes"].reconcile)
    return app


async def test_one_query_finds_notes_files_and_mail_and_each_hit_opens(tmp_path: Path, demo_namespace: str) -> None:
    app = await make_app(tmp_path, demo_namespace)
    started = time.monotonic()
    async with connect(tmp_path, app=app, elicit=None) as client:
        result = await client.call_tool("search_all", {"query": "glacier survey", "limit": 10})
        elapsed = time.monotonic() - started
        data = ok(result)
        opened = [
            ok(await client.call_tool(hit["tool"], hit["arguments"]))
            for hit in data["results"]
            if hit["namespace"] != "demo"
        ]
    found = {(hit["namespace"], next(iter(hit["arguments"].values()))) for hit in data["results"]}
    assert ("notes", "Glacier trip.md") in found
    assert ("files", "reports/glacier-budget.txt") in found
    assert any(namespace == "inbox" for namespace, _ in found)
    assert not any(ref in ("Garden.md", "shopping.txt") for _, ref in found)
    assert [hit["score"] for hit in data["results"]] == sorted((hit["score"] for hit in data["results"]), reverse=True)
    assert data["partial"] == [{"namespace": "demo", "reason": "no answer within 0.5 seconds"}]
    assert set(data["searched"]) == {"files", "notes", "inbox", "demo"}
    assert elapsed < 5  # the slow namespace (30 s) did not hold the others back
    assert len(opened) == len([hit for hit in data["results"] if hit["namespace"] != "demo"])
    assert "Partial: demo" in text_of(result)


async def test_scope_picks_namespaces_and_names_the_searchable_ones(tmp_path: Path) -> None:
    app = await make_app(tmp_path)
    async with connect(tmp_path, app=app, elicit=None) as client:
        files_only = ok(await client.call_tool("search_all", {"query": "glacier", "scope": ["files"]}))
        wrong = failure(await client.call_tool("search_all", {"query": "glacier", "scope": ["calendar"]}))
        limited = ok(await client.call_tool("search_all", {"query": "glacier", "limit": 1}))
    assert {hit["namespace"] for hit in files_only["results"]} == {"files"}
    assert files_only["searched"] == ["files"]
    assert wrong["kind"] == "invalid_arguments" and "searchable: files, notes, inbox" in wrong["message"]
    assert len(limited["results"]) == 1


async def test_a_namespace_whose_reader_the_policy_hides_is_not_searched(tmp_path: Path) -> None:
    app = await make_app(tmp_path, policy={"disabled": ["inbox.read"]})
    async with connect(tmp_path, app=app, elicit=None) as client:
        data = ok(await client.call_tool("search_all", {"query": "glacier"}))
    assert "inbox" not in data["searched"]
    assert all(hit["namespace"] != "inbox" for hit in data["results"])
    assert app.status_lines("search") == ["searches: files, notes (each within 0.5 s)"]


def test_search_alone_cannot_start(tmp_path: Path) -> None:
    from mcp_tools.core.config import ConfigError

    with pytest.raises(ConfigError, match="no enabled namespace holds searchable documents"):
        build_app(make_config(tmp_path, {"server": {"servers": ["search"]}}, {}))
