"""Pure parsing of one note: frontmatter, headings, tags, links and chunks.

Everything here works on `str` and returns offsets into that string, so that link rewrites
and frontmatter edits can splice the original text and leave every other byte alone.
"""

from __future__ import annotations

import datetime as dt
import operator
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from urllib.parse import unquote

from mcp_tools.servers.notes.plainyaml import plain_frontmatter

FRONTMATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:^|\r?\n)(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.M)
FENCE_RE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
# Each pattern starts with a literal character, so the scanner jumps from candidate to candidate
# (a leading optional group or lookbehind makes it try every position: 3-20x slower on a vault).
# An embed's "!" is looked at before the match: it is never inside the previous match, which
# ends in "]]" or ")".
WIKILINK_RE = re.compile(r"\[\[([^\[\]\n|]*?)(?:\|([^\[\]\n]*))?\]\]")
MDLINK_RE = re.compile(r"\[([^\[\]\n]*(?:\[[^\[\]\n]*\][^\[\]\n]*)*)\]\((<[^>\n]+>|[^)\s]+)(?:[ \t]+\"[^\"\n]*\")?\)")
INLINE_TAG_RE = re.compile(r"#(?<![\w/#&\]]#)([\w\-/]*[^\W\d_][\w\-/]*)")  # "#" not after a word, /, #, & or ]
INLINE_CODE_RE = re.compile(r"`(`*)(?:(?!`\1).)+?`\1")  # a run of backticks, text, the same run
BLOCK_ID_RE = re.compile(r"\^(?<!\S\^)([A-Za-z0-9-]+)[ \t]*\r?$", re.M)  # "^id" after a space or at a line start
# "#" at a line start (as "^" under re.M), written so the scanner can jump to each "#"
HEADING_LINE_RE = re.compile(r"(#(?<![^\n]#)#{0,5})[ \t]+([^\r\n]+?)[ \t]*#*[ \t]*\r?$", re.M)
# A setext underline ("===" or "---" under a paragraph), found from its "\n" so the scanner jumps
SETEXT_UNDERLINE_RE = re.compile(r"\n {0,3}(=+|-+)[ \t]*\r?$", re.M)
NOT_PARAGRAPH_RE = re.compile(r" {4}|[ \t]*(?:\r?$|[-*+>#|]|\d+[.)][ \t]|`{3}|~{3})")  # lines a paragraph cannot hold
CODE_TEXT_RE = re.compile(r"[^\r\n]+")
URL_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")

CHUNK_CHARS = 1500


def name_key(name: str) -> str:
    """How Obsidian compares note names: case-insensitive, Unicode-normalised."""
    if name.isascii():  # NFC leaves ASCII as it is
        return name.casefold()
    return unicodedata.normalize("NFC", name).casefold()


# Heading, Link and Chunk are named tuples: a vault's first index makes hundreds of thousands of
# them, and a tuple is built in half the time of a frozen dataclass.
class Heading(NamedTuple):
    level: int
    text: str
    start: int  # offset of the heading line in the full text
    line_end: int


class Link(NamedTuple):
    kind: str  # "wikilink" | "embed" | "markdown"
    style: str  # "wiki" ([[...]]) or "markdown" ([...](...)); embeds come in both
    target: str  # the note part, decoded: "Folder/Note", "Note.md", "../x.md"
    fragment: str  # "#Heading", "#^block" or ""
    text: str  # alias or link text
    start: int  # offsets of the whole link in the full text
    end: int
    raw: str


class Chunk(NamedTuple):
    heading: str  # "H1 > H2" path, "" before the first heading
    text: str
    start: int
    end: int


@dataclass
class ParsedNote:
    frontmatter: dict[str, Any]
    frontmatter_error: str | None
    body_start: int
    title: str
    tags: list[str]
    aliases: list[str]
    headings: list[Heading]
    links: list[Link]
    chunks: list[Chunk]
    words: int
    block_ids: list[str] = field(default_factory=list)


