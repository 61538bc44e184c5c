"""Google Docs structure <-> Markdown, with no Google library: plain dicts in, plain dicts out.

Reading: `to_markdown(document)` renders the body's structural elements (headings, bulleted
and numbered lists with nesting, tables, code paragraphs in a monospace font, bold, italic,
strikethrough, inline code and links) as Markdown.

Writing: `parse(markdown)` gives blocks (paragraphs with inline spans, list items with their
level, tables); `append_requests(blocks, end, last_empty)` gives the batchUpdate requests that
append them to a body whose end index is `end`, computing every index in UTF-16 code units.
Nested lists are written as Google builds them: leading tabs, which `createParagraphBullets`
turns into nesting levels and removes (so lists are bulleted last, from the end backwards).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

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


# ============================================================================================
# Reading: document -> Markdown
# ============================================================================================


def body_of(document: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The body content and lists of a document (or of its first tab, when fetched with tabs)."""
    if "body" in document:
        return document["body"].get("content", []), document.get("lists", {})
    for tab in document.get("tabs", []):
        inner = tab.get("documentTab", {})
        return inner.get("body", {}).get("content", []), inner.get("lists", {})
    return [], {}


def to_markdown(document: dict[str, Any]) -> str:
    content, lists = body_of(document)
    text = _Renderer(lists).blocks(content).strip("\n")
    return text + "\n" if text else ""


def _escape(text: str, in_table: bool = False) -> str:
    text = text.replace("\\", "\\\\")
    text = re.sub(r"([*`\[\]])", r"\\\1", text)
    text = re.sub(r"~(?=~)|(?<=~)~|^~|~$", r"\\~", text)  # ~~ strikes; a lone ~ only at an edge
    text = re.sub(r"<(?=[A-Za-z/!])", r"\\<", text)
    # `_` opens emphasis only next to a non-word character; snake_case stays readable.
    text = re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\\_", text)
    if in_table:
        text = text.replace("|", "\\|")
    return text


def _escape_line_start(line: str) -> str:
    """Text that would read as a block marker at the start of a line is escaped."""
    if re.match(r"(#{1,6}(\s|$)|>|[-+](\s|$)|=+\s*$|-[ \t-]*$|\d{1,9}[.)](\s|$))", line):
        match = re.match(r"\d+", line)
        return line[: match.end()] + "\\" + line[match.end() :] if match else "\\" + line
    return line


