"""notes_rename: every link to the note is rewritten exactly, and nothing else changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.harness import connect, failure, ok
from tests.servers.notes.fixtures import notes_settings, wait_indexed, write_vault

pytestmark = pytest.mark.anyio

RENAME_VAULT = {
    "Projects/Alpha.md": (
        "# Alpha\n\n## Goals\n\nGoal text. ^key1\n\nSee [sibling](Beta.md) and [home](../Home.md#Top).\n"
    ),
    "Projects/Beta.md": "# Beta\n\n[[Alpha]] and [alpha file](Alpha.md#Goals) and [[Alpha#^key1|the key]].\n",
    "Home.md": (
        "# Top\n\n"
        "- [[Projects/Alpha]]\n"
        "- [[Alpha|alias text]]\n"
        "- [[Alpha#Goals]]\n"
        "- [[alpha#^key1]]\n"
        "- ![[Alpha]]\n"
        "- ![[Alpha#Goals|embedded goals]]\n"
        "- [md](Projects/Alpha.md#Goals)\n"
        "- [angle](<Projects/Alpha.md>)\n"
        "- [[Alpha.md]]\n"
        "- [[A-Project]] stays: it goes through an alias\n"
        "- [[Beta]] is another note\n"
        "```\n[[Alpha]] in code stays\n```\n"
        "Inline `[[Alpha]]` stays too.\n"
    ),
    "Deep/Folder/Note.md": "Up: [alpha](../../Projects/Alpha.md) and [[Projects/Alpha#Goals]]\r\nEnd.\r\n",
    "Archive/Alpha Notes.md": "Unrelated [[Alpha Notes]] and [[Gamma]].\n",
    "Other/Gamma.md": "# Gamma\n",
}
ALIASED = "---\naliases: [A-Project]\n---\n"


@pytest.fixture
def rename_vault(tmp_path: Path) -> Path:
    files = dict(RENAME_VAULT)
    files["Projects/Alpha.md"] = ALIASED + files["Projects/Alpha.md"]
    return write_vault(tmp_path / "vault", files)


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".trash" not in p.parts
    }


async def test_rename_rewrites_every_kind_of_link_and_nothing_else(tmp_path: Path, rename_vault: Path) -> None:
    before = snapshot(rename_vault)
    async with connect(tmp_path, notes_settings(rename_vault)) as client:
        await wait_indexed(client)
        result = ok(
            await client.call_tool("notes_rename", {"path": "Projects/Alpha.md", "new_path": "Work/Plans/Alpha v2.md"})
        )
        back = ok(await client.call_tool("notes_backlinks", {"path": "Work/Plans/Alpha v2.md"}))
        old = failure(await client.call_tool("notes_read", {"path": "Projects/Alpha.md"}))
    after = snapshot(rename_vault)
    assert result["path"] == "Projects/Alpha.md" and result["new_path"] == "Work/Plans/Alpha v2.md"
    assert {c["path"]: c["links"] for c in result["changed"]} == {
        "Home.md": 9,
        "Projects/Beta.md": 3,
        "Deep/Folder/Note.md": 2,
        "Work/Plans/Alpha v2.md": 2,
    }
    assert after["Home.md"].decode() == (
        "# Top\n\n"
        "- [[Work/Plans/Alpha v2]]\n"
        "- [[Alpha v2|alias text]]\n"
        "- [[Alpha v2#Goals]]\n"
        "- [[Alpha v2#^key1]]\n"
        "- ![[Alpha v2]]\n"
        "- ![[Alpha v2#Goals|embedded goals]]\n"
        "- [md](Work/Plans/Alpha%20v2.md#Goals)\n"
        "- [angle](<Work/Plans/Alpha v2.md>)\n"
        "- [[Alpha v2.md]]\n"
        "- [[A-Project]] stays: it goes through an alias\n"
        "- [[Beta]] is another note\n"
        "```\n[[Alpha]] in code stays\n```\n"
        "Inline `[[Alpha]]` stays too.\n"
    )
    assert after["Projects/Beta.md"].decode() == (
        "# Beta\n\n[[Alpha v2]] and [alpha file](../Work/Plans/Alpha%20v2.md#Goals) and [[Alpha v2#^key1|the key]].\n"
    )
    assert after["Deep/Folder/Note.md"] == (
        b"Up: [alpha](../../Work/Plans/Alpha%20v2.md) and [[Work/Plans/Alpha v2#Goals]]\r\nEnd.\r\n"
    )
    assert after["Work/Plans/Alpha v2.md"].decode() == ALIASED + (
        "# Alpha\n\n## Goals\n\nGoal text. ^key1\n\n"
        "See [sibling](../../Projects/Beta.md) and [home](../../Home.md#Top).\n"
    )
    untouched = {"Archive/Alpha Notes.md", "Other/Gamma.md"}
    assert {k: after[k] for k in untouched} == {k: before[k] for k in untouched}
    assert set(after) == (set(before) - {"Projects/Alpha.md"}) | {"Work/Plans/Alpha v2.md"}
    assert len(back["backlinks"]) == 15 and old["kind"] == "not_found"


async def test_dry_run_shows_diffs_and_changes_nothing(tmp_path: Path, rename_vault: Path) -> None:
    before = snapshot(rename_vault)
    async with connect(tmp_path, notes_settings(rename_vault)) as client:
        await wait_indexed(client)
        preview = ok(
            await client.call_tool(
                "notes_rename", {"path": "Projects/Alpha", "new_path": "Projects/Omega", "dry_run": True}
            )
        )
    assert snapshot(rename_vault) == before
    diffs = {c["path"]: c["diff"] for c in preview["changed"]}
    assert preview["dry_run"] is True
    assert "-[[Alpha]] and" in diffs["Projects/Beta.md"] and "+[[Omega]] and" in diffs["Projects/Beta.md"]
    assert "Projects/Omega.md" not in diffs  # same folder: its own relative links still hold


async def test_basename_link_becomes_a_path_when_the_new_name_is_ambiguous(tmp_path: Path, rename_vault: Path) -> None:
    async with connect(tmp_path, notes_settings(rename_vault)) as client:
        await wait_indexed(client)
        ok(await client.call_tool("notes_rename", {"path": "Projects/Alpha.md", "new_path": "Projects/Gamma.md"}))
    beta = (rename_vault / "Projects/Beta.md").read_text()
    assert beta.startswith("# Beta\n\n[[Projects/Gamma]] and [alpha file](Gamma.md#Goals)")
    assert "[[Projects/Gamma#^key1|the key]]" in beta
    assert (rename_vault / "Archive/Alpha Notes.md").read_text() == "Unrelated [[Alpha Notes]] and [[Gamma]].\n"


async def test_rename_refuses_an_existing_target_and_stale_sources(tmp_path: Path, rename_vault: Path) -> None:
    async with connect(tmp_path, notes_settings(rename_vault), elicit=None) as client:
        needs_approval = failure(
            await client.call_tool("notes_rename", {"path": "Projects/Alpha.md", "new_path": "X.md"})
        )
    assert needs_approval["kind"] == "approval_required"
    async with connect(tmp_path, notes_settings(rename_vault)) as client:
        exists = failure(
            await client.call_tool("notes_rename", {"path": "Projects/Alpha.md", "new_path": "Other/Gamma.md"})
        )
        missing = failure(await client.call_tool("notes_rename", {"path": "Nope.md", "new_path": "X.md"}))
        same = failure(
            await client.call_tool("notes_rename", {"path": "Projects/Alpha.md", "new_path": "Projects/Alpha"})
        )
    assert exists["kind"] == "conflict" and missing["kind"] == "not_found" and same["kind"] == "invalid_arguments"
    assert (rename_vault / "Projects/Alpha.md").exists()


async def test_rename_sees_edits_made_behind_its_back(tmp_path: Path, rename_vault: Path) -> None:
    async with connect(tmp_path, notes_settings(rename_vault)) as client:
        await wait_indexed(client)
        (rename_vault / "Other/Gamma.md").write_text("# Gamma\n\nNow links [[Alpha#Goals]].\n")
        ok(await client.call_tool("notes_rename", {"path": "Projects/Alpha.md", "new_path": "Projects/Zeta.md"}))
    assert (rename_vault / "Other/Gamma.md").read_text() == "# Gamma\n\nNow links [[Zeta#Goals]].\n"


async def test_unicode_rename(tmp_path: Path, rename_vault: Path) -> None:
    async with connect(tmp_path, notes_settings(rename_vault)) as client:
        await wait_indexed(client)
        ok(
            await client.call_tool(
                "notes_rename", {"path": "Projects/Alpha.md", "new_path": "プロジェクト/Ålpha 🚀.md"}
            )
        )
        forward = ok(await client.call_tool("notes_forward_links", {"path": "Projects/Beta"}))
    assert (rename_vault / "プロジェクト/Ålpha 🚀.md").exists()
    assert "[[Ålpha 🚀]]" in (rename_vault / "Projects/Beta.md").read_text()
    assert "(../%E3" not in (rename_vault / "Projects/Beta.md").read_text()
    assert "[alpha file](../プロジェクト/Ålpha%20🚀.md#Goals)" in (rename_vault / "Projects/Beta.md").read_text()
    assert {f["resolved_path"] for f in forward["links"]} == {"プロジェクト/Ålpha 🚀.md"}


async def test_links_the_new_name_would_capture_are_pinned(tmp_path: Path, rename_vault: Path) -> None:
    (rename_vault / "Other/Index.md").write_text("[[Gamma]] and [[Missing]]\n")
    async with connect(tmp_path, notes_settings(rename_vault)) as client:
        await wait_indexed(client)
        result = ok(
            await client.call_tool("notes_rename", {"path": "Projects/Beta.md", "new_path": "Archive/Gamma.md"})
        )
        forward = ok(await client.call_tool("notes_forward_links", {"path": "Archive/Alpha Notes"}))
    # Archive/Alpha Notes.md meant Other/Gamma.md; a Gamma in its own folder would capture the link: pinned
    assert (rename_vault / "Archive/Alpha Notes.md").read_text() == "Unrelated [[Alpha Notes]] and [[Other/Gamma]].\n"
    assert (rename_vault / "Other/Index.md").read_text() == "[[Gamma]] and [[Missing]]\n"  # still its neighbour
    assert {f["target"]: f["resolved_path"] for f in forward["links"]}["Other/Gamma"] == "Other/Gamma.md"
    assert "Home.md" in {c["path"] for c in result["changed"]}


async def test_the_confirmation_says_how_many_files_and_links_a_rename_rewrites(
    tmp_path: Path, rename_vault: Path
) -> None:
    before = snapshot(rename_vault)
    seen: list[Any] = []
    async with connect(tmp_path, notes_settings(rename_vault), elicit="decline", seen=seen) as client:
        await wait_indexed(client)
        arguments = {"path": "Projects/Alpha.md", "new_path": "Work/Plans/Alpha v2.md"}
        preview = ok(await client.call_tool("notes_rename", {**arguments, "dry_run": True}))
        assert seen == []  # a dry run changes nothing: nobody is asked
        declined = failure(await client.call_tool("notes_rename", arguments))
    assert declined["kind"] == "declined_by_user" and snapshot(rename_vault) == before
    files = len(preview["changed"])
    links = sum(change["links"] for change in preview["changed"])
    assert (files, links) == (4, 16)
    [asked] = seen
    assert asked.message.splitlines()[0] == (
        "rename note 'Projects/Alpha.md' to 'Work/Plans/Alpha v2.md', rewriting 16 links in 4 files"
    )


async def test_a_dry_run_runs_without_approval_even_where_asking_is_impossible(
    tmp_path: Path, rename_vault: Path
) -> None:
    settings = notes_settings(rename_vault)
    async with connect(tmp_path, settings, elicit=None) as client:
        await wait_indexed(client)
        arguments = {"path": "Projects/Alpha.md", "new_path": "Alpha v2.md"}
        preview = ok(await client.call_tool("notes_rename", {**arguments, "dry_run": True}))
        real = failure(await client.call_tool("notes_rename", arguments))
    assert preview["dry_run"] is True and preview["changed"] and real["kind"] == "approval_required"
    assert "rewriting 16 links in 4 files" in real["message"]
