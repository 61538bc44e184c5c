"""Every notes tool, with the largest arguments its schema takes, on a big vault: each result fits
the result budget and says how to get the rest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.budgets import assert_fits, says_more, structured, text
from tests.harness import connect
from tests.servers.notes.fixtures import notes_settings, wait_indexed, write_vault

pytestmark = pytest.mark.anyio
LINKERS = 250


def big_vault(root: Path) -> Path:
    files = {
        "Hub.md": "# Hub\n\n" + "".join(f"- see [[Note {i}]] and [[Missing {i}#Some heading]]\n" for i in range(400)),
        "Target.md": "# Target\n\nThe note everyone links to.\n",
        "Long.md": "---\ntags: [long]\n---\n# Long\n\n" + ("A line of a very long note, say a log. " * 8 + "\n") * 1000,
        "Daily/2026-01-05.md": "# Monday\n\n" + ("- a long day's entry with some words in it\n" * 7500),
    }
    for i in range(LINKERS):
        body = f"---\ntags: [big, group/{i % 7}]\n---\n# Note {i}\n\n"
        body += ("Filler text that makes each diff long. " * 20 + "\n") * 3
        body += "".join(f"Line {j} points at [[Target]] and [[Target#Heading|an alias]].\n" for j in range(6))
        files[f"Notes/Note {i}.md"] = body
    return write_vault(root, files)


@pytest.mark.slow
async def test_every_notes_tool_fits_the_budget_with_its_largest_arguments(tmp_path: Path) -> None:
    vault = big_vault(tmp_path / "vault")
    async with connect(tmp_path, notes_settings(vault, daily_folder="Daily")) as client:
        await wait_indexed(client)
        calls: dict[str, tuple[str, dict[str, Any]]] = {
            "read": ("notes_read", {"path": "Long", "max_chars": 30_000}),
            "daily": ("notes_daily", {"date": "2026-01-05", "max_chars": 30_000}),
            "search": ("notes_search", {"query": "filler text diff long", "top_k": 50}),
            "backlinks": ("notes_backlinks", {"path": "Target", "limit": 100}),
            "forward": ("notes_forward_links", {"path": "Hub", "limit": 100}),
            "tag": ("notes_search_by_tag", {"tag": "big", "limit": 100}),
            "metadata": ("notes_metadata", {"path": "Hub"}),
            "random": ("notes_random", {"tag": "big"}),
            "dry_run": ("notes_rename", {"path": "Target", "new_path": "Moved/Renamed", "dry_run": True}),
        }
        results = {key: await client.call_tool(tool, args) for key, (tool, args) in calls.items()}
        for key, result in results.items():
            structured(result)
            assert_fits(result), key
        says_more(results["read"], "offset=30000")
        says_more(results["daily"], "offset=30000")
        for key in ("backlinks", "forward", "tag"):
            says_more(results[key], f"cursor={structured(results[key])['next_cursor']}")
        dry = structured(results["dry_run"])
        assert (dry["files"], dry["links"]) == (LINKERS, LINKERS * 12) and len(dry["changed"]) == 10
        says_more(results["dry_run"], f"{LINKERS - 10} more files", "cursor='10'")

        # the pages put together give the whole note and every file of the rename
        pieces, offset = [], 0
        while offset is not None:
            page = structured(await client.call_tool("notes_read", {"path": "Long", "offset": offset}))
            pieces.append(page["content"])
            offset = page["next_offset"]
        assert "".join(pieces) == (vault / "Long.md").read_text()
        seen, cursor = [], None
        while True:
            args = {"path": "Target", "new_path": "Moved/Renamed", "dry_run": True}
            page = await client.call_tool("notes_rename", args | ({"cursor": cursor} if cursor else {}))
            assert_fits(page)
            seen += [change["path"] for change in structured(page)["changed"]]
            cursor = structured(page)["next_cursor"]
            if cursor is None:
                break
        assert len(seen) == len(set(seen)) == LINKERS

        renamed = await client.call_tool("notes_rename", {"path": "Target", "new_path": "Moved/Renamed"})
        deleted = await client.call_tool("notes_delete", {"path": "Moved/Renamed"})
    assert_fits(renamed)
    assert structured(renamed)["files"] == LINKERS and "more files" in text(renamed)
    assert_fits(deleted)
    assert structured(deleted)["linked_from_total"] == LINKERS and f"{LINKERS - 100} more" in text(deleted)


async def test_a_cursor_pages_only_a_dry_run(tmp_path: Path) -> None:
    from tests.harness import failure

    vault = write_vault(tmp_path / "vault", {"A.md": "# A\n", "B.md": "[[A]]\n"})
    async with connect(tmp_path, notes_settings(vault)) as client:
        await wait_indexed(client)
        refused = failure(await client.call_tool("notes_rename", {"path": "A", "new_path": "C", "cursor": "10"}))
        stale = failure(
            await client.call_tool("notes_rename", {"path": "A", "new_path": "C", "dry_run": True, "cursor": "99"})
        )
    assert refused["kind"] == "invalid_arguments" and "dry_run" in refused["message"]
    assert stale["kind"] == "invalid_arguments" and "cursor" in stale["message"]
    assert (vault / "A.md").exists()
