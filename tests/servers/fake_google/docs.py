"""A stateful fake of the Google Docs API v1: documents.get, documents.create, documents.batchUpdate.

A document's body is kept as Google models it: a flat run of characters (each with its text
style; each newline carrying the style and bullet of the paragraph it ends) and the markers a
table occupies (table start, row, cell, table end: one index each). `documents.get` builds the
structural elements from it with start and end indexes in UTF-16 code units, runs grouped by
text style, the section break at index 0 and the final newline, as Google answers.

`batchUpdate` applies its requests in order to a copy and keeps it only when all succeed; it
checks what Google checks (one kind per request, indexes inside the body and inside a
paragraph, `fields` masks naming real fields, `writeControl.requiredRevisionId` current).
A request our client should never send (an index outside the body, a kind the fake does not
serve) is also recorded in `violations`, which the tests assert empty.
"""

from __future__ import annotations

import bisect
import copy
import itertools
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from tests.servers.fake_google.discovery import Discovery
from tests.servers.fake_google.drive import DOC, drive_entry
from tests.servers.fake_google.server import ApiError, FakeGoogle, Token

SCOPE = "https://www.googleapis.com/auth/"
# Scopes that reach every document the account can open (drive.file reaches only the app's own).
READ_ANY = {SCOPE + name for name in ("documents", "documents.readonly", "drive", "drive.readonly")}
WRITE_ANY = {SCOPE + "documents", SCOPE + "drive"}
# Google strips these from inserted text (C0 controls but tab, newline and vertical tab; private use).
_STRIPPED = re.compile("[\x00-\x08\x0c-\x1f\ue000-\uf8ff]")
NUMBERED = {
    "NUMBERED_DECIMAL_ALPHA_ROMAN": ("DECIMAL", "ALPHA", "ROMAN"),
    "NUMBERED_DECIMAL_ALPHA_ROMAN_PARENS": ("DECIMAL", "ALPHA", "ROMAN"),
    "NUMBERED_DECIMAL_NESTED": ("DECIMAL",),
    "NUMBERED_UPPERALPHA_ALPHA_ROMAN": ("UPPER_ALPHA", "ALPHA", "ROMAN"),
    "NUMBERED_UPPERROMAN_UPPERALPHA_DECIMAL": ("UPPER_ROMAN", "UPPER_ALPHA", "DECIMAL"),
    "NUMBERED_ZERODECIMAL_ALPHA_ROMAN": ("ZERO_DECIMAL", "ALPHA", "ROMAN"),
}
GLYPHS = ("●", "○", "■")
SERVED = {
    "insertText",
    "updateParagraphStyle",
    "createParagraphBullets",
    "deleteParagraphBullets",
    "updateTextStyle",
    "replaceAllText",
    "insertTable",
}


def width(text: str) -> int:
    """Length in UTF-16 code units, as Google counts indexes."""
    return len(text.encode("utf-16-le")) // 2


@dataclass
class Item:
    """One character of the body (`char`), or a table marker (`marker`: table, row, cell, end)."""

    char: str = ""
    marker: str = ""
    style: dict[str, Any] = field(default_factory=dict)
    paragraph: dict[str, Any] | None = None  # on a newline: {"style": {...}, "bullet": {...} | None}

    def __post_init__(self) -> None:
        self.size = 1 if self.marker else width(self.char)


def _newline(style: dict[str, Any] | None = None, named: str = "NORMAL_TEXT") -> Item:
    return Item("\n", style=dict(style or {}), paragraph={"style": {"namedStyleType": named}, "bullet": None})


@dataclass
class StoredDocument:
    id: str
    title: str
    items: list[Item]
    revision: str
    lists: dict[str, Any] = field(default_factory=dict)
    app_access: bool = True  # created by the app or opened with it: reachable with drive.file
    _starts: list[int] | None = field(default=None, repr=False, compare=False)

    def starts(self) -> list[int]:
        """The index of each item, then the end (the section break holds index 0); cached until
        the items change (`changed()`)."""
        if self._starts is None:
            self._starts = list(itertools.accumulate((item.size for item in self.items), initial=1))
        return self._starts

    def changed(self) -> None:
        self._starts = None

    @property
    def end(self) -> int:
        return self.starts()[-1]

    def text(self) -> str:
        return "".join(item.char for item in self.items)