class _Renderer:
    def __init__(self, lists: dict[str, Any]) -> None:
        self.lists = lists
        self.counters: dict[tuple[str, int], int] = {}
        self.indents: dict[int, int] = {}  # level -> where its text starts (any list)

    def _ordered(self, list_id: str, level: int) -> bool:
        levels = self.lists.get(list_id, {}).get("listProperties", {}).get("nestingLevels", [])
        glyph = levels[level].get("glyphType", "") if level < len(levels) else ""
        return glyph in ORDERED_GLYPHS

    def blocks(self, content: list[dict[str, Any]]) -> str:
        out: list[str] = []
        previous = ""  # the list id of the last paragraph when it was a list item: how the next joins
        code_lines: list[str] = []
        blank = 0  # empty paragraphs seen inside a code block: its blank lines, if more code follows

        def flush_code() -> None:
            nonlocal blank
            blank = 0
            if code_lines:
                runs = [len(found.group(1)) for line in code_lines if (found := _FENCE.match(line))]
                fence = "`" * max([3] + [run + 1 for run in runs])
                out.append(("\n\n" if out else "") + fence + "\n" + "\n".join(code_lines) + "\n" + fence)
                code_lines.clear()

        for element in content:
            if "table" in element:
                flush_code()
                out.append(("\n\n" if out else "") + self.table(element["table"]))
                previous = ""
                continue
            paragraph = element.get("paragraph")
            if paragraph is None:
                continue
            runs = _runs(paragraph)
            if code_lines and not runs and not paragraph.get("bullet"):
                blank += 1
                continue
            if runs and all(code for _, code, *_ in runs) and not paragraph.get("bullet"):
                code_lines.extend([""] * blank)
                code_lines.append("".join(text for text, *_ in runs).replace("\v", "\n"))
                blank = 0
                previous = ""
                continue
            flush_code()
            line = self.paragraph(paragraph, runs)
            if line is None:
                continue
            list_id = (paragraph.get("bullet") or {}).get("listId", "")
            joiner = "\n" if list_id and list_id == previous else "\n\n"
            out.append((joiner if out else "") + line)
            previous = list_id
        flush_code()
        return "".join(out)

    def paragraph(self, paragraph: dict[str, Any], runs: list[tuple[Any, ...]]) -> str | None:
        text = _inline(runs)
        while text != (text := text.strip(" \t").removeprefix("\\\n").removesuffix("\\\n")):
            pass  # Markdown drops a paragraph's outer spaces and line breaks anyway
        bullet = paragraph.get("bullet")
        if bullet and text:
            list_id, level = bullet.get("listId", ""), int(bullet.get("nestingLevel") or 0)
            for key in [key for key in self.counters if key[0] == list_id and key[1] > level]:
                del self.counters[key]
            indent = self.indents.get(level - 1, 0) if level else 0
            if self._ordered(list_id, level):
                number = self.counters.get((list_id, level), 0) + 1
                self.counters[(list_id, level)] = number
                marker = f"{number}. "
            else:
                marker = "- "
            self.indents[level] = indent + len(marker)
            lines = [_escape_line_start(line) for line in text.split("\\\n")]
            text = ("\\\n" + " " * (indent + len(marker))).join(lines)
            return " " * indent + marker + text
        if not text.strip():
            return None
        named = (paragraph.get("paragraphStyle") or {}).get("namedStyleType", "")
        if named in HEADINGS:
            text = text.replace("\\\n", " ").strip(" \t")
            closing = re.search(r"(^|[ \t])#+[ \t]*$", text)  # would read as the optional closing #s
            if closing:
                text = text[: closing.start()] + closing.group(0).replace("#", "\\#")
            return "#" * HEADINGS[named] + " " + text
        return "\\\n".join(_escape_line_start(line) for line in text.split("\\\n"))

    def table(self, table: dict[str, Any]) -> str:
        rows = []
        for row in table.get("tableRows", []):
            cells = []
            for cell in row.get("tableCells", []):
                pieces = []
                for element in cell.get("content", []):
                    if "paragraph" in element:
                        piece = _inline(_runs(element["paragraph"]), in_table=True).strip(" \t")
                        if piece.strip():
                            pieces.append(piece.replace("\\\n", "<br>"))
                cells.append("<br>".join(pieces))
            rows.append(cells)
        if not rows:
            return ""
        columns = max(len(row) for row in rows) or 1
        lines = ["| " + " | ".join(row + [""] * (columns - len(row))) + " |" for row in rows]
        lines.insert(1, "| " + " | ".join(["---"] * columns) + " |")
        return "\n".join(line.replace("|  |", "| |") for line in lines)


def _runs(paragraph: dict[str, Any]) -> list[tuple[Any, ...]]:
    """(text, code, bold, italic, strike, link) per text run, the paragraph's newline dropped."""
    runs = []
    for element in paragraph.get("elements", []):
        run = element.get("textRun")
        if run is None or run.get("suggestedInsertionIds"):
            continue  # text someone only suggested is not the document's (yet)
        text = run.get("content", "").replace("\n", "")
        if not text:
            continue
        style = run.get("textStyle") or {}
        family = (style.get("weightedFontFamily") or {}).get("fontFamily", "").lower()
        link = (style.get("link") or {}).get("url")
        runs.append(
            (
                text,
                family in MONOSPACE,
                bool(style.get("bold")),
                bool(style.get("italic")),
                bool(style.get("strikethrough")),
                link,
            )
        )
    return runs


MARKS = (("bold", "**"), ("italic", "*"), ("strike", "~~"))
BLANK = " \t\v"  # emphasis can neither open nor close next to these
_BLANK_EDGES = re.compile(r"((?:[ \t]|\\\n)*)(.*?)((?:[ \t]|\\\n)*)", re.DOTALL)


def _inline(runs: list[tuple[Any, ...]], in_table: bool = False) -> str:
    """Runs as inline Markdown; runs of one link form one link; emphasis opens and closes only
    where the style changes (a stack), and never inside the whitespace at a run's edges."""
    merged: list[list[Any]] = []
    for text, *style in runs:
        if merged and merged[-1][1:] == style:
            merged[-1][0] += text
        else:
            merged.append([text, *style])
    out: list[str] = []
    index = 0
    while index < len(merged):
        link = merged[index][5]
        group = []
        while index < len(merged) and merged[index][5] == link:
            group.append(merged[index])
            index += 1
        text = "".join(item[0] for item in group)
        plain = all(not (code or bold or italic or strike) for _, code, bold, italic, strike, _ in group)
        if link and plain and text == link:
            out.append(f"<{link}>")
        elif link and text.strip(" \t"):
            lead, core, tail = _BLANK_EDGES.fullmatch(_emphasis(group, in_table)).groups()  # type: ignore[union-attr]
            out.append(f"{lead}[{core}]({_link_target(link)}){tail}")
        else:
            out.append(_emphasis(group, in_table))
    return "".join(out)


