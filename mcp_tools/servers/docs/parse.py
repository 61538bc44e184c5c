"""Writing, first half: Markdown parsed into blocks (paragraphs with inline spans, list items, tables)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mcp_tools.servers.docs.markdown import (
    _FENCE,
    _PUNCT,
    _STRIPPED,
    LINK_SCHEMES,
    MAX_LEVEL,
    Block,
    Paragraph,
    Span,
    Table,
)

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