def _bad(message: str) -> ApiError:
    return ApiError(400, message, "badRequest")


class FakeDocs:
    def __init__(self, google: FakeGoogle) -> None:
        self.google = google
        self.documents: dict[str, StoredDocument] = {}
        self._lists = itertools.count(1)
        google.apis["/v1/documents"] = (Discovery("docs", "v1"), self)

    # --- set-up helpers ---------------------------------------------------------------------------
    def add(self, title: str = "Untitled document", app_access: bool = True) -> StoredDocument:
        """An empty document, as documents.create makes it (or one made elsewhere: app_access False)."""
        document_id = "1" + secrets.token_urlsafe(32).replace("-", "x").replace("_", "y")[:43]
        stored = StoredDocument(document_id, title, [_newline()], self._revision(), app_access=app_access)
        with self.google.lock:
            self.documents[document_id] = stored
        drive_entry(self.google, document_id, title, DOC, app_access)
        return stored

    def edit(self, document_id: str, requests: list[dict[str, Any]]) -> dict[str, Any]:
        """Apply requests as another editor would (a new revision; no scope or revision check)."""
        with self.google.lock:
            return self._apply(self.documents[document_id], {"requests": requests})

    @staticmethod
    def _revision() -> str:
        return "ALm37B" + secrets.token_urlsafe(24)

    # --- dispatch ---------------------------------------------------------------------------------
    def handle(
        self,
        method_id: str,
        path: dict[str, str],
        params: dict[str, Any],
        body: Any,
        token: Token,
        media: bytes | None,
        headers: dict[str, str],
    ) -> Any:
        if method_id == "docs.documents.create":
            title = str((body or {}).get("title") or "Untitled document")
            return self._view(self.add(title), False)
        stored = self.documents.get(path.get("documentId", ""))
        reach = READ_ANY if method_id == "docs.documents.get" else WRITE_ANY
        if stored is None or (not stored.app_access and not token.scopes & reach):
            raise ApiError(404, "Requested entity was not found.", "notFound")
        if method_id == "docs.documents.get":
            return self._view(stored, params.get("includeTabsContent") == "true")
        if method_id == "docs.documents.batchUpdate":
            return self._apply(stored, body or {})
        raise ApiError(501, f"{method_id} is not implemented by the fake")

    # --- representation ---------------------------------------------------------------------------
    def _view(self, stored: StoredDocument, tabs: bool) -> dict[str, Any]:
        starts = stored.starts()
        position = 0

        def paragraph() -> dict[str, Any]:
            nonlocal position
            first = position
            while stored.items[position].char != "\n":
                position += 1
            position += 1
            elements: list[dict[str, Any]] = []
            for index in range(first, position):
                item = stored.items[index]
                if elements and elements[-1]["textRun"]["textStyle"] == item.style:
                    elements[-1]["textRun"]["content"] += item.char
                    elements[-1]["endIndex"] = starts[index + 1]
                else:
                    elements.append(
                        {
                            "startIndex": starts[index],
                            "endIndex": starts[index + 1],
                            "textRun": {"content": item.char, "textStyle": copy.deepcopy(item.style)},
                        }
                    )
            info = stored.items[position - 1].paragraph or {"style": {}, "bullet": None}
            style = {"direction": "LEFT_TO_RIGHT", **copy.deepcopy(info["style"])}
            out: dict[str, Any] = {"elements": elements, "paragraphStyle": style}
            if info["bullet"]:
                bullet = {"listId": info["bullet"]["listId"], "textStyle": {}}
                if info["bullet"].get("nestingLevel"):  # proto3: a level of 0 is left out
                    bullet["nestingLevel"] = info["bullet"]["nestingLevel"]
                out["bullet"] = bullet
            return {"startIndex": starts[first], "endIndex": starts[position], "paragraph": out}

        def content(stop: set[str]) -> list[dict[str, Any]]:
            nonlocal position
            elements = []
            while position < len(stored.items) and stored.items[position].marker not in stop:
                elements.append(table() if stored.items[position].marker == "table" else paragraph())
            return elements

        def table() -> dict[str, Any]:
            nonlocal position
            start = starts[position]
            position += 1
            rows = []
            while stored.items[position].marker == "row":
                row_start = starts[position]
                position += 1
                cells = []
                while stored.items[position].marker == "cell":
                    cell_start = starts[position]
                    position += 1
                    inner = content({"cell", "row", "end"})
                    cells.append(
                        {
                            "startIndex": cell_start,
                            "endIndex": starts[position],
                            "content": inner,
                            "tableCellStyle": {"rowSpan": 1, "columnSpan": 1},
                        }
                    )
                rows.append({"startIndex": row_start, "endIndex": starts[position], "tableCells": cells})
            position += 1  # the table end marker
            columns = max((len(row["tableCells"]) for row in rows), default=0)
            return {
                "startIndex": start,
                "endIndex": starts[position],
                "table": {"rows": len(rows), "columns": columns, "tableRows": rows},
            }

        body = {"content": [{"endIndex": 1, "sectionBreak": {"sectionStyle": {"sectionType": "CONTINUOUS"}}}]}
        body["content"] += content(set())
        document: dict[str, Any] = {
            "documentId": stored.id,
            "title": stored.title,
            "revisionId": stored.revision,
            "suggestionsViewMode": "SUGGESTIONS_INLINE",
        }
        parts = {"body": body, "lists": copy.deepcopy(stored.lists), "documentStyle": {}}
        if tabs:
            properties = {"tabId": "t.0", "title": "Tab 1", "index": 0}
            document["tabs"] = [{"tabProperties": properties, "documentTab": parts}]
        else:
            document.update(parts)
        return document

    # --- batchUpdate ------------------------------------------------------------------------------
    def _apply(self, stored: StoredDocument, body: dict[str, Any]) -> dict[str, Any]:
        required = (body.get("writeControl") or {}).get("requiredRevisionId")
        if required is not None and required != stored.revision:
            raise ApiError(
                400,
                "The document's revision does not match the requiredRevisionId in the write control: "
                "someone changed the document since that revision was read.",
                "failedPrecondition",
            )
        requests = body.get("requests") or []
        if not requests:
            raise _bad("Must specify at least one request.")
        work = copy.deepcopy(stored)
        replies = []
        try:
            for number, request in enumerate(requests):
                kinds = [key for key, value in request.items() if value is not None]
                if len(kinds) != 1:
                    raise _bad(f"Invalid requests[{number}]: exactly one kind of request must be set, got {kinds}")
                kind = kinds[0]
                if kind not in SERVED:
                    raise ApiError(501, f"requests[{number}].{kind} is not served by this fake")
                replies.append(getattr(self, "_" + kind)(work, request[kind], f"requests[{number}].{kind}") or {})
        except ApiError as error:
            if error.status != 400 or error.reason != "badRequest" or "revision" not in error.message:
                self.google.violations.append(f"docs batchUpdate: {error.message}")
            raise
        work.revision = self._revision()
        stored.items, stored.lists, stored.revision = work.items, work.lists, work.revision
        stored.changed()
        return {"documentId": stored.id, "replies": replies, "writeControl": {"requiredRevisionId": stored.revision}}

    # --- locating ---------------------------------------------------------------------------------
    @staticmethod
    def _position(work: StoredDocument, index: Any, where: str) -> int:
        """The item an insertion at `index` goes before; it must lie inside a paragraph."""
        if not isinstance(index, int) and not (isinstance(index, str) and index.isdigit()):
            raise _bad(f"Invalid {where}.location.index")
        index = int(index)
        end = work.end
        if index < 1:
            raise _bad(f"Invalid {where}: index {index} must be at least 1")
        if index >= end:
            raise _bad(f"Invalid {where}: index {index} must be less than the end index of the segment, {end}")
        starts = work.starts()
        position = bisect.bisect_left(starts, index)
        if starts[position] != index:
            raise _bad(f"Invalid {where}: index {index} is inside a surrogate pair")
        if work.items[position].marker:
            raise _bad(f"Invalid {where}: text must be inserted inside the bounds of an existing paragraph")
        return position

    def _location(self, work: StoredDocument, request: dict[str, Any], where: str) -> int:
        location, end_of = request.get("location"), request.get("endOfSegmentLocation")
        if (location is None) == (end_of is None):
            raise _bad(f"Invalid {where}: exactly one of location or endOfSegmentLocation must be set")
        if (location or end_of).get("segmentId"):
            raise _bad(f"Invalid {where}: this fake serves the body only")
        if end_of is not None:
            return len(work.items) - 1
        return self._position(work, location.get("index"), where)

    @staticmethod
    def _range(work: StoredDocument, request: dict[str, Any], where: str) -> tuple[int, int]:
        """Item positions [first, last) covered by request.range, checked as Google checks it."""
        span = request.get("range")
        if not isinstance(span, dict) or span.get("segmentId"):
            raise _bad(f"Invalid {where}.range: a body range is required")
        try:
            start, end = int(span.get("startIndex")), int(span.get("endIndex"))
        except (TypeError, ValueError):
            raise _bad(f"Invalid {where}.range: startIndex and endIndex are required") from None
        if start < 1 or end <= start:
            raise _bad(f"Invalid {where}.range: the range [{start}, {end}) is empty or starts before 1")
        if end > work.end:
            raise _bad(f"Invalid {where}.range: endIndex {end} must not exceed the segment end {work.end}")
        starts = work.starts()
        return bisect.bisect_left(starts, start), bisect.bisect_left(starts, end)

    @staticmethod
    def _paragraph_ends(work: StoredDocument, first: int, last: int) -> list[int]:
        """The newline positions ending each paragraph that overlaps items [first, last)."""
        ends = []
        for position in range(first, len(work.items)):
            item = work.items[position]
            if item.char == "\n":
                ends.append(position)
                if position >= last - 1:
                    break
            elif item.marker and position >= last:
                break
        return ends

    @staticmethod
    def _fields(request: dict[str, Any], schema: str, where: str) -> list[str]:
        mask = request.get("fields")
        if not mask:
            raise _bad(f"Invalid {where}: fields must be set (use '*' for every field)")
        known = set(schema_fields(schema))
        names = [name.strip() for name in str(mask).split(",")]
        if names == ["*"]:
            return sorted(known)
        for name in names:
            if name.split(".")[0] not in known:
                raise _bad(f"Invalid {where}: field mask names an unknown field {name!r}")
        return names

    # --- the requests -----------------------------------------------------------------------------
    def _insert(self, work: StoredDocument, position: int, text: str, style: dict[str, Any] | None = None) -> int:
        """Insert text before the item at `position`; returns how many items were added."""
        text = _STRIPPED.sub("", text)
        newline = position
        while work.items[newline].char != "\n":
            newline += 1
        paragraph = work.items[newline].paragraph
        if style is None:
            before = work.items[position - 1] if position > 0 else None
            inherit = before if before is not None and before.char not in ("", "\n") else work.items[position]
            style = inherit.style
        added = [
            Item(char, style=copy.deepcopy(style), paragraph=copy.deepcopy(paragraph) if char == "\n" else None)
            for char in text
        ]
        work.items[position:position] = added
        work.changed()
        return len(added)

    def _insertText(self, work: StoredDocument, request: dict[str, Any], where: str) -> None:
        text = request.get("text")
        if not isinstance(text, str) or not text:
            raise _bad(f"Invalid {where}: text must not be empty")
        self._insert(work, self._location(work, request, where), text)

    def _insertTable(self, work: StoredDocument, request: dict[str, Any], where: str) -> None:
        try:
            rows, columns = int(request.get("rows")), int(request.get("columns"))
        except (TypeError, ValueError):
            raise _bad(f"Invalid {where}: rows and columns are required") from None
        if not 1 <= columns <= 20 or not 1 <= rows <= 1000:
            raise _bad(f"Invalid {where}: a table has 1 to 20 columns and at least one row")
        position = self._location(work, request, where)
        self._insert(work, position, "\n")
        table = [Item(marker="table")]
        for _ in range(rows):
            table.append(Item(marker="row"))
            for _ in range(columns):
                table += [Item(marker="cell"), _newline()]
        table.append(Item(marker="end"))
        work.items[position + 1 : position + 1] = table
        work.changed()

    def _updateParagraphStyle(self, work: StoredDocument, request: dict[str, Any], where: str) -> None:
        fields = self._fields(request, "ParagraphStyle", where)
        style = request.get("paragraphStyle") or {}
        first, last = self._range(work, request, where)
        for newline in self._paragraph_ends(work, first, last):
            target = work.items[newline].paragraph["style"]
            for name in fields:
                if name in style:
                    target[name] = copy.deepcopy(style[name])
                else:
                    target.pop(name, None)
            if target.get("namedStyleType", "").startswith("HEADING_"):
                target.setdefault("headingId", "h." + secrets.token_hex(6))
            else:
                target.pop("headingId", None)

    def _updateTextStyle(self, work: StoredDocument, request: dict[str, Any], where: str) -> None:
        fields = self._fields(request, "TextStyle", where)
        style = request.get("textStyle") or {}
        if "link" in style and not (style["link"] or {}).get("url", "x"):
            raise _bad(f"Invalid {where}: a link needs a url")
        first, last = self._range(work, request, where)
        for item in work.items[first:last]:
            if item.marker:
                continue
            for name in fields:
                if name in style:
                    item.style[name] = copy.deepcopy(style[name])
                else:
                    item.style.pop(name, None)

    def _createParagraphBullets(self, work: StoredDocument, request: dict[str, Any], where: str) -> None:
        preset = request.get("bulletPreset") or "BULLET_DISC_CIRCLE_SQUARE"
        first, last = self._range(work, request, where)
        list_id = f"kix.list{next(self._lists)}"
        if preset in NUMBERED:
            kinds = NUMBERED[preset]
            levels = [
                {"glyphType": kinds[level % len(kinds)], "glyphFormat": f"%{level}.", "startNumber": 1}
                for level in range(9)
            ]
        else:
            levels = [{"glyphSymbol": GLYPHS[level % 3], "glyphFormat": f"%{level}"} for level in range(9)]
        work.lists[list_id] = {"listProperties": {"nestingLevels": levels}}
        # From the last paragraph back: removing a paragraph's leading tabs moves only what follows.
        for newline in reversed(self._paragraph_ends(work, first, last)):
            start = newline
            while start > 0 and not work.items[start - 1].marker and work.items[start - 1].char != "\n":
                start -= 1
            tabs = 0
            while work.items[start + tabs].char == "\t":
                tabs += 1
            del work.items[start : start + tabs]
            work.changed()
            work.items[newline - tabs].paragraph["bullet"] = {"listId": list_id, "nestingLevel": min(tabs, 8)}

    def _deleteParagraphBullets(self, work: StoredDocument, request: dict[str, Any], where: str) -> None:
        first, last = self._range(work, request, where)
        for newline in self._paragraph_ends(work, first, last):
            work.items[newline].paragraph["bullet"] = None

    def _replaceAllText(self, work: StoredDocument, request: dict[str, Any], where: str) -> dict[str, Any]:
        criteria = request.get("containsText") or {}
        needle = criteria.get("text")
        if not needle:
            raise _bad(f"Invalid {where}.containsText.text: must not be empty")
        if criteria.get("searchByRegex"):
            raise ApiError(501, "searchByRegex is not served by this fake")
        replacement = _STRIPPED.sub("", str(request.get("replaceText") or ""))
        flags = 0 if criteria.get("matchCase") else re.IGNORECASE
        pattern = re.compile(re.escape(needle), flags)
        count = 0
        # Paragraph by paragraph, from the end, so positions found stay valid.
        newlines = [k for k, item in enumerate(work.items) if item.char == "\n"]
        for newline in reversed(newlines):
            start = newline
            while start > 0 and not work.items[start - 1].marker and work.items[start - 1].char != "\n":
                start -= 1
            text = "".join(item.char for item in work.items[start:newline])
            for match in reversed(list(pattern.finditer(text))):
                count += 1
                at = start + match.start()
                style = copy.deepcopy(work.items[at].style)
                del work.items[at : start + match.end()]
                work.changed()
                if replacement:
                    self._insert(work, at, replacement, style)
        return {"replaceAllText": {"occurrencesChanged": count} if count else {}}


_FIELDS: dict[str, list[str]] = {}


def schema_fields(schema: str) -> list[str]:
    """The properties of a schema of the shipped docs v1 discovery document."""
    if schema not in _FIELDS:
        from tests.servers.fake_google.discovery import load_document

        _FIELDS[schema] = list(load_document("docs", "v1")["schemas"][schema]["properties"])
    return _FIELDS[schema]