def _emphasis(group: list[list[Any]], in_table: bool) -> str:
    out: list[str] = []
    stack: list[str] = []  # markers open, innermost last
    wants = [{"bold": item[2], "italic": item[3], "strike": item[4]} for item in group]
    blank = [not item[1] and not item[0].strip(BLANK) for item in group]

    def lasting(name: str, start: int) -> int:
        """How many runs from `start` keep the style (whitespace keeps whatever is open)."""
        count = 0
        while start + count < len(group) and (wants[start + count][name] or blank[start + count]):
            count += 1
        return count

    for number, (text, code, _bold, _italic, _strike, _) in enumerate(group):
        wanted = wants[number]
        core = text.strip(BLANK)
        if not core and not code:
            out.append(text.replace("\v", "\\\n"))  # whitespace: styles stay as they are around it
            continue
        lead, tail = (
            ("", "") if code else (text[: len(text) - len(text.lstrip(BLANK))], text[len(text.rstrip(BLANK)) :])
        )
        lead, tail = lead.replace("\v", "\\\n"), tail.replace("\v", "\\\n")
        keep = 0
        while keep < len(stack) and wanted[stack[keep]]:
            keep += 1
        closing = "".join(dict(MARKS)[name] for name in reversed(stack[keep:]))
        del stack[keep:]
        opening = [name for name, _ in MARKS if wanted[name] and name not in stack]
        opening.sort(key=lambda name: -lasting(name, number))  # the longest-lasting outermost
        stack.extend(opening)
        _close_before_blank(out, closing)
        out.append(lead + "".join(dict(MARKS)[name] for name in opening))
        if code:  # spaces stay inside a code span
            body = text.replace("\v", " ")
            ticks = "`" * (max((len(run) for run in re.findall("`+", body)), default=0) + 1)
            padded = body.startswith("`") or body.endswith("`") or (body[0] == body[-1] == " " and body.strip() != "")
            piece = ticks + (f" {body} " if padded else body) + ticks
            out.append(piece.replace("|", "\\|") if in_table else piece)
        else:
            out.append(_escape(core, in_table).replace("\v", "\\\n"))
        # whitespace at the end goes after the markers closing here, or stays inside when they go on
        out.append(tail)
    _close_before_blank(out, "".join(dict(MARKS)[name] for name in reversed(stack)))
    return "".join(out)


def _close_before_blank(out: list[str], closing: str) -> None:
    """Closing markers go before the whitespace that ends what is written so far (to close, a
    marker must follow text, not a space)."""
    blank: list[str] = []
    while out and _BLANK_EDGES.fullmatch(out[-1]).group(2) == "":  # type: ignore[union-attr]
        blank.insert(0, out.pop())
    out.append(closing)
    out.extend(blank)


def _link_target(url: str) -> str:
    return f"<{url}>" if re.search(r"[\s()<>]", url) else url


# ============================================================================================
# Writing: Markdown -> blocks
# ============================================================================================

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_ITEM = re.compile(r"^([ \t]*)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*)|$)")
_TABLE_SEPARATOR = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_LINK_TARGET = re.compile(r"\(\s*(<[^<>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+\"[^\"]*\")?\s*\)")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