def split_frontmatter(text: str) -> tuple[str | None, int]:
    """Return the raw YAML (or None) and the offset where the body starts."""
    match = FRONTMATTER_RE.match(text)
    if not match:
        return None, 0
    return match.group(1), match.end()


def parse_yaml(raw: str | None) -> tuple[dict[str, Any], str | None]:
    if raw is None or not raw.strip():
        return {}, None
    plain = plain_frontmatter(raw)  # the common shape, read as YAML reads it without building YAML nodes
    if plain is not None:
        return plain, None
    import yaml

    try:
        data = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml when present
    except yaml.YAMLError as exc:
        return {}, f"frontmatter is not valid YAML: {str(exc).splitlines()[0]}"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, "frontmatter is not a mapping"
    return {str(k): jsonable(v) for k, v in data.items()}, None


def jsonable(value: Any) -> Any:
    """YAML dates and other scalars as JSON-friendly values."""
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def normalize_tag(tag: str) -> str:
    return name_key(tag.strip().lstrip("#").strip("/"))


def frontmatter_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [part for part in re.split(r"[,\s]+", value) if part]
    if isinstance(value, list):
        return [str(v) for v in value if v is not None and str(v).strip()]
    return [str(value)]


def code_mask(body: str) -> list[tuple[int, int]]:
    """Spans (relative to `body`) of fenced code blocks, where nothing is a tag, link or heading."""
    spans: list[tuple[int, int]] = []
    if "```" not in body and "~~~" not in body:
        return spans
    fence: str | None = None
    fence_start = 0
    pos = 0
    for line in body.splitlines(keepends=True):
        match = FENCE_RE.match(line)
        if fence is None and match:
            fence, fence_start = match.group(1), pos
        elif fence is not None and match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
            spans.append((fence_start, pos + len(line)))
            fence = None
        pos += len(line)
    if fence is not None:
        spans.append((fence_start, pos))
    return spans


def _in_spans(offset: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= offset < end for start, end in spans)


def parse_headings(text: str, body_start: int, fences: list[tuple[int, int]]) -> list[Heading]:
    """ATX headings (`# x`, closed `## x ##`) and setext ones (a paragraph over `===` or `---`),
    in order; nothing inside fenced code is a heading."""
    found = HEADING_LINE_RE.finditer(text, body_start)
    if fences:
        atx = [
            Heading(len(match[1]), match[2].strip(), *match.span())
            for match in found
            if not _in_spans(match.start() - body_start, fences)
        ]
    else:
        atx = [Heading(len(match[1]), match[2].strip(), *match.span()) for match in found]
    if "\n=" not in text and "-" not in text:
        return atx
    setext = _setext_headings(text, body_start, fences)
    return sorted(atx + setext, key=lambda heading: heading.start) if setext else atx


def _setext_headings(text: str, body_start: int, fences: list[tuple[int, int]]) -> list[Heading]:
    found: list[Heading] = []
    for match in SETEXT_UNDERLINE_RE.finditer(text, max(body_start - 1, 0)):
        if _in_spans(match.start() - body_start, fences) or match.start() < body_start:
            continue
        lines: list[str] = []  # the paragraph above, read upwards to a blank line or another block
        end, top = match.start(), match.start()
        while True:
            newline = text.rfind("\n", body_start, end)
            line_start = newline + 1 if newline >= 0 else body_start
            line = text[line_start:end]
            if NOT_PARAGRAPH_RE.match(line) or (lines and SETEXT_UNDERLINE_RE.match("\n" + line)):
                break
            lines.insert(0, line.strip())
            top = line_start
            if newline < 0:
                break
            end = newline
        if lines:
            level = 1 if match.group(1)[0] == "=" else 2
            found.append(Heading(level, " ".join(lines), top, match.end()))
    return found


def split_fragment(target: str) -> tuple[str, str]:
    index = target.find("#")
    if index < 0:
        return target, ""
    return target[:index], target[index:]


def _embed_mark(masked: str, start: int) -> int:
    """1 when the link at `start` is an embed ("!" right before it), else 0."""
    return 1 if start and masked[start - 1] == "!" else 0


