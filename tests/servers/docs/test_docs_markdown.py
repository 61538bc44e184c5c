"""Docs structure <-> Markdown: parsing, rendering, and the requests' UTF-16 index arithmetic.

The requests are applied by the fake Docs (which checks every index as Google does), so a
wrong index shows up as a refused request or as text in the wrong place.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_tools.servers.docs.markdown import Paragraph, Span, Table, u16
from mcp_tools.servers.docs.parse import parse, parse_inline
from mcp_tools.servers.docs.render import to_markdown
from mcp_tools.servers.docs.requests import append_requests
from tests.servers.fake_google import FakeDocs, FakeGoogle


@pytest.fixture
def fake() -> FakeDocs:
    google = FakeGoogle()  # not started: the requests are applied directly
    fake = FakeDocs(google)
    yield fake
    assert google.violations == []


def round_trip(fake: FakeDocs, markdown: str) -> str:
    stored = fake.add("T")
    plan = append_requests(parse(markdown), stored.end, True)
    fake.edit(stored.id, plan.requests)
    assert plan.end == stored.end, "the plan's idea of the end index must be Google's"
    return to_markdown(fake._view(stored, False))


@pytest.mark.parametrize(
    "markdown",
    [
        "**a***b*\n",
        "**bold *and italic* text**\n",
        "*a **b***\n",
        "**bold ~~and struck~~** then [a **bold** link](https://e.example) and <https://e.example/x>\n",
        "~~gone~~ and ~single~ \\~\n",
        "Line one\\\nline two\n",
        "\\# not a heading\n\n\\- not a list\n\n1\\. not numbered\n",
        "| a \\| b | c |\n| --- | --- |\n| 1 | 2 |\n",
        "Para\n\n| a |\n| --- |\n\n| b |\n| --- |\n",
        "| only |\n| --- |\n\nafter\n",
        "text `a*b` end\n",
        "Emoji 😀😀 **bold 😀** [l😀](https://e.example) é\u0301\n",
        "<https://auto.example/x>\n",
        "snake_case stays, *under* is \\_escaped\\_ only at edges: 2\\*3\n",
        "- a\n  - b\n    - c\n      - d\n- e\n\n1. one\n2. two\n",
        "```\nfenced *not* emphasis\n    indented\n```\n",
    ],
)
def test_markdown_reads_back_as_written(fake: FakeDocs, markdown: str) -> None:
    assert round_trip(fake, markdown) == markdown


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("a_b_c and _under_ and __strong__\n", "a_b_c and *under* and **strong**\n"),
        ("- a\n\n- b\n", "- a\n- b\n"),
        ("1. x\n1. y\n1. z\n", "1. x\n2. y\n3. z\n"),
        ("Setext\n======\n\nSub\n---\n", "# Setext\n\n## Sub\n"),
        ("> quoted text\n", "quoted text\n"),
        ("Soft\nwrapped line\n", "Soft wrapped line\n"),
        ("Trailing spaces  \nbreak\n", "Trailing spaces\\\nbreak\n"),
        ("***\n\nafter a rule\n", "after a rule\n"),
        ("# Title #\n", "# Title\n"),
        ("- bullets\n  1. nested numbers follow their list\n", "- bullets\n  - nested numbers follow their list\n"),
    ],
)
def test_markdown_docs_cannot_hold_reads_back_in_its_canonical_form(fake: FakeDocs, written: str, read: str) -> None:
    assert round_trip(fake, written) == read


def test_inline_spans_follow_commonmark_emphasis() -> None:
    assert parse_inline("**a** and *b* and ***c***") == [
        Span("a", bold=True),
        Span(" and "),
        Span("b", italic=True),
        Span(" and "),
        Span("c", bold=True, italic=True),
    ]
    assert parse_inline("2*3*4 = 24") == [Span("2"), Span("3", italic=True), Span("4 = 24")]
    assert parse_inline("unclosed **bold") == [Span("unclosed **bold")]
    assert parse_inline('[x **y**](https://e.example/a?b=1 "title")') == [
        Span("x ", link="https://e.example/a?b=1"),
        Span("y", bold=True, link="https://e.example/a?b=1"),
    ]
    assert parse_inline("`**not bold**`") == [Span("**not bold**", code=True)]
    assert parse_inline("\\*literal\\* \\[x\\](y)") == [Span("*literal* [x](y)")]
    assert parse_inline("[no target] and [empty]()") == [Span("[no target] and empty")]
    assert parse_inline("see ![a chart](https://e.example/c.png)") == [
        Span("see "),
        Span("a chart", link="https://e.example/c.png"),
    ]
    assert parse_inline("[click](javascript:alert(1)) [mail](mailto:a@b.example)") == [
        Span("click "),
        Span("mail", link="mailto:a@b.example"),
    ]


def test_blocks_carry_headings_list_levels_and_tables() -> None:
    blocks = parse("# H\n\ntext\n\n- a\n    - b\n1. c\n\n| x | y |\n|:-|-:|\n| 1 |\n")
    assert blocks[0] == Paragraph([Span("H")], heading=1)
    assert blocks[1] == Paragraph([Span("text")])
    assert [(b.text, b.list_kind, b.level) for b in blocks[2:5]] == [
        ("a", "bullet", 0),
        ("b", "bullet", 1),
        ("c", "number", 0),
    ]
    table = blocks[5]
    assert isinstance(table, Table) and table.rows == [[[Span("x")], [Span("y")]], [[Span("1")], []]]


def test_indexes_count_utf16_code_units() -> None:
    assert u16("a") == 1 and u16("é") == 1 and u16("😀") == 2 and u16("👩‍👩‍👧") == 8
    requests = append_requests(parse("😀 **b**"), 2, True).requests
    bold = [r["updateTextStyle"] for r in requests if r.get("updateTextStyle", {}).get("fields") == "bold"]
    assert bold == [{"range": {"startIndex": 4, "endIndex": 5}, "textStyle": {"bold": True}, "fields": "bold"}]


def test_control_characters_google_strips_are_dropped_before_counting(fake: FakeDocs) -> None:
    assert round_trip(fake, "a\x01b\x1b[31m **c**\ue000\n") == "ab\\[31m **c**\n"


def test_nested_lists_of_mixed_kinds_read_by_each_levels_glyph() -> None:
    """A list made in the Docs editor may number one level and bullet another."""
    document = {
        "lists": {
            "kix.1": {
                "listProperties": {
                    "nestingLevels": [{"glyphSymbol": "●"}, {"glyphType": "DECIMAL"}, {"glyphType": "ROMAN"}]
                }
            }
        },
        "body": {
            "content": [
                {"endIndex": 1, "sectionBreak": {}},
                *[
                    {
                        "paragraph": {
                            "elements": [{"textRun": {"content": text + "\n", "textStyle": {}}}],
                            "bullet": {"listId": "kix.1", **({"nestingLevel": level} if level else {})},
                        }
                    }
                    for text, level in [("a", 0), ("b", 1), ("c", 1), ("d", 2), ("e", 0), ("f", 1)]
                ],
            ]
        },
    }
    assert to_markdown(document) == "- a\n  1. b\n  2. c\n     1. d\n- e\n  1. f\n"


def test_a_document_read_with_tabs_renders_its_first_tab() -> None:
    body = {"content": [{"paragraph": {"elements": [{"textRun": {"content": "In a tab\n"}}]}}]}
    assert to_markdown({"tabs": [{"documentTab": {"body": body}}]}) == "In a tab\n"
    assert to_markdown({"title": "nothing"}) == ""


_PIECES = [
    "# ",
    "## ",
    "- ",
    "  - ",
    "    - ",
    "1. ",
    "   1. ",
    "**",
    "*",
    "_",
    "~~",
    "`",
    "[a](https://e.x)",
    "\\",
    "| a | b |\n| --- | --- |\n| 1 | 2 |\n",
    "```\n",
    "\n",
    "\n\n",
    "word",
    " ",
    "😀",
    "é",
    "\t",
    "|",
    "<br>",
    "> ",
    "***",
    "  \n",
    "\\\n",
    "<https://a.b/c>",
    "[",
    "]",
    "(",
    ")",
    "#",
    "1) ",
    "~~~\n",
    "x_y",
    "a*b",
    "---\n",
    "a.",
]


@given(st.lists(st.sampled_from(_PIECES), max_size=40), st.booleans())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_markdown_becomes_requests_google_accepts_with_the_end_index_right(
    fake: FakeDocs, pieces: list[str], after_text: bool
) -> None:
    stored = fake.add("T")
    if after_text:  # appending after a paragraph with text, as docs.append does
        fake.edit(stored.id, [{"insertText": {"location": {"index": 1}, "text": "Existing **text**"}}])
    markdown = "".join(pieces)
    blocks = parse(markdown)
    if not blocks:
        return
    plan = append_requests(blocks, stored.end, not after_text)
    fake.edit(stored.id, plan.requests)
    assert plan.end == stored.end and fake.google.violations == []
    once = to_markdown(fake._view(stored, False))
    assert not once or round_trip(fake, once) == once  # what it reads back is written back the same


def test_text_only_suggested_is_not_read_and_suggested_deletions_still_are() -> None:
    """The default view of an editor holds suggestions inline; the document's text is without them."""
    from mcp_tools.servers.docs.service import count_matches

    runs = [
        {"textRun": {"content": "Budget is "}},
        {"textRun": {"content": "ten", "suggestedDeletionIds": ["suggest.1"]}},
        {"textRun": {"content": "twelve", "suggestedInsertionIds": ["suggest.2"]}},
        {"textRun": {"content": " million.\n"}},
    ]
    document = {"body": {"content": [{"paragraph": {"elements": runs}}]}}
    assert to_markdown(document) == "Budget is ten million.\n"
    assert count_matches(document, "twelve", True) == 0 and count_matches(document, "ten", True) == 1