def clean(text: str) -> str:
    """Line ends normalised and what Google would strip removed, before any index is computed."""
    return _STRIPPED.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def parse(markdown: str) -> list[Block]:
    lines = clean(markdown).split("\n")
    blocks: list[Block] = []
    paragraph: list[str] = []
    indents: list[int] = []  # open list levels' indentation
    index = 0

    def flush() -> None:
        if paragraph:
            blocks.append(Paragraph(_inline_lines(paragraph)))
            paragraph.clear()

    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if not stripped:
            flush()
            index += 1
            continue
        fence = _opening_fence(line)
        if fence:
            flush()
            indents.clear()
            marker, body = fence.group(1), []
            index += 1
            while index < len(lines) and not _closes(lines[index], marker):
                body.append(lines[index])
                index += 1
            index += 1
            while body and not body[-1]:
                body.pop()
            blocks.extend(Paragraph([Span(text, code=True)] if text else [], code=True) for text in body)
            continue
        heading = _HEADING.match(line)
        if heading:
            flush()
            indents.clear()
            blocks.append(Paragraph(parse_inline(heading.group(2) or ""), heading=len(heading.group(1))))
            index += 1
            continue
        if paragraph and _SETEXT.match(line) and not indents:
            level = 1 if line.strip().startswith("=") else 2
            blocks.append(Paragraph(_inline_lines(paragraph), heading=level))
            paragraph.clear()
            index += 1
            continue
        if _RULE.match(line):
            flush()
            indents.clear()
            index += 1
            continue
        if "|" in line and index + 1 < len(lines) and _TABLE_SEPARATOR.match(lines[index + 1]) and not paragraph:
            indents.clear()
            table = Table([_cells(line)])
            index += 2
            while index < len(lines) and "|" in lines[index] and lines[index].strip():
                table.rows.append(_cells(lines[index]))
                index += 1
            columns = max(len(row) for row in table.rows)
            table.rows = [row + [[]] * (columns - len(row)) for row in table.rows]
            blocks.append(table)
            continue
        item = _ITEM.match(line)
        if item and (item.group(3) or "").strip():
            flush()
            indent = len(item.group(1).expandtabs(4))
            while indents and indent < indents[-1]:
                indents.pop()
            if not indents or indent > indents[-1]:
                indents.append(indent)
            level = min(len(indents) - 1, MAX_LEVEL)
            kind = "number" if item.group(2)[0].isdigit() else "bullet"
            text = [item.group(3).strip()]
            index += 1
            # lazy continuation lines of the item
            while index < len(lines) and lines[index].strip() and not _starts_block(lines[index]):
                text.append(lines[index].strip())
                index += 1
            blocks.append(Paragraph(_without_leading_tabs(_inline_lines(text)), list_kind=kind, level=level))
            continue
        if not paragraph:
            indents.clear()
        if stripped.startswith(">"):
            line = re.sub(r"^\s*(>\s?)+", "", line)
        paragraph.append(line.strip() if not line.endswith("  ") else line.strip() + "  ")
        index += 1
    flush()
    return [block for block in blocks if not isinstance(block, Paragraph) or block.text or block.code]


def _opening_fence(line: str) -> re.Match[str] | None:
    """A code fence opener; a backtick fence's info string may hold no backtick (CommonMark)."""
    found = _FENCE.match(line)
    if found and found.group(1)[0] == "`" and "`" in line[found.end() :]:
        return None
    return found


def _without_leading_tabs(spans: list[Span]) -> list[Span]:
    """Leading tabs of a list item would count as nesting levels when its bullet is made."""
    while spans and spans[0].text.startswith("\t"):
        rest = spans[0].text.lstrip("\t")
        spans = ([Span(rest, *spans[0].style())] if rest else []) + spans[1:]
    return spans


def _closes(line: str, marker: str) -> bool:
    found = _FENCE.match(line)
    if found is None or found.group(1)[0] != marker[0] or len(found.group(1)) < len(marker):
        return False
    return not line[found.end() :].strip()


def _starts_block(line: str) -> bool:
    item = _ITEM.match(line)
    if item and (item.group(3) or "").strip():
        return True
    return bool(_HEADING.match(line) or _opening_fence(line) or _RULE.match(line))


def _inline_lines(lines: list[str]) -> list[Span]:
    """A paragraph's lines joined: a line ending in a backslash or two spaces breaks the line."""
    joined = ""
    for number, line in enumerate(lines):
        last = number == len(lines) - 1
        if line.endswith("  ") and not last:
            joined += line.rstrip() + "\v"
        elif (len(line) - len(line.rstrip("\\"))) % 2 and not last:  # an odd count: the last one breaks
            joined += line[:-1] + "\v"
        else:
            joined += line.strip() + ("" if last else " ")
    return parse_inline(joined.strip(" \t\v"))


def _cells(line: str) -> list[list[Span]]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells = re.split(r"(?<!\\)\|", line)
    return [parse_inline(cell.strip().replace("\\|", "|").replace("<br>", "\v")) for cell in cells]


