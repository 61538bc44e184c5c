"""search_all over many large hits in notes, files and mail, with the largest limit its schema
takes: the result fits the result budget."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from mcp_tools.composition.app import build_app
from tests.budgets import assert_fits, says_more, structured
from tests.harness import connect, make_config
from tests.servers.inbox import fixtures as mail
from tests.servers.notes.fixtures import write_vault

pytestmark = pytest.mark.anyio
HITS = 60
LONG_FOLDER = "/".join(f"a rather long folder name at depth {depth} " + "x" * 160 for depth in range(8))


async def test_fifty_large_hits_from_every_namespace_fit_the_budget(tmp_path: Path) -> None:
    paragraph = "The glacier radar survey measured the ice tongue once more. " * 200
    vault = write_vault(
        tmp_path / "vault",
        {f"Surveys/Glacier survey {i}.md": f"# Glacier survey {i}\n\n{paragraph}\n" for i in range(HITS)},
    )
    settings = {
        "server": {"servers": ["notes", "files", "inbox", "search"]},
        "notes": {"vault": str(vault), "watch": False},
        "inbox": {"addresses": [mail.INBOX_ADDRESS]},
        "search": {"timeout_seconds": 60},
    }
    app = build_app(make_config(tmp_path, settings))
    folder = tmp_path / "data" / "files" / LONG_FOLDER
    folder.mkdir(parents=True)
    for i in range(HITS):
        (folder / f"glacier survey report {i} {'z' * 150}.txt").write_text(paragraph)
        subject = f"Glacier survey {i} " + "with a very long subject line " * 20
        raw = mail.simple(subject=subject, body=paragraph, message_id=f"<glacier-{i}@example.org>")
        await app.services["inbox"].ingest(raw, via="test")
    await anyio.to_thread.run_sync(app.services["notes"].reconcile)
    query = {"query": "glacier radar survey", "limit": 50}
    async with connect(tmp_path, app=app, elicit=None) as client:
        result = await client.call_tool("search_all", query)
        first = structured(result)
        assert_fits(result)
        assert first["next_offset"] == len(first["results"]) < 50
        says_more(result, f"offset={first['next_offset']}")
        pages, offset = [], 0
        while offset is not None and offset < 50:
            page = await client.call_tool("search_all", query | {"offset": offset, "limit": 50 - offset})
            assert_fits(page)
            pages += structured(page)["results"]
            offset = structured(page)["next_offset"]
    assert {hit["namespace"] for hit in pages} == {"notes", "files", "inbox"}
    assert not first["partial"]
    assert all(len(hit["snippet"]) <= 300 and len(hit["title"]) <= 200 for hit in pages)
    refs = [tuple(hit["arguments"].values()) for hit in pages]
    assert len(refs) == len(set(refs)) == 50  # the pages put together: the 50 best hits, each once
    assert pages[: len(first["results"])] == first["results"]
