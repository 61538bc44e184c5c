"""Google Docs structure <-> Markdown, with no Google library: the blocks both directions share.

Reading (`render.py`): `to_markdown(document)` renders the body's structural elements (headings,
bulleted and numbered lists with nesting, tables, code paragraphs in a monospace font, bold,
italic, strikethrough, inline code and links) as Markdown.

Writing: `parse(markdown)` (`parse.py`) gives blocks (paragraphs with inline spans, list items
with their level, tables); `append_requests(blocks, end, last_empty)` (`requests.py`) gives the
batchUpdate requests that append them to a body whose end index is `end`, computing every index
in UTF-16 code units. Nested lists are written as Google builds them: leading tabs, which
`createParagraphBullets` turns into nesting levels and removes (so lists are bulleted last, from
the end backwards).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MONOSPACE = frozenset(
    {"courier new", "courier", "consolas", "roboto mono", "source code pro", "inconsolata", "monospace"}
)
CODE_FONT = "Courier New"
ORDERED_GLYPHS = frozenset({"DECIMAL", "ZERO_DECIMAL", "UPPER_ALPHA", "ALPHA", "UPPER_ROMAN", "ROMAN"})
HEADINGS = {f"HEADING_{n}": n for n in range(1, 7)} | {"TITLE": 1}
MAX_LEVEL = 8
# Characters Google strips from inserted text: dropped here first so computed indexes stay true.
_STRIPPED = re.compile("[\x00-\x08\x0c-\x1f\ue000-\uf8ff]")
_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
LINK_SCHEMES = re.compile(r"(https?://|mailto:|tel:|#)", re.IGNORECASE)  # links written into a document
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def u16(text: str) -> int:
    """Length in UTF-16 code units: Google's index unit."""
    return len(text.encode("utf-16-le")) // 2


@dataclass(frozen=True)
class Span:
    text: str
    bold: bool = False
    italic: bool = False
    strike: bool = False
    code: bool = False
    link: str | None = None

    def style(self) -> tuple[bool, bool, bool, bool, str | None]:
        return (self.bold, self.italic, self.strike, self.code, self.link)


@dataclass
class Paragraph:
    spans: list[Span]
    heading: int = 0  # 1-6
    list_kind: str = ""  # "bullet", "number" or "" (not a list item)
    level: int = 0
    code: bool = False

    @property
    def text(self) -> str:
        return "".join(span.text for span in self.spans)


@dataclass
class Table:
    rows: list[list[list[Span]]] = field(default_factory=list)


Block = Paragraph | Table