# --- inline: CommonMark's delimiter algorithm, reduced to what Docs can hold --------------------


@dataclass
class _Delimiter:
    char: str
    count: int
    can_open: bool
    can_close: bool
    node: int  # position in the node list


def parse_inline(text: str) -> list[Span]:
    return _merge(_flatten(_parse_nodes(text), Span("")))


def _parse_nodes(text: str) -> list[Any]:
    """Nodes: str (text), ("code", text), ("link", url, nodes), ("wrap", style, nodes)."""
    nodes: list[Any] = []
    delimiters: list[_Delimiter] = []
    position = 0
    buffer = ""

    def push_text() -> None:
        nonlocal buffer
        if buffer:
            nodes.append(buffer)
            buffer = ""

    while position < len(text):
        char = text[position]
        if char == "\\" and position + 1 < len(text) and text[position + 1] in _PUNCT:
            buffer += text[position + 1]
            position += 2
            continue
        if char == "`":
            ticks = re.match(r"`+", text[position:]).group(0)  # type: ignore[union-attr]
            runs = re.finditer(r"`+", text[position + len(ticks) :])
            closing = next((run for run in runs if len(run.group(0)) == len(ticks)), None)
            close = position + len(ticks) + closing.start() if closing else -1
            if close != -1:
                push_text()
                inner = text[position + len(ticks) : close].replace("\v", " ")
                if inner.startswith(" ") and inner.endswith(" ") and inner.strip():
                    inner = inner[1:-1]
                nodes.append(("code", inner))
                position = close + len(ticks)
                continue
            buffer += ticks
            position += len(ticks)
            continue
        if char == "<":
            auto = re.match(r"<((?:https?|mailto):[^\s<>]+)>", text[position:])
            if auto:
                push_text()
                nodes.append(("link", auto.group(1), [auto.group(1)]))
                position += auto.end()
                continue
        if char == "[":
            link = _match_link(text, position)
            if link is not None:
                if buffer.endswith("!") and not buffer.endswith("\\!"):
                    buffer = buffer[:-1]  # an image: written as a link to it, its alt text the label
                push_text()
                label, url, end = link
                nodes.append(("link", url, _parse_nodes(label)) if url else ("wrap", "", _parse_nodes(label)))
                position = end
                continue
        if char in "*_~":
            run = re.match(re.escape(char) + "+", text[position:]).group(0)  # type: ignore[union-attr]
            before = text[position - 1] if position else " "
            after = text[position + len(run)] if position + len(run) < len(text) else " "
            left = not after.isspace() and (not _is_punct(after) or before.isspace() or _is_punct(before))
            right = not before.isspace() and (not _is_punct(before) or after.isspace() or _is_punct(after))
            if char == "_":
                can_open = left and (not right or _is_punct(before))
                can_close = right and (not left or _is_punct(after))
            else:
                can_open, can_close = left, right
            if char == "~" and len(run) != 2:
                can_open = can_close = False
            push_text()
            if can_open or can_close:
                delimiters.append(_Delimiter(char, len(run), can_open, can_close, len(nodes)))
            nodes.append(run)
            position += len(run)
            continue
        buffer += char
        position += 1
    push_text()
    return _resolve(nodes, delimiters)


def _is_punct(char: str) -> bool:
    return char in _PUNCT or (not char.isalnum() and not char.isspace())


def _match_link(text: str, start: int) -> tuple[str, str, int] | None:
    depth, position = 0, start
    while position < len(text):
        char = text[position]
        if char == "\\":
            position += 2
            continue
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                break
        position += 1
    else:
        return None
    label = text[start + 1 : position]
    target = _LINK_TARGET.match(text[position + 1 :])
    if target is None:
        return None
    url = target.group(1)
    url = url[1:-1] if url.startswith("<") else url
    url = re.sub(r"\\([" + re.escape(_PUNCT) + "])", r"\1", url)
    return label, url, position + 1 + target.end()