def parse_links(text: str, body_start: int, masked: str) -> list[Link]:
    """Links found in `masked` (the body with code blanked out), with offsets into `text`."""
    links: list[Link] = []
    for match in WIKILINK_RE.finditer(masked):
        inner, alias = match.groups()
        target, fragment = split_fragment(inner.strip())
        if not target and not fragment:
            continue
        found_at, found_end = match.span()
        bang = _embed_mark(masked, found_at)
        start, end = body_start + found_at - bang, body_start + found_end
        text_of = alias.strip() if alias else ""
        kind = "embed" if bang else "wikilink"
        links.append(Link(kind, "wiki", target.strip(), fragment, text_of, start, end, text[start:end]))
    wiki = len(links)
    for match in _markdown_links(masked):
        label, destination = match.groups()
        if destination.startswith("<"):
            destination = destination[1:-1]
        if URL_SCHEME_RE.match(destination) or destination.startswith("//"):
            continue
        target, fragment = split_fragment(destination)
        found_at, found_end = match.span()
        bang = _embed_mark(masked, found_at)
        start, end = body_start + found_at - bang, body_start + found_end
        kind = "embed" if bang else "markdown"
        links.append(Link(kind, "markdown", unquote(target), unquote(fragment), label, start, end, text[start:end]))
    if wiki and len(links) > wiki:  # each kind is found in order; only the two together need sorting
        links.sort(key=_link_start)
    return links


_link_start = operator.attrgetter("start")


def _markdown_links(masked: str) -> Iterator[re.Match[str]]:
    """MDLINK_RE's matches, looked for only on lines holding "](" (a match never spans lines)."""
    find = masked.find
    found = find("](")
    while found >= 0:
        line_end = find("\n", found)
        if line_end < 0:
            line_end = len(masked)
        yield from MDLINK_RE.finditer(masked, masked.rfind("\n", 0, found) + 1, line_end)
        found = find("](", line_end)


def _mask(body: str, fences: list[tuple[int, int]]) -> str:
    """Blank out code (fenced and inline) keeping offsets, so that matches inside code are ignored."""
    if fences:
        parts = []
        position = 0
        for start, end in fences:
            parts.append(body[position:start])
            parts.append(CODE_TEXT_RE.sub(_blank, body[start:end]))
            position = end
        parts.append(body[position:])
        body = "".join(parts)
    if "`" in body:
        body = INLINE_CODE_RE.sub(_blank, body)
    return body


def _blank(match: re.Match[str]) -> str:
    return " " * (match.end() - match.start())


def parse_inline_tags(body_masked: str) -> list[str]:
    """`#tag` and `#nested/tag`; heading markers never match because '#' must be followed by a word."""
    return INLINE_TAG_RE.findall(body_masked)


def build_chunks(text: str, body_start: int, headings: list[Heading]) -> list[Chunk]:
    """One chunk per section (split further at paragraph breaks when long), keyed by heading path."""
    sections: list[tuple[str, int, int]] = []
    path: list[tuple[int, str]] = []
    boundaries = [*headings]
    first = boundaries[0].start if boundaries else len(text)
    if text[body_start:first].strip():
        sections.append(("", body_start, first))
    ends = [heading.start for heading in boundaries[1:]]
    ends.append(len(text))
    for heading, end in zip(boundaries, ends, strict=False):  # no headings: no sections here
        while path and path[-1][0] >= heading.level:
            path.pop()
        path.append((heading.level, plain_title(heading.text)))
        sections.append((" > ".join([p[1] for p in path]), heading.start, end))
    chunks: list[Chunk] = []
    for heading_path, start, end in sections:
        if end - start <= CHUNK_CHARS:  # most sections: one piece
            piece = text[start:end].strip()
            if piece:
                chunks.append(Chunk(heading_path, piece, start, end))
            continue
        for piece_start, piece_end in _split_long(text, start, end):
            piece = text[piece_start:piece_end].strip()
            if piece:
                chunks.append(Chunk(heading_path, piece, piece_start, piece_end))
    return chunks


