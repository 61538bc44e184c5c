"""Writing, second half: blocks turned into the batchUpdate requests that append them, indexes in UTF-16."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_tools.servers.docs.markdown import CODE_FONT, Block, Paragraph, Span, Table, u16

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