def _resolve(nodes: list[Any], delimiters: list[_Delimiter]) -> list[Any]:
    """Pair emphasis delimiters as CommonMark does (closest opener, the rule of three)."""
    closer_index = 0
    while closer_index < len(delimiters):
        closer = delimiters[closer_index]
        if not closer.can_close or closer.count == 0:
            closer_index += 1
            continue
        opener_index = closer_index - 1
        while opener_index >= 0:
            opener = delimiters[opener_index]
            if opener.char == closer.char and opener.can_open and opener.count > 0:
                odd = (opener.can_close or closer.can_open) and (opener.count + closer.count) % 3 == 0
                if not odd or (opener.count % 3 == 0 and closer.count % 3 == 0) or closer.char == "~":
                    break
            opener_index -= 1
        if opener_index < 0:
            closer_index += 1
            continue
        opener = delimiters[opener_index]
        use = 2 if opener.count >= 2 and closer.count >= 2 else 1
        style = "strike" if closer.char == "~" else ("bold" if use == 2 else "italic")
        inner = nodes[opener.node + 1 : closer.node]
        opener.count -= use
        closer.count -= use
        nodes[opener.node] = opener.char * opener.count
        nodes[closer.node] = closer.char * closer.count
        wrapped = ("wrap", style, inner)
        removed = len(inner) - 1
        nodes[opener.node + 1 : closer.node] = [wrapped]
        for later in delimiters[opener_index + 1 :]:
            later.node -= removed
        del delimiters[opener_index + 1 : closer_index]
        closer_index = opener_index + 1
        if opener.count == 0:
            pass
    return nodes


def _flatten(nodes: list[Any], style: Span) -> list[Span]:
    spans: list[Span] = []
    for node in nodes:
        if isinstance(node, str):
            if node:
                spans.append(Span(node, style.bold, style.italic, style.strike, style.code, style.link))
        elif node[0] == "code":
            spans.append(Span(node[1], style.bold, style.italic, style.strike, True, style.link))
        elif node[0] == "link":
            url = node[1] if LINK_SCHEMES.match(node[1]) else style.link  # javascript: and the like: text only
            inner = Span("", style.bold, style.italic, style.strike, style.code, url)
            spans.extend(_flatten(node[2], inner))
        else:
            flag = node[1]
            inner = Span(
                "",
                style.bold or flag == "bold",
                style.italic or flag == "italic",
                style.strike or flag == "strike",
                style.code,
                style.link,
            )
            spans.extend(_flatten(node[2], inner))
    return spans


