"""The notes tools over a real MCP client, on a generated vault."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.core.tooling import Environment, NotConfigured
from mcp_tools.servers.notes import NAMESPACE
from mcp_tools.servers.notes.config import NotesConfig
from tests.harness import annotation, connect, failure, ok, text_of
from tests.servers.notes.fixtures import (
    CAFE_NFC,
    CAFE_NFD,
    VAULT,
    notes_settings,
    vault,  # noqa: F401  (fixture)
    wait_indexed,
)

pytestmark = pytest.mark.anyio


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_without_a_vault_the_namespace_says_what_to_set(tmp_path: Path) -> None:
    env = Environment(data_dir=tmp_path / "d", state_dir=tmp_path / "s")
    with pytest.raises(NotConfigured, match=r'set \[notes\] vault = "/path/to/vault"'):
        NAMESPACE.create(NotesConfig(), env)
    with pytest.raises(NotConfigured, match="not a folder"):
        NAMESPACE.create(NotesConfig(vault=str(tmp_path / "missing")), env)


def test_create_does_no_indexing(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    env = Environment(data_dir=tmp_path / "d", state_dir=tmp_path / "s")
    NAMESPACE.create(NotesConfig(vault=str(vault)), env)
    assert not (tmp_path / "s" / "notes" / "index.sqlite3").exists()


async def test_tools_are_listed_with_wire_names_and_hints(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {
        f"notes_{name}"
        for name in [
            "read",
            "search",
            "write",
            "edit",
            "update_frontmatter",
            "backlinks",
            "forward_links",
            "daily",
            "search_by_tag",
            "metadata",
            "rename",
            "delete",
            "random",
        ]
    }
    assert annotation(tools["notes_read"], "read_only_hint") is True
    assert annotation(tools["notes_delete"], "destructive_hint") is True
    schema_size = sum(len(json.dumps(t.input_schema)) for t in tools.values())
    assert schema_size < 12_000


async def test_read_whole_note_and_one_section(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault)) as client:
        whole = ok(await client.call_tool("notes_read", {"path": "Projects/Alpha"}))
        section = ok(await client.call_tool("notes_read", {"path": "Projects/Alpha.md", "heading": "goals"}))
        missing = failure(await client.call_tool("notes_read", {"path": "Projects/Alpha.md", "heading": "Budget"}))
        absent = failure(await client.call_tool("notes_read", {"path": "Nowhere.md"}))
    assert whole["content"] == VAULT["Projects/Alpha.md"]
    assert whole["sha256"] == sha(vault / "Projects/Alpha.md")
    assert whole["frontmatter"]["title"] == "Project Alpha"
    assert whole["frontmatter"]["date"] == "2024-03-01"
    assert whole["tags"] == ["project/alpha", "research"]
    assert section["content"].startswith("## Goals\n")
    assert "Rhône glacier" in section["content"]
    assert "## Notes" not in section["content"]
    assert missing["kind"] == "not_found" and "Goals" in missing["hint"]
    assert absent["kind"] == "not_found"


async def test_non_ascii_names_and_content_round_trip(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault)) as client:
        cjk = ok(await client.call_tool("notes_read", {"path": "日本語/メモ.md"}))
        emoji = ok(await client.call_tool("notes_read", {"path": "🚀 Launch"}))
        nfd_given_for_nfc = ok(await client.call_tool("notes_read", {"path": unicodedata.normalize("NFD", CAFE_NFC)}))
        nfd_exact = ok(await client.call_tool("notes_read", {"path": CAFE_NFD}))
        name = unicodedata.normalize("NFD", "Ångström 数学 🧪")
        written = ok(await client.call_tool("notes_write", {"path": f"Lab/{name}", "content": "Ω ≈ 𝛑 🧪\n"}))
        back = ok(await client.call_tool("notes_read", {"path": f"Lab/{name}.md"}))
    assert cjk["content"] == VAULT["日本語/メモ.md"] and cjk["tags"] == ["日本"]
    assert emoji["content"] == VAULT["🚀 Launch.md"]
    assert nfd_given_for_nfc["path"] == f"{CAFE_NFC}.md"
    assert nfd_exact["content"] == VAULT[f"{CAFE_NFD}.md"]
    assert written["path"] == f"Lab/{name}.md"
    assert os.listdir(vault / "Lab") == [f"{name}.md"]  # the NFD bytes, not normalised
    assert back["content"] == "Ω ≈ 𝛑 🧪\n"


async def test_write_creates_folders_and_is_searchable_on_return(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault)) as client:
        await wait_indexed(client)
        created = ok(
            await client.call_tool(
                "notes_write", {"path": "New/Deep/Zebra Facts", "content": "# Zebras\n\nStripes confuse flies.\n"}
            )
        )
        found = ok(await client.call_tool("notes_search", {"query": "stripes flies"}))
    assert created == {
        "path": "New/Deep/Zebra Facts.md",
        "sha256": sha(vault / "New/Deep/Zebra Facts.md"),
        "created": True,
        "bytes": len(b"# Zebras\n\nStripes confuse flies.\n"),
    }
    assert found["results"][0]["path"] == "New/Deep/Zebra Facts.md"
    assert not [p for p in (vault / "New/Deep").iterdir() if p.name != "Zebra Facts.md"]  # no temp files left


async def test_replacing_without_a_hash_needs_approval(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    target = vault / "Projects/Beta.md"
    before = target.read_bytes()
    async with connect(tmp_path, notes_settings(vault), elicit=None) as client:
        refused = failure(await client.call_tool("notes_write", {"path": "Projects/Beta.md", "content": "x"}))
        fresh = ok(await client.call_tool("notes_write", {"path": "Projects/Gamma.md", "content": "new"}))
    assert refused["kind"] == "approval_required"
    assert target.read_bytes() == before
    assert fresh["created"] is True
    async with connect(tmp_path, notes_settings(vault), elicit="decline") as client:
        declined = failure(await client.call_tool("notes_write", {"path": "Projects/Beta.md", "content": "x"}))
    assert declined["kind"] == "declined_by_user"
    assert target.read_bytes() == before
    async with connect(tmp_path, notes_settings(vault), elicit="accept") as client:
        ok(await client.call_tool("notes_write", {"path": "Projects/Beta.md", "content": "replaced\n"}))
    assert target.read_text() == "replaced\n"


async def test_concurrent_edit_is_detected(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    target = vault / "Projects/Beta.md"
    async with connect(tmp_path, notes_settings(vault), elicit=None) as client:
        read = ok(await client.call_tool("notes_read", {"path": "Projects/Beta.md"}))
        target.write_text(read["content"] + "An edit from the phone.\n")
        stale = failure(
            await client.call_tool(
                "notes_write",
                {"path": "Projects/Beta.md", "content": "agent version\n", "expected_sha256": read["sha256"]},
            )
        )
        stale_meta = failure(
            await client.call_tool(
                "notes_update_frontmatter",
                {"path": "Projects/Beta.md", "set": {"x": 1}, "expected_sha256": read["sha256"]},
            )
        )
        again = ok(await client.call_tool("notes_read", {"path": "Projects/Beta.md"}))
        written = ok(
            await client.call_tool(
                "notes_write",
                {"path": "Projects/Beta.md", "content": "merged\n", "expected_sha256": again["sha256"]},
            )
        )
        gone = failure(
            await client.call_tool(
                "notes_write", {"path": "Projects/Gone.md", "content": "x", "expected_sha256": "0" * 64}
            )
        )
    assert stale["kind"] == "conflict" and again["sha256"] in stale["message"]
    assert stale_meta["kind"] == "conflict"
    assert written["created"] is False and target.read_text() == "merged\n"
    assert gone["kind"] == "conflict"


async def test_update_frontmatter_keeps_the_body_and_untouched_lines(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault)) as client:
        result = ok(
            await client.call_tool(
                "notes_update_frontmatter",
                {"path": "Projects/Alpha.md", "set": {"date": None, "reviewed": True, "owner": "Zoë"}},
            )
        )
        crlf = ok(await client.call_tool("notes_update_frontmatter", {"path": "Windows", "set": {"tags": ["a"]}}))
        plain = ok(await client.call_tool("notes_update_frontmatter", {"path": "Code", "set": {"lang": "py"}}))
        empty = failure(await client.call_tool("notes_update_frontmatter", {"path": "Code", "set": {}}))
    text = (vault / "Projects/Alpha.md").read_text()
    original = VAULT["Projects/Alpha.md"]
    body = original[original.index("# Alpha") :]
    assert text.endswith(body) and text.count(body) == 1
    assert "status: active # keep this comment\n" in text
    assert "title: Project Alpha\n" in text
    assert "date:" not in text
    assert result["frontmatter"] == {
        "title": "Project Alpha",
        "tags": ["project/alpha", "research"],
        "aliases": ["A-Project"],
        "status": "active",
        "reviewed": True,
        "owner": "Zoë",
    }
    windows = (vault / "Windows.md").read_bytes()
    assert windows.endswith(VAULT["Windows.md"].split("---\r\n", 2)[2].encode())
    assert b"\n" not in windows.replace(b"\r\n", b"")
    assert crlf["frontmatter"] == {"tags": ["a"]}
    code = (vault / "Code.md").read_text()
    assert code == "---\nlang: py\n---\n" + VAULT["Code.md"]
    assert plain["frontmatter"] == {"lang": "py"}
    assert empty["kind"] == "invalid_arguments"


async def test_backlinks_and_forward_links(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault)) as client:
        await wait_indexed(client)
        back = ok(await client.call_tool("notes_backlinks", {"path": "Projects/Alpha.md"}))
        page = ok(await client.call_tool("notes_backlinks", {"path": "Projects/Alpha.md", "limit": 2}))
        rest = ok(
            await client.call_tool(
                "notes_backlinks", {"path": "Projects/Alpha.md", "limit": 50, "cursor": page["next_cursor"]}
            )
        )
        forward = ok(await client.call_tool("notes_forward_links", {"path": "Home"}))
        bad_cursor = failure(await client.call_tool("notes_backlinks", {"path": "Home", "cursor": "zz"}))
    sources = [(b["source"], b["kind"], b["fragment"]) for b in back["backlinks"]]
    assert sources == [
        ("Home.md", "wikilink", ""),
        ("Home.md", "wikilink", "#Goals"),
        ("Home.md", "wikilink", "#^key1"),
        ("Home.md", "embed", ""),
        ("Journal/2024-03-01.md", "wikilink", ""),  # through the alias A-Project
        ("Projects/Beta.md", "wikilink", ""),
    ]
    assert back["backlinks"][0]["line"] == 9
    assert back["total"] == 6 and page["next_cursor"] == "2" and len(rest["backlinks"]) == 4
    links = {(f["target"], f["fragment"]): f for f in forward["links"]}
    assert links[("Beta", "")]["resolved_path"] == "Projects/Beta.md"
    assert links[("Beta", "")]["text"] == "the beta project"
    assert links[("Missing Note", "")]["resolved_path"] is None
    assert links[("diagram.png", "")]["resolved_path"] is None and links[("diagram.png", "")]["kind"] == "embed"
    assert links[("Ideas/Idea One.md", "#Why")]["kind"] == "markdown"
    assert links[("Ideas/Idea One.md", "#Why")]["resolved_path"] == "Ideas/Idea One.md"
    assert links[(CAFE_NFC, "")]["resolved_path"] == f"{CAFE_NFC}.md"
    assert forward["unresolved"] == 2 and forward["total"] == 10
    assert bad_cursor["kind"] == "invalid_arguments"


async def test_duplicate_basenames_resolve_to_the_closest_note(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault)) as client:
        await wait_indexed(client)
        from_root = ok(await client.call_tool("notes_forward_links", {"path": "Home"}))
        ok(await client.call_tool("notes_write", {"path": "Archive/Old/Index.md", "content": "[[Alpha]]\n"}))
        from_archive = ok(await client.call_tool("notes_forward_links", {"path": "Archive/Old/Index"}))
    alpha = next(f for f in from_root["links"] if f["target"] == "Alpha")
    assert alpha["resolved_path"] == "Projects/Alpha.md"  # fewer folders than Archive/Old/Alpha.md
    assert from_archive["links"][0]["resolved_path"] == "Archive/Old/Alpha.md"  # same folder wins


async def test_unresolved_link_resolves_when_the_note_appears(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault)) as client:
        await wait_indexed(client)
        ok(await client.call_tool("notes_write", {"path": "Later/Missing Note", "content": "here now\n"}))
        forward = ok(await client.call_tool("notes_forward_links", {"path": "Home"}))
        back = ok(await client.call_tool("notes_backlinks", {"path": "Later/Missing Note"}))
    missing = next(f for f in forward["links"] if f["target"] == "Missing Note")
    assert missing["resolved_path"] == "Later/Missing Note.md"
    assert [b["source"] for b in back["backlinks"]] == ["Home.md"]


async def test_links_inside_code_are_ignored(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault)) as client:
        forward = ok(await client.call_tool("notes_forward_links", {"path": "Code"}))
        meta = ok(await client.call_tool("notes_metadata", {"path": "Code"}))
    assert forward["links"] == []
    assert meta["tags"] == ["codetag"]
    assert meta["headings"] == ["Code"]


async def test_search_by_tag_matches_nested_and_inline_tags(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault)) as client:
        await wait_indexed(client)
        parent = ok(await client.call_tool("notes_search_by_tag", {"tag": "#Project"}))
        exact = ok(await client.call_tool("notes_search_by_tag", {"tag": "project/alpha"}))
        inline = ok(await client.call_tool("notes_search_by_tag", {"tag": "status"}))
        cjk = ok(await client.call_tool("notes_search_by_tag", {"tag": "日本"}))
        code = ok(await client.call_tool("notes_search_by_tag", {"tag": "notatag"}))
        prefix_only = ok(await client.call_tool("notes_search_by_tag", {"tag": "proj"}))
        paged = ok(await client.call_tool("notes_search_by_tag", {"tag": "project", "limit": 1}))
    assert [n["path"] for n in parent["notes"]] == ["Journal/2024-03-01.md", "Projects/Alpha.md", "Projects/Beta.md"]
    assert [n["path"] for n in exact["notes"]] == ["Journal/2024-03-01.md", "Projects/Alpha.md"]
    assert inline["notes"] == [{"path": "Projects/Beta.md", "tags": ["status/active"]}]
    assert [n["path"] for n in cjk["notes"]] == ["日本語/メモ.md"]
    assert code["notes"] == [] and prefix_only["notes"] == []
    assert paged["total"] == 3 and paged["next_cursor"] == "1"


async def test_search_filters(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault)) as client:
        await wait_indexed(client)

        async def paths(**args: object) -> list[str]:
            result = ok(await client.call_tool("notes_search", {"query": "alpha", **args}))
            return sorted(r["path"] for r in result["results"])

        everything = await paths()
        tagged = await paths(tags=["project"])
        two_tags = await paths(tags=["project", "research"])
        folder = await paths(folder="Archive")
        recent = await paths(date_after="2024-01-01")
        old = await paths(date_before="2020-01-01")
        hostile = ok(await client.call_tool("notes_search", {"query": 'NEAR( "alpha" OR * ) AND -'}))
        punctuation = ok(await client.call_tool("notes_search", {"query": "!!!"}))
        bad_date = failure(await client.call_tool("notes_search", {"query": "alpha", "date_after": "last week"}))
    assert {"Projects/Alpha.md", "Archive/Old/Alpha.md", "Home.md"} <= set(everything)
    assert "Archive/Old/Alpha.md" not in tagged and "Projects/Alpha.md" in tagged
    assert two_tags == ["Projects/Alpha.md"]
    assert folder == ["Archive/Old/Alpha.md"]
    assert "Archive/Old/Alpha.md" not in recent and "Projects/Alpha.md" in recent
    assert old == ["Archive/Old/Alpha.md"]
    assert hostile["results"] and punctuation["results"] == []
    assert hostile["mode"] == "lexical" and "lexical" in hostile["note"]
    assert bad_date["kind"] == "invalid_arguments" and "date_after" in bad_date["message"]


async def test_metadata_has_no_body(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault)) as client:
        await wait_indexed(client)
        meta = ok(await client.call_tool("notes_metadata", {"path": "Home.md"}))
    assert "content" not in meta
    assert meta["title"] == "Home" and meta["aliases"] == ["Start Page"] and meta["tags"] == ["home"]
    assert meta["headings"] == ["Home", "Intro"]
    assert meta["links_out"] == 10 and meta["links_unresolved"] == 2
    assert meta["backlinks"] == 6  # Alpha, Beta, Idea One (twice), メモ, Windows
    assert meta["sha256"] == sha(vault / "Home.md")
    assert meta["modified"].startswith(str(dt.date.today().year))


async def test_daily_note_from_config_template(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    (vault / "Templates").mkdir()
    (vault / "Templates/Day.md").write_text("# {{title}}\n\nDate: {{date:dddd, MMMM Do YYYY}}\n")
    settings = notes_settings(vault, daily_folder="Daily", daily_format="YYYY-MM-DD", daily_template="Templates/Day")
    async with connect(tmp_path, settings, elicit=None) as client:
        made = ok(await client.call_tool("notes_daily", {"date": "2025-02-03"}))
        opened = ok(await client.call_tool("notes_daily", {"date": "2025-02-03"}))
        absent = failure(await client.call_tool("notes_daily", {"date": "2025-02-04", "create": False}))
        bad = failure(await client.call_tool("notes_daily", {"date": "03/02/2025"}))
        today = ok(await client.call_tool("notes_daily", {}))
    assert made["path"] == "Daily/2025-02-03.md" and made["created"] is True
    assert made["content"] == "# 2025-02-03\n\nDate: Monday, February 3rd 2025\n"
    assert (vault / "Daily/2025-02-03.md").read_text() == made["content"]
    assert opened["created"] is False and opened["sha256"] == made["sha256"]
    assert absent["kind"] == "not_found" and bad["kind"] == "invalid_arguments"
    assert today["path"] == f"Daily/{dt.date.today().isoformat()}.md"


async def test_daily_note_settings_come_from_obsidian(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian/daily-notes.json").write_text(
        json.dumps({"folder": "Journal/Days", "format": "YYYY/MM/[Day] DD", "template": "Tpl"})
    )
    (vault / "Tpl.md").write_text("Notes for {{date}}\n")
    async with connect(tmp_path, notes_settings(vault, daily_folder="Ignored")) as client:
        made = ok(await client.call_tool("notes_daily", {"date": "2025-12-09"}))
    assert made["path"] == "Journal/Days/2025/12/Day 09.md"
    assert made["content"] == "Notes for 2025/12/Day 09\n"


async def test_delete_moves_to_trash_and_reports_linkers(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault), elicit=None) as client:
        refused = failure(await client.call_tool("notes_delete", {"path": "Projects/Beta.md"}))
    assert refused["kind"] == "approval_required" and (vault / "Projects/Beta.md").exists()
    async with connect(tmp_path, notes_settings(vault)) as client:
        await wait_indexed(client)
        answer = await client.call_tool("notes_delete", {"path": "Projects/Beta.md"})
        deleted = ok(answer)
        ok(await client.call_tool("notes_write", {"path": "Projects/Beta.md", "content": "second\n"}))
        again = ok(await client.call_tool("notes_delete", {"path": "Projects/Beta.md"}))
        forward = ok(await client.call_tool("notes_forward_links", {"path": "Home"}))
        gone = ok(await client.call_tool("notes_search", {"query": "migration"}))
        ok(await client.call_tool("notes_write", {"path": "Scratch.md", "content": "tmp\n"}))
        permanent = ok(await client.call_tool("notes_delete", {"path": "Scratch", "permanent": True}))
    assert deleted == {
        "path": "Projects/Beta.md",
        "trashed_to": ".trash/Beta.md",
        "linked_from": ["Home.md"],
        "linked_from_total": 1,
    }
    assert "Projects/Beta.md moved to .trash/Beta.md; 1 note linked to it." in text_of(answer)
    assert (vault / ".trash/Beta.md").read_text() == VAULT["Projects/Beta.md"]
    assert again["trashed_to"] == ".trash/Beta 1.md"
    assert next(f for f in forward["links"] if f["target"] == "Beta")["resolved_path"] is None
    assert gone["results"] == []
    assert permanent["trashed_to"] is None and not (vault / "Scratch.md").exists()
    assert not (vault / ".trash/Scratch.md").exists()


async def test_random_note_within_tag_or_folder(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault)) as client:
        await wait_indexed(client)
        tagged = {ok(await client.call_tool("notes_random", {"tag": "project"}))["path"] for _ in range(12)}
        folder = ok(await client.call_tool("notes_random", {"folder": "Ideas"}))
        anything = ok(await client.call_tool("notes_random", {}))
        none = failure(await client.call_tool("notes_random", {"tag": "no-such-tag"}))
    assert tagged <= {"Journal/2024-03-01.md", "Projects/Alpha.md", "Projects/Beta.md"} and tagged
    assert folder["path"] == "Ideas/Idea One.md" and folder["title"] == "Idea One"
    assert anything["path"] in {*VAULT, "Archive/Old/Alpha.md"}
    assert none["kind"] == "not_found"


async def test_size_limit(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    (vault / "Huge.md").write_text("x" * 5_000)
    async with connect(tmp_path, notes_settings(vault, max_note_bytes=2_000)) as client:
        await wait_indexed(client)
        too_big = failure(await client.call_tool("notes_write", {"path": "Big.md", "content": "y" * 3_000}))
        huge = failure(await client.call_tool("notes_read", {"path": "Huge.md"}))
    assert too_big["kind"] == "too_large" and not (vault / "Big.md").exists()
    assert huge["kind"] == "too_large"


@pytest.mark.parametrize(
    "path",
    [
        "../outside.md",
        "Projects/../../outside.md",
        "/etc/passwd",
        "Projects\\..\\..\\outside.md",
        "a\x00b.md",
        ".obsidian/workspace.md",
        "Projects/.hidden.md",
        "",
    ],
)
async def test_containment_attacks_are_refused(tmp_path: Path, vault: Path, path: str) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault)) as client:
        read = failure(await client.call_tool("notes_read", {"path": path}))
        write = failure(await client.call_tool("notes_write", {"path": path, "content": "pwned"}))
        rename = failure(await client.call_tool("notes_rename", {"path": "Home.md", "new_path": path}))
        delete = failure(await client.call_tool("notes_delete", {"path": path}))
    assert read["kind"] in ("invalid_arguments", "not_found")
    assert write["kind"] == "invalid_arguments"
    assert rename["kind"] == "invalid_arguments"
    assert delete["kind"] in ("invalid_arguments", "not_found")
    assert not (tmp_path / "outside.md").exists()
    assert (vault / "Home.md").exists()


@pytest.mark.parametrize("path", ["../outside.md", "Projects/../../outside", "./Home.md"])
async def test_a_dot_segment_is_named_as_the_problem_not_a_hidden_folder(
    tmp_path: Path,
    vault: Path,  # noqa: F811
    path: str,
) -> None:
    async with connect(tmp_path, notes_settings(vault)) as client:
        error = failure(await client.call_tool("notes_read", {"path": path}))
    assert error["kind"] == "invalid_arguments"
    assert "'..' segment" in error["message"] and "hidden" not in error["message"]


async def test_symlinks_out_of_the_vault_are_refused_and_not_indexed(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    secret_dir = tmp_path / "secret"
    secret_dir.mkdir()
    (secret_dir / "Passwords.md").write_text("hunter2 zanzibar\n")
    (vault / "Leak.md").symlink_to(secret_dir / "Passwords.md")
    (vault / "LeakDir").symlink_to(secret_dir, target_is_directory=True)
    async with connect(tmp_path, notes_settings(vault)) as client:
        await wait_indexed(client)
        file_link = failure(await client.call_tool("notes_read", {"path": "Leak.md"}))
        dir_link = failure(await client.call_tool("notes_read", {"path": "LeakDir/Passwords.md"}))
        write_through = failure(await client.call_tool("notes_write", {"path": "LeakDir/New.md", "content": "x"}))
        found = ok(await client.call_tool("notes_search", {"query": "zanzibar"}))
    assert file_link["kind"] == "invalid_arguments" and dir_link["kind"] == "invalid_arguments"
    assert write_through["kind"] == "invalid_arguments"
    assert not (secret_dir / "New.md").exists()
    assert found["results"] == []
    assert "hunter2" not in json.dumps([file_link, dir_link])


def test_common_words_are_left_out_of_the_or_query_on_large_vaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_tools.servers.notes import search as search_module
    from mcp_tools.servers.notes.models import SearchArgs
    from mcp_tools.servers.notes.service import NotesService

    files = {f"n{i}.md": f"the common filler text number {i}\n" for i in range(30)}
    files["rare.md"] = "the zygote note\n"
    root = tmp_path / "big"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    service = NotesService(NotesConfig(vault=str(root), watch=False), Environment(tmp_path, tmp_path / "s"))
    service.reconcile()
    monkeypatch.setattr(search_module, "PRUNE_FROM_CHUNKS", 0)
    matches: list[str] = []
    original = service.index.lexical

    def recording(match: str, limit: int) -> Any:
        matches.append(match)
        return original(match, limit)

    monkeypatch.setattr(service.index, "lexical", recording)
    result = service.search(SearchArgs(query="the zygote", top_k=5))
    assert matches == ['"the" AND "zygote"', '"zygote"']  # "the" is in every chunk: not worth a full scan
    assert [r.path for r in result.results] == ["rare.md"]
    service.close()


async def test_works_on_the_2026_protocol_era(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    async with connect(tmp_path, notes_settings(vault), mode="2026-07-28") as client:
        read = ok(await client.call_tool("notes_read", {"path": "日本語/メモ"}))
        deleted = ok(await client.call_tool("notes_delete", {"path": "Code.md"}))
    assert read["content"] == VAULT["日本語/メモ.md"]
    assert deleted["trashed_to"] == ".trash/Code.md" and not (vault / "Code.md").exists()


def test_importing_the_namespace_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, mcp_tools.servers.notes as n; assert n.NAMESPACE.name == 'notes'; "
        "heavy = {'mcp_tools.servers.notes.service', 'sqlite3', 'yaml', 'watchfiles', 'numpy', 'httpx', 'fastembed'}; "
        "print(sorted(heavy & set(sys.modules)))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


async def test_the_delete_confirmation_names_the_note_and_where_it_goes(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    seen: list[Any] = []
    async with connect(tmp_path, notes_settings(vault), elicit="decline", seen=seen) as client:
        await wait_indexed(client)
        trashed = failure(await client.call_tool("notes_delete", {"path": "Projects/Beta.md"}))
        (vault / ".trash").mkdir()
        (vault / ".trash/Beta.md").write_text("an older Beta\n")
        again = failure(await client.call_tool("notes_delete", {"path": "Projects/Beta.md"}))
        permanent = failure(await client.call_tool("notes_delete", {"path": "Projects/Beta.md", "permanent": True}))
    assert {trashed["kind"], again["kind"], permanent["kind"]} == {"declined_by_user"}
    assert (vault / "Projects/Beta.md").exists()
    assert [asked.message.splitlines()[0] for asked in seen] == [
        "move note 'Projects/Beta.md' to the vault's trash folder as '.trash/Beta.md'",
        "move note 'Projects/Beta.md' to the vault's trash folder as '.trash/Beta 1.md'",
        "permanently delete note 'Projects/Beta.md' (it does not go to the trash folder; this cannot be undone)",
    ]


async def test_search_says_which_notes_are_not_indexed_and_why(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    deep = "/".join(f"{number}" + "d" * 239 for number in range(5)) + "/Far Plan.md"
    (vault / deep).parent.mkdir(parents=True)
    (vault / deep).write_text("# Far plan\n\nzeppelin itinerary\n", encoding="utf-8")
    async with connect(tmp_path, notes_settings(vault)) as client:
        result = await wait_indexed(client)
        found = ok(await client.call_tool("notes_search", {"query": "zeppelin"}))
    assert found["results"] == [] and result["index"]["indexed"] == len(VAULT)
    assert found["index"]["skipped"] == 1
    assert found["index"]["skipped_notes"] == [
        {"path": deep, "reason": f"cannot be read: path is {len(deep)} characters long; the limit is 1024"}
    ]
    assert "1 note is not indexed, so never found (index.skipped_notes says why)" in found["note"]
