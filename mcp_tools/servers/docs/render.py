"""Reading: a Google Docs document (plain dicts) rendered as Markdown."""

from __future__ import annotations

import re
from typing import Any

from mcp_tools.servers.docs.markdown import _FENCE, HEADINGS, MONOSPACE, ORDERED_GLYPHS


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