def _merge(spans: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for span in spans:
        if merged and merged[-1].style() == span.style():
            merged[-1] = Span(merged[-1].text + span.text, *span.style())
        else:
            merged.append(span)
    return merged


# ============================================================================================
# Writing: blocks -> batchUpdate requests
# ============================================================================================

RESET_FIELDS = "bold,italic,strikethrough,link,weightedFontFamily"


def _text_style(span: Span) -> tuple[dict[str, Any], list[str]]:
    style: dict[str, Any] = {}
    if span.bold:
        style["bold"] = True
    if span.italic:
        style["italic"] = True
    if span.strike:
        style["strikethrough"] = True
    if span.link:
        style["link"] = {"url": span.link}
    if span.code:
        style["weightedFontFamily"] = {"fontFamily": CODE_FONT}
    names = {"bold": "bold", "italic": "italic", "strikethrough": "strikethrough", "link": "link"}
    fields = [names[key] for key in style if key in names]
    if span.code:
        fields.append("weightedFontFamily")
    return style, fields


def _style_requests(spans: list[Span], start: int) -> list[dict[str, Any]]:
    requests = []
    position = start
    for span in spans:
        length = u16(span.text)
        style, fields = _text_style(span)
        if fields and length:
            requests.append(
                {
                    "updateTextStyle": {
                        "range": {"startIndex": position, "endIndex": position + length},
                        "textStyle": style,
                        "fields": ",".join(fields),
                    }
                }
            )
        position += length
    return requests


@dataclass
class Plan:
    requests: list[dict[str, Any]]
    end: int  # the body's end index once they are applied


def append_requests(blocks: list[Block], end: int, last_empty: bool) -> Plan:
    """Requests appending the blocks to a body ending at `end` whose last paragraph is empty or not."""
    requests: list[dict[str, Any]] = []
    group: list[Paragraph] = []

    def flush() -> None:
        nonlocal end, last_empty
        if group:
            planned = _paragraph_requests(group, end, last_empty)
            requests.extend(planned.requests)
            end, last_empty = planned.end, False
            group.clear()

    for block in blocks:
        if isinstance(block, Table):
            flush()
            planned = _table_requests(block, end)
            requests.extend(planned.requests)
            end, last_empty = planned.end, True
        else:
            group.append(block)
    flush()
    return Plan(requests, end)


def _paragraph_requests(paragraphs: list[Paragraph], end: int, last_empty: bool) -> Plan:
    insert_at = end - 1  # before the body's final newline
    texts = [("\t" * p.level if p.list_kind else "") + p.text for p in paragraphs]
    lead = "" if last_empty else "\n"
    text = lead + "\n".join(texts)
    requests: list[dict[str, Any]] = [{"insertText": {"location": {"index": insert_at}, "text": text}}]
    first = insert_at + len(lead)
    new_end = end + u16(text)
    # What the inserted text inherited from the paragraph it went into is cleared first.
    whole = {"startIndex": first, "endIndex": new_end - 1}
    if new_end - 1 > first:
        requests.append({"updateTextStyle": {"range": whole, "textStyle": {}, "fields": RESET_FIELDS}})
        requests.append(
            {
                "updateParagraphStyle": {
                    "range": whole,
                    "paragraphStyle": {"namedStyleType": "NORMAL_TEXT"},
                    "fields": "namedStyleType",
                }
            }
        )
        requests.append({"deleteParagraphBullets": {"range": whole}})
    starts = []
    position = first
    for paragraph, line in zip(paragraphs, texts, strict=True):
        starts.append(position)
        length = u16(line)
        tabs = u16(line) - u16(paragraph.text)
        if paragraph.heading and length:
            requests.append(
                {
                    "updateParagraphStyle": {
                        "range": {"startIndex": position, "endIndex": position + length},
                        "paragraphStyle": {"namedStyleType": f"HEADING_{paragraph.heading}"},
                        "fields": "namedStyleType",
                    }
                }
            )
        requests.extend(_style_requests(paragraph.spans, position + tabs))
        position += length + 1
    # Lists last and from the end backwards: creating bullets removes the leading tabs.
    runs: list[tuple[int, int, str]] = []  # (first paragraph, last paragraph, kind)
    for number, paragraph in enumerate(paragraphs):
        if not paragraph.list_kind:
            continue
        if runs and runs[-1][1] == number - 1 and (paragraph.level > 0 or runs[-1][2] == paragraph.list_kind):
            runs[-1] = (runs[-1][0], number, runs[-1][2])
        else:
            runs.append((number, number, paragraph.list_kind if paragraph.level == 0 else "bullet"))
    removed = 0
    for first_item, last_item, kind in reversed(runs):
        stop = starts[last_item] + u16(texts[last_item])
        if stop <= starts[first_item]:
            stop = starts[first_item] + 1
        preset = "NUMBERED_DECIMAL_ALPHA_ROMAN" if kind == "number" else "BULLET_DISC_CIRCLE_SQUARE"
        requests.append(
            {
                "createParagraphBullets": {
                    "range": {"startIndex": starts[first_item], "endIndex": stop},
                    "bulletPreset": preset,
                }
            }
        )
        removed += sum(paragraphs[k].level for k in range(first_item, last_item + 1))
    return Plan(requests, new_end - removed)


def _table_requests(table: Table, end: int) -> Plan:
    rows, columns = len(table.rows), max(len(row) for row in table.rows)
    requests: list[dict[str, Any]] = [{"insertTable": {"rows": rows, "columns": columns, "endOfSegmentLocation": {}}}]
    start = end  # a newline goes in before the table, at end - 1; the table starts after it
    texts = [["".join(span.text for span in cell) for cell in row] for row in table.rows]

    def empty_cell(row: int, column: int) -> int:
        return start + 1 + row * (1 + 2 * columns) + 1 + 2 * column + 1

    for row in reversed(range(rows)):
        for column in reversed(range(columns)):
            if texts[row][column]:
                requests.append(
                    {"insertText": {"location": {"index": empty_cell(row, column)}, "text": texts[row][column]}}
                )
    position = start + 1
    for row in range(rows):
        position += 1
        for column in range(columns):
            position += 1
            length = u16(texts[row][column])
            if length:
                span = {"startIndex": position, "endIndex": position + length}
                requests.append({"updateTextStyle": {"range": span, "textStyle": {}, "fields": RESET_FIELDS}})
                requests.extend(_style_requests(table.rows[row][column], position))
            position += length + 1
    position += 1  # the table's end
    # The empty paragraph after the table keeps the style of the one the table went after; it is
    # not restyled here (a range over it would hold the body's last newline): text appended
    # later goes into it and is reset with the rest, and an empty paragraph is never read.
    return Plan(requests, position + 1)
