"""Documents in the fake Docs built request by request, as another editor would, and a signed-in config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp_tools.servers.google import scopes
from tests.servers.fake_google import FakeDocs, FakeGoogle
from tests.servers.fake_google.docs import StoredDocument, width
from tests.servers.gmail.fixtures import sign_in


def docs_settings(
    tmp_path: Path, google: FakeGoogle, granted: list[str] | None = None, access: str = "app"
) -> dict[str, Any]:
    settings = sign_in(tmp_path, google, granted if granted is not None else [scopes.DRIVE_FILE], servers=["docs"])
    settings["docs"] = {"access": access}
    return settings


def index_of(document: StoredDocument, needle: str, nth: int = 0) -> int:
    """The Docs index (UTF-16 units, markers counted) where the nth occurrence of needle starts."""
    chars = [(position, item.char) for position, item in enumerate(document.items) if not item.marker]
    text = "".join(char for _, char in chars)
    found = -1
    for _ in range(nth + 1):
        found = text.index(needle, found + 1)
    return document.starts()[chars[found][0]]


def span(document: StoredDocument, needle: str) -> dict[str, int]:
    start = index_of(document, needle)
    return {"startIndex": start, "endIndex": start + width(needle)}


def planning_doc(docs: FakeDocs, app_access: bool = True) -> StoredDocument:
    """Headings, a bulleted list with a nested level, a numbered list, a link, bold, emoji, a table."""
    stored = docs.add("Project plan", app_access=app_access)
    text = (
        "Project plan\nGoals\nShip the beta\n\tWrite docs\n\tFix bugs\nHire\nSteps\nPlan\nBuild\n"
        "See the 😀 site for more."
    )
    docs.edit(stored.id, [{"insertText": {"location": {"index": 1}, "text": text}}])

    def heading(needle: str, level: str) -> dict[str, Any]:
        return {
            "updateParagraphStyle": {
                "range": span(stored, needle),
                "paragraphStyle": {"namedStyleType": level},
                "fields": "namedStyleType",
            }
        }

    docs.edit(
        stored.id,
        [
            heading("Project plan", "HEADING_1"),
            heading("Goals", "HEADING_2"),
            heading("Steps", "HEADING_2"),
            {
                "updateTextStyle": {
                    "range": span(stored, "site"),
                    "textStyle": {"link": {"url": "https://example.org/site"}},
                    "fields": "link",
                }
            },
            {"updateTextStyle": {"range": span(stored, "more"), "textStyle": {"bold": True}, "fields": "bold"}},
        ],
    )
    numbered = {"startIndex": index_of(stored, "Plan\n"), "endIndex": index_of(stored, "Build") + 5}
    docs.edit(
        stored.id,
        [{"createParagraphBullets": {"range": numbered, "bulletPreset": "NUMBERED_DECIMAL_ALPHA_ROMAN"}}],
    )
    bulleted = {"startIndex": index_of(stored, "Ship"), "endIndex": index_of(stored, "Hire") + 4}
    docs.edit(stored.id, [{"createParagraphBullets": {"range": bulleted, "bulletPreset": "BULLET_DISC_CIRCLE_SQUARE"}}])
    docs.edit(stored.id, [{"insertTable": {"rows": 2, "columns": 2, "endOfSegmentLocation": {}}}])
    # empty cells hold only their newline; fill from the last so earlier indexes stay put
    table_start = next(
        start for start, item in zip(stored.starts(), stored.items, strict=False) if item.marker == "table"
    )
    for row, column, value in [(1, 1, "Lead"), (1, 0, "Ann"), (0, 1, "Role"), (0, 0, "Name")]:
        index = table_start + 1 + row * 5 + 1 + 2 * column + 1
        docs.edit(stored.id, [{"insertText": {"location": {"index": index}, "text": value}}])
    return stored


PLANNING_MARKDOWN = """# Project plan

## Goals

- Ship the beta
  - Write docs
  - Fix bugs
- Hire

## Steps

1. Plan
2. Build

See the 😀 [site](https://example.org/site) for **more**.

| Name | Role |
| --- | --- |
| Ann | Lead |
"""
