"""Pure parsing: frontmatter, tags, links, chunks, link resolution, frontmatter merging, date formats."""

from __future__ import annotations

import datetime as dt

import pytest

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.notes.dates import format_day, render_template
from mcp_tools.servers.notes.frontmatter import merge_frontmatter
from mcp_tools.servers.notes.links import Resolver
from mcp_tools.servers.notes.markdown import parse_note, section_span


def test_frontmatter_tags_aliases_title_and_dates() -> None:
    note = parse_note(
        "---\ntitle: T\ntags: '#One, two/Three'\naliases: First, Second\ncreated: 2024-01-02\n---\nBody #Four.\n",
        "stem",
    )
    assert note.title == "T"
    assert note.tags == ["one", "two/three", "four"]
    assert note.aliases == ["First", "Second"]
    assert note.frontmatter["created"] == "2024-01-02"


def test_broken_frontmatter_is_reported_not_fatal() -> None:
    note = parse_note("---\nkey: [unclosed\n---\n# Heading\n", "stem")
    assert note.frontmatter == {} and note.frontmatter_error and note.title == "Heading"


def test_tags_are_not_taken_from_code_urls_numbers_or_headings() -> None:
    text = (
        "# Title #inheading\n"
        "See https://x.org/page#anchor and issue #123 and a#b and [[Note#Section]].\n"
        "```\n#incode\n```\n"
        "`#inline` but #real/nested-tag and #日本語 too.\n"
    )
    assert parse_note(text, "s").tags == ["inheading", "real/nested-tag", "日本語"]


def test_links_of_every_kind_with_fragments_and_offsets() -> None:
    text = (
        "[[A]] [[Folder/B#Head|alias]] ![[C#^blk]] [md](D%20E.md#Sec) ![img](pic.png) "
        "[web](https://example.org/x.md) [[#Local]] [angle](<F G.md>)"
    )
    links = parse_note(text, "s").links
    summary = [(link.kind, link.style, link.target, link.fragment, link.text) for link in links]
    assert summary == [
        ("wikilink", "wiki", "A", "", ""),
        ("wikilink", "wiki", "Folder/B", "#Head", "alias"),
        ("embed", "wiki", "C", "#^blk", ""),
        ("markdown", "markdown", "D E.md", "#Sec", "md"),
        ("embed", "markdown", "pic.png", "", "img"),
        ("wikilink", "wiki", "", "#Local", ""),
        ("markdown", "markdown", "F G.md", "", "angle"),
    ]
    assert all(text[link.start : link.end] == link.raw for link in links)


def test_embed_marks_tags_and_block_ids_at_their_edges() -> None:
    """Where a "!", "#" or "^" counts: right before a link, after a space or at a line start only."""
    text = (
        "#start !![[Twice]] [a](b!)[c](d.md) ![e](f.md)x![[Img.png]]\n"
        "word#no ]#no &#no /#no ##no #ok-1 #2024 `#code`\n"
        "^first\nline ^mid-2\nword^no\n## Heading ##\n####### seven\n"
    )
    parsed = parse_note(text, "n")
    links = [(link.kind, link.target, link.raw) for link in parsed.links]
    assert links == [
        ("embed", "Twice", "![[Twice]]"),
        ("markdown", "b!", "[a](b!)"),
        ("markdown", "d.md", "[c](d.md)"),
        ("embed", "f.md", "![e](f.md)"),
        ("embed", "Img.png", "![[Img.png]]"),
    ]
    assert all(text[link.start : link.end] == link.raw for link in parsed.links)
    assert parsed.tags == ["start", "ok-1"]
    assert parsed.block_ids == ["first", "mid-2"]
    assert [(h.level, h.text) for h in parsed.headings] == [(2, "Heading")]


def test_chunks_follow_headings_and_split_long_sections() -> None:
    long_paragraphs = "\n\n".join("word " * 60 for _ in range(12))
    text = f"intro\n# One\n\n{long_paragraphs}\n## Two\n\nsecond\n# Three\nthird\n"
    note = parse_note(text, "s")
    headings = [chunk.heading for chunk in note.chunks]
    assert headings[0] == "" and headings[-2:] == ["One > Two", "Three"]
    assert headings.count("One") >= 2
    assert all(len(chunk.text) <= 1600 for chunk in note.chunks)
    assert section_span(text, note.headings, "two") == (text.index("## Two"), text.index("# Three"))


def test_resolution_order_exact_suffix_basename_alias() -> None:
    resolver = Resolver(
        ["A.md", "x/A.md", "x/y/B.md", "z/B.md", "long/folder/B.md", "n/Note.md"],
        {"n/Note.md": ["Nick Name"]},
    )

    def resolve(source: str, target: str, style: str = "wiki") -> str | None:
        return resolver.resolve_target(source, style, target).path

    assert resolve("q/S.md", "x/A") == "x/A.md"  # exact path
    assert resolve("q/S.md", "A") == "A.md"  # basename: fewest folders
    assert resolve("x/S.md", "A") == "A.md"  # an exact vault path wins over a closer basename
    assert resolve("q/S.md", "y/B") == "x/y/B.md"  # path suffix
    assert resolve("x/y/S.md", "B") == "x/y/B.md"
    assert resolve("q/S.md", "B") == "z/B.md"
    assert resolve("q/S.md", "nick name") == "n/Note.md"  # alias, case-insensitive
    assert resolve("q/S.md", "a.MD") == "A.md"
    assert resolve("x/S.md", "../A.md", "markdown") == "A.md"  # relative Markdown link
    assert resolve("x/S.md", "../../etc/passwd", "markdown") is None
    assert resolve("q/S.md", "Missing") is None
    assert resolve("q/S.md", "pic.png") is None
    assert resolve("q/S.md", "") == "q/S.md"


def test_merge_frontmatter_edits_only_changed_keys() -> None:
    text = "---\n# a comment\nkeep: 'quoted'   # note\nlist:\n  - a\n  - b\ndrop: 1\n---\nbody\n---\nnot frontmatter\n"
    new_text, frontmatter = merge_frontmatter(text, {"drop": None, "list": ["c"], "added": "ü"})
    assert (
        new_text == "---\n# a comment\nkeep: 'quoted'   # note\nlist:\n- c\nadded: ü\n---\nbody\n---\nnot frontmatter\n"
    )
    assert frontmatter == {"keep": "quoted", "list": ["c"], "added": "ü"}


def test_merge_frontmatter_refuses_broken_yaml() -> None:
    with pytest.raises(ToolFailure) as caught:
        merge_frontmatter("---\na: [\n---\nbody\n", {"b": 1})
    assert caught.value.kind == "conflict"


def test_moment_formats_and_templates() -> None:
    day = dt.date(2024, 3, 1)
    assert format_day(day, "YYYY-MM-DD") == "2024-03-01"
    assert format_day(day, "dddd, MMMM Do YYYY") == "Friday, March 1st 2024"
    assert format_day(day, "YY/M/D [week] ww") == "24/3/1 week 09"
    assert format_day(dt.date(2024, 3, 12), "Do") == "12th"
    assert render_template("{{title}} {{date}} {{date:MMM}}", day, "T", "YYYY") == "T 2024 Mar"