def _split_long(text: str, start: int, end: int) -> list[tuple[int, int]]:
    if end - start <= CHUNK_CHARS:
        return [(start, end)]
    pieces: list[tuple[int, int]] = []
    piece_start = start
    while end - piece_start > CHUNK_CHARS:
        cut = text.rfind("\n\n", piece_start + CHUNK_CHARS // 3, piece_start + CHUNK_CHARS)
        if cut < 0:
            cut = text.rfind(" ", piece_start + CHUNK_CHARS // 3, piece_start + CHUNK_CHARS)
        cut = cut + 1 if cut >= 0 else piece_start + CHUNK_CHARS
        pieces.append((piece_start, cut))
        piece_start = cut
    pieces.append((piece_start, end))
    return pieces


TITLE_WIKILINK_RE = re.compile(r"!?\[\[([^\]|]*?)(?:\|([^\]]*))?\]\]")
TITLE_MDLINK_RE = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
TITLE_MARKUP_RE = re.compile(r"\*\*|__|==|~~|`")
TITLE_MARKS_RE = re.compile(r"[\[*_=~`]")  # what each of the three patterns needs to match


def plain_title(text: str) -> str:
    """A title as a person reads it: `An Introduction to [[dataview|Dataview]]` -> `An Introduction to Dataview`."""

    def link_text(match: re.Match[str]) -> str:
        if match.group(2):
            return match.group(2)
        target = re.split(r"[#^]", match.group(1), maxsplit=1)[0]
        return target.rsplit("/", 1)[-1].removesuffix(".md") or match.group(1).lstrip("#^")

    if not TITLE_MARKS_RE.search(text):
        return " ".join(text.split())  # nothing for the patterns below to change
    text = TITLE_WIKILINK_RE.sub(link_text, text)
    text = TITLE_MDLINK_RE.sub(r"\1", text)
    return " ".join(TITLE_MARKUP_RE.sub("", text).split())


def parse_note(text: str, stem: str) -> ParsedNote:
    raw_yaml, body_start = split_frontmatter(text)
    frontmatter, error = parse_yaml(raw_yaml)
    body = text[body_start:]
    fences = code_mask(body)
    headings = parse_headings(text, body_start, fences)
    masked = _mask(body, fences)
    links = parse_links(text, body_start, masked)
    tag_values = frontmatter_list(frontmatter.get("tags", frontmatter.get("tag")))
    tags: list[str] = []
    for tag in [*tag_values, *parse_inline_tags(masked)]:
        normalized = normalize_tag(tag)
        if normalized and normalized not in tags:
            tags.append(normalized)
    aliases = frontmatter_list(frontmatter.get("aliases", frontmatter.get("alias")))
    if isinstance(frontmatter.get("aliases"), str):
        aliases = [a.strip() for a in str(frontmatter["aliases"]).split(",") if a.strip()]
    title = plain_title(str(frontmatter.get("title") or ""))
    if not title:
        first_h1 = next((h for h in headings if h.level == 1), None)
        title = (plain_title(first_h1.text) if first_h1 else "") or stem
    block_ids = BLOCK_ID_RE.findall(masked)
    return ParsedNote(
        frontmatter=frontmatter,
        frontmatter_error=error,
        body_start=body_start,
        title=title,
        tags=tags,
        aliases=aliases,
        headings=headings,
        links=links,
        chunks=build_chunks(text, body_start, headings),
        words=len(masked.split()),
        block_ids=block_ids,
    )


def section_span(text: str, headings: list[Heading], wanted: str) -> tuple[int, int] | None:
    """The span of the section under heading `wanted` (up to the next heading of the same or higher level)."""
    key = name_key(wanted.strip().lstrip("#").strip())
    for index, heading in enumerate(headings):
        if name_key(heading.text) == key:
            end = len(text)
            for later in headings[index + 1 :]:
                if later.level <= heading.level:
                    end = later.start
                    break
            return heading.start, end
    return None
