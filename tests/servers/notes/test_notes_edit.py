"""notes.edit through a real MCP client on a real vault: headings in every style, CRLF, front matter.

Every byte outside the change is compared, on disk, with the note as it was.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from tests.harness import connect, failure, ok
from tests.servers.notes.fixtures import notes_settings, wait_indexed, write_vault

pytestmark = pytest.mark.anyio

STYLES = (
    "---\n"
    "status: draft\n"
    "tags: [plan]\n"
    "---\n"
    "Project Plan\n"
    "============\n"
    "\n"
    "Intro text.\n"
    "\n"
    "## Tasks ##\n"
    "- write the draft\n"
    "\n"
    "### Later\n"
    "- someday\n"
    "\n"
    "```markdown\n"
    "## Tasks\n"
    "Not a heading\n"
    "---\n"
    "```\n"
    "\n"
    "Notes\n"
    "-----\n"
    "closing words\n"
)
CRLF = "# Log\r\n\r\n## Monday\r\nrain\r\n\r\n## Tuesday\r\nsun\r\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = write_vault(tmp_path / "vault", {"Plan.md": "placeholder\n", "Other.md": "# Other\n"})
    (root / "Plan.md").write_bytes(STYLES.encode())
    (root / "Log.md").write_bytes(CRLF.encode())
    return root


async def edit(client: Any, **arguments: Any) -> types.CallToolResult:
    return await client.call_tool("notes_edit", arguments)  # type: ignore[no-any-return]


async def test_each_action_changes_only_its_place(tmp_path: Path, vault: Path) -> None:
    plan = vault / "Plan.md"
    async with connect(tmp_path, notes_settings(vault)) as client:
        await wait_indexed(client)
        inserted = ok(await edit(client, path="Plan", action="insert", heading="Tasks", content="- review it"))
        assert plan.read_text() == STYLES.replace("- write the draft\n", "- write the draft\n- review it\n")
        assert inserted["changed"] and inserted["sha256"] == sha(plan.read_bytes())
        assert "+- review it" in inserted["diff"]
        ok(await edit(client, path="Plan", action="append", content="PS: done"))
        ok(await edit(client, path="Plan", action="prepend", content="Summary first."))
        ok(await edit(client, path="Plan", action="replace_section", heading="Notes", content="new words"))
        ok(await edit(client, path="Plan", action="insert", heading="Project Plan > Tasks > Later", content="- x"))
        ok(await edit(client, path="Plan", action="replace", old="Intro text.", content="Intro, shorter."))
        found = ok(await client.call_tool("notes_search", {"query": "shorter"}))
    expected = (
        STYLES.replace("---\nProject Plan", "---\nSummary first.\n\nProject Plan")
        .replace("- write the draft\n", "- write the draft\n- review it\n")
        .replace("```\n\nNotes", "```\n- x\n\nNotes")  # after Later's own text, its code block too
        .replace("closing words\n", "new words\n")  # the section held the appended line too
        .replace("Intro text.", "Intro, shorter.")
    )
    assert plan.read_text() == expected
    assert [hit["path"] for hit in found["results"]] == ["Plan.md"]  # the index followed at once


async def test_headings_in_code_are_not_headings_and_setext_ones_are(tmp_path: Path, vault: Path) -> None:
    async with connect(tmp_path, notes_settings(vault)) as client:
        tasks = ok(await edit(client, path="Plan", action="replace_section", heading="Tasks", content="- one"))
        missing = failure(await edit(client, path="Plan", action="insert", heading="Not a heading", content="x"))
    text = (vault / "Plan.md").read_text()
    assert "## Tasks ##\n- one\n\nNotes\n-----\n" in text  # the fenced '## Tasks' went with its section
    assert "```markdown" not in text and tasks["changed"]
    assert missing["kind"] == "not_found" and "'Project Plan'" in missing["hint"]


async def test_crlf_notes_stay_crlf(tmp_path: Path, vault: Path) -> None:
    log = vault / "Log.md"
    async with connect(tmp_path, notes_settings(vault)) as client:
        ok(await edit(client, path="Log", action="insert", heading="Monday", content="wind\nhail"))
        ok(await edit(client, path="Log", action="replace", old="rain\nwind", content="drizzle\nwind"))
        ok(await edit(client, path="Log", action="append", content="## Wednesday\n"))
    assert (
        log.read_bytes()
        == b"# Log\r\n\r\n## Monday\r\ndrizzle\r\nwind\r\nhail\r\n\r\n## Tuesday\r\nsun\r\n## Wednesday\r\n"
    )


async def test_ambiguity_and_stale_versions_change_nothing(tmp_path: Path, vault: Path) -> None:
    (vault / "Twice.md").write_text("# A\n## Tasks\nx\n# B\n## Tasks\ny\nsame\nsame\n")
    before = (vault / "Twice.md").read_bytes()
    async with connect(tmp_path, notes_settings(vault)) as client:
        heading = failure(await edit(client, path="Twice", action="insert", heading="Tasks", content="z"))
        passage = failure(await edit(client, path="Twice", action="replace", old="same", content="other"))
        stale = failure(await edit(client, path="Twice", action="append", content="z", expected_sha256="0" * 64))
        in_front = failure(await edit(client, path="Plan", action="replace", old="status: draft", content="x"))
        no_heading = failure(await edit(client, path="Twice", action="insert", content="z"))
        missing = failure(await edit(client, path="Nowhere", action="append", content="z"))
        assert (vault / "Twice.md").read_bytes() == before
        by_path = ok(await edit(client, path="Twice", action="insert", heading="B > Tasks", content="z"))
        current = ok(
            await edit(client, path="Twice", action="append", content="end", expected_sha256=by_path["sha256"])
        )
    assert (
        heading["kind"] == "conflict" and "Parent" not in heading["message"] and "'Project > Tasks'" in heading["hint"]
    )
    assert passage["kind"] == "conflict" and "2 times" in passage["message"]
    assert stale["kind"] == "conflict" and in_front["kind"] == "invalid_arguments"
    assert no_heading["kind"] == "invalid_arguments" and missing["kind"] == "not_found"
    assert (vault / "Twice.md").read_text() == "# A\n## Tasks\nx\n# B\n## Tasks\ny\nsame\nsame\nz\nend\n"
    assert current["sha256"] == sha((vault / "Twice.md").read_bytes())


async def test_a_failing_edit_asks_nobody(tmp_path: Path, vault: Path) -> None:
    seen: list[types.ElicitRequestParams] = []
    settings = {**notes_settings(vault), "policy": {"rules": [{"match": "notes.edit", "risk": "high"}]}}
    async with connect(tmp_path, settings, elicit="accept", seen=seen) as client:
        refused = failure(await edit(client, path="Plan", action="replace", old="nowhere", content="x"))
        done = ok(await edit(client, path="Plan", action="append", content="x"))
    assert refused["kind"] == "not_found" and done["changed"]
    assert len(seen) == 1 and "append 1 character to note Plan" in seen[0].message


async def test_hostile_input(tmp_path: Path, vault: Path) -> None:
    async with connect(
        tmp_path, {**notes_settings(vault), "notes": {**notes_settings(vault)["notes"], "max_note_bytes": 4096}}
    ) as client:
        huge = failure(await edit(client, path="Plan", action="append", content="x" * 10_000))
        nul = failure(await edit(client, path="Plan", action="append", content="a\x00b"))
        outside = failure(await edit(client, path="../escape", action="append", content="x"))
        keys = failure(
            await client.call_tool(
                "notes_edit", {"path": "Plan", "action": "append", "content": "x", **{f"k{i}": 1 for i in range(3000)}}
            )
        )
    assert huge["kind"] == "too_large" and nul["kind"] == "invalid_arguments"
    assert outside["kind"] == "invalid_arguments" and keys["kind"] == "invalid_arguments"
    assert (vault / "Plan.md").read_bytes() == STYLES.encode()
