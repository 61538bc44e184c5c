"""A stateful fake of the Google Sheets API v4: spreadsheets, sheets (grids) and their cells.

It answers as Google does, from its own small A1 parser (deliberately not the one under test):
quoted sheet names (`'It''s'!A1:B2`), whole columns and rows (`A:C`, `2:5`), a sheet name
alone; answers trimmed of trailing empty rows and cells; `majorDimension`; `RAW` keeps
"=IMPORTXML(...)" as text (read back with FORMULA render as "'=IMPORTXML(...)", the way
Google shows text that looks like a formula) while `USER_ENTERED` stores a formula; append
finds the table in the range; a range past the grid and an unknown sheet answer 400 with
Google's messages. With only `drive.file` granted, a spreadsheet the app did not create (or
was not given) answers 404, as Google does.
"""

from __future__ import annotations

import ast
import operator
import re
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from tests.servers.fake_google.discovery import Discovery
from tests.servers.fake_google.drive import SHEET, drive_entry
from tests.servers.fake_google.server import SCOPE_PREFIX, ApiError, FakeGoogle, Token

WIDE_SCOPES = {SCOPE_PREFIX + name for name in ("spreadsheets", "spreadsheets.readonly", "drive", "drive.readonly")}
WIDE_WRITE_SCOPES = {SCOPE_PREFIX + "spreadsheets", SCOPE_PREFIX + "drive"}
READS = {"sheets.spreadsheets.get", "sheets.spreadsheets.values.get", "sheets.spreadsheets.values.batchGet"}
_CELLS = re.compile(r"\$?([A-Za-z]{1,3})?\$?([0-9]+)?(?::\$?([A-Za-z]{1,3})?\$?([0-9]+)?)?")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


@dataclass(frozen=True)
class Formula:
    text: str


@dataclass
class Grid:
    id: int
    title: str
    rows: int = 1000
    columns: int = 26
    cells: dict[tuple[int, int], Any] = field(default_factory=dict)  # (row, column), 1-based


@dataclass
class Book:
    id: str
    title: str
    sheets: list[Grid]
    app: bool = True  # created by (or given to) the app: visible with drive.file alone

    def sheet(self, title: str) -> Grid | None:
        return next((sheet for sheet in self.sheets if sheet.title == title), None)


@dataclass(frozen=True)
class Rect:
    sheet: Grid
    top: int
    left: int
    bottom: int
    right: int


def letters(column: int) -> str:
    out = ""
    while column > 0:
        column, rest = divmod(column - 1, 26)
        out = chr(65 + rest) + out
    return out


def column_number(text: str) -> int:
    number = 0
    for char in text.upper():
        number = number * 26 + ord(char) - 64
    return number


def quoted(title: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", title) and not re.fullmatch(r"[A-Za-z]{1,3}\d+", title):
        return title
    return "'" + title.replace("'", "''") + "'"


def a1(rect: Rect) -> str:
    start, end = f"{letters(rect.left)}{rect.top}", f"{letters(rect.right)}{rect.bottom}"
    return f"{quoted(rect.sheet.title)}!{start}" + (f":{end}" if end != start else "")


def _evaluate(formula: str) -> Any:
    """Arithmetic formulas compute; anything else (IMPORTXML and friends) is #N/A here."""
    try:
        tree = ast.parse(formula[1:], mode="eval").body
    except SyntaxError:
        return "#N/A"

    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
            return _ARITHMETIC[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        raise ValueError

    try:
        return value(tree)
    except (ValueError, ZeroDivisionError):
        return "#N/A"


def _number_text(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def render(cell: Any, option: str) -> Any:
    if isinstance(cell, Formula):
        if option == "FORMULA":
            return cell.text
        cell = _evaluate(cell.text)
    if option == "FORMATTED_VALUE":
        if isinstance(cell, bool):
            return "TRUE" if cell else "FALSE"
        if isinstance(cell, int | float):
            return _number_text(cell)
        return cell
    if option == "FORMULA" and isinstance(cell, str) and cell.startswith("="):
        return "'" + cell  # text that looks like a formula, shown as Google shows it
    if isinstance(cell, float) and cell.is_integer():
        return int(cell)
    return cell


def entered(value: Any, option: str) -> Any:
    """What a cell holds after a write: RAW keeps the value, USER_ENTERED parses it as typed."""
    if option == "RAW" or not isinstance(value, str):
        return value
    if value.startswith("="):
        return Formula(value)
    if value.startswith("'"):
        return value[1:]
    if _NUMBER.fullmatch(value.strip()):
        number = float(value)
        return int(number) if number.is_integer() and "." not in value and "e" not in value.lower() else number
    if value.upper() in ("TRUE", "FALSE"):
        return value.upper() == "TRUE"
    return value


class FakeSheets:
    def __init__(self, google: FakeGoogle) -> None:
        self.google = google
        self.books: dict[str, Book] = {}
        google.apis["/v4/spreadsheets"] = (Discovery("sheets", "v4"), self)

    # --- set-up helpers for tests ---------------------------------------------------------------
    def add(
        self,
        title: str = "Budget",
        sheets: dict[str, list[list[Any]]] | None = None,
        *,
        app: bool = True,
        rows: int = 1000,
        columns: int = 26,
    ) -> Book:
        """A spreadsheet whose sheets hold these rows (RAW values, formulas as Formula)."""
        book = Book(self._new_id(), title, [], app)
        for index, (name, values) in enumerate((sheets or {"Sheet1": []}).items()):
            grid = Grid(index * 1000 + 7, name, max(rows, len(values)), max([columns, *map(len, values)]))
            for r, row in enumerate(values, start=1):
                for c, value in enumerate(row, start=1):
                    if value not in ("", None):
                        grid.cells[(r, c)] = value
            book.sheets.append(grid)
        with self.google.lock:
            self.books[book.id] = book
        drive_entry(self.google, book.id, title, SHEET, app)
        return book

    def cell(self, book: Book, sheet: str, ref: str) -> Any:
        found = _CELLS.fullmatch(ref)
        assert found is not None and found.group(1) and found.group(2)
        grid = book.sheet(sheet)
        assert grid is not None
        return grid.cells.get((int(found.group(2)), column_number(found.group(1))))

    @staticmethod
    def _new_id() -> str:
        return "1" + secrets.token_urlsafe(32)[:43].replace("=", "x")

    # --- dispatch ------------------------------------------------------------------------------
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
        if method_id == "sheets.spreadsheets.create":
            return self.do_create(body or {})
        book = self.books.get(unquote(path.get("spreadsheetId", "")))
        if book is None or (not book.app and not token.scopes & WIDE_SCOPES):
            raise ApiError(404, "Requested entity was not found.", "notFound")
        if not book.app and method_id not in READS and not token.scopes & WIDE_WRITE_SCOPES:
            raise ApiError(403, "The caller does not have permission", "forbidden")
        name = method_id.removeprefix("sheets.spreadsheets.").replace(".", "_")
        handler = getattr(self, "do_" + name, None)
        if handler is None:
            raise ApiError(501, f"{method_id} is not implemented by the fake")
        return handler(book, unquote(path.get("range", "")), params, body or {})

    # --- ranges --------------------------------------------------------------------------------
    def parse(self, book: Book, text: str) -> Rect:
        """Google's reading of a range; past the grid or on no sheet, Google's own 400s."""
        sheet_name, cells = None, text
        quoted_name = re.fullmatch(r"'((?:[^']|'')+)'(?:!(.*))?", text, re.DOTALL)
        if quoted_name:
            sheet_name, cells = quoted_name.group(1).replace("''", "'"), quoted_name.group(2) or ""
        elif "!" in text:
            sheet_name, _, cells = text.rpartition("!")
        elif not _CELLS.fullmatch(text) or not text or not re.search(r"\d|:", text):
            sheet_name, cells = text, ""
        sheet = book.sheets[0] if sheet_name is None else book.sheet(sheet_name)
        found = _CELLS.fullmatch(cells)
        if sheet is None or found is None:
            raise ApiError(400, f"Unable to parse range: {text}")
        left_letters, top, right_letters, bottom = found.groups()
        if cells and ":" not in cells and not (left_letters and top):
            raise ApiError(400, f"Unable to parse range: {text}")
        if ":" in cells and (bool(left_letters) != bool(right_letters)):
            raise ApiError(400, f"Unable to parse range: {text}")
        left = column_number(left_letters) if left_letters else 1
        right = column_number(right_letters) if right_letters else (left if cells and ":" not in cells else None)
        top_row = int(top) if top else 1
        bottom_row = int(bottom) if bottom else (top_row if cells and ":" not in cells else None)
        if right is not None and right < left:
            left, right = right, left
        if bottom_row is not None and bottom_row < top_row:
            top_row, bottom_row = bottom_row, top_row
        if top_row < 1 or (bottom_row or 1) > sheet.rows or (right or 1) > sheet.columns or top_row > sheet.rows:
            where = cells.upper() if cells else ""
            raise ApiError(
                400,
                f"Range ({quoted(sheet.title)}!{where}) exceeds grid limits. "
                f"Max rows: {sheet.rows}, max columns: {sheet.columns}",
            )
        return Rect(sheet, top_row, left, bottom_row or sheet.rows, right or sheet.columns)

    @staticmethod
    def rows_of(rect: Rect, option: str, major: str) -> list[list[Any]]:
        grid = [
            [rect.sheet.cells.get((r, c), "") for c in range(rect.left, rect.right + 1)]
            for r in range(rect.top, rect.bottom + 1)
        ]
        if major == "COLUMNS":
            grid = [list(column) for column in zip(*grid, strict=True)] if grid else []
        out = []
        for line in grid:
            while line and line[-1] == "":
                line.pop()
            out.append([render(cell, option) if cell != "" else "" for cell in line])
        while out and not out[-1]:
            out.pop()
        return out

    def value_range(self, book: Book, text: str, params: dict[str, Any]) -> dict[str, Any]:
        rect = self.parse(book, text)
        major = params.get("majorDimension", "ROWS")
        major = "ROWS" if major == "DIMENSION_UNSPECIFIED" else major
        answer: dict[str, Any] = {"range": a1(rect), "majorDimension": major}
        values = self.rows_of(rect, params.get("valueRenderOption", "FORMATTED_VALUE"), major)
        if values:
            answer["values"] = values
        return answer

    # --- spreadsheets ----------------------------------------------------------------------------
    def resource(self, book: Book, sheets: list[Grid] | None = None) -> dict[str, Any]:
        return {
            "spreadsheetId": book.id,
            "properties": {"title": book.title, "locale": "en_US", "autoRecalc": "ON_CHANGE", "timeZone": "Etc/GMT"},
            "sheets": [
                {
                    "properties": {
                        "sheetId": sheet.id,
                        "title": sheet.title,
                        "index": book.sheets.index(sheet),
                        "sheetType": "GRID",
                        "gridProperties": {"rowCount": sheet.rows, "columnCount": sheet.columns},
                    }
                }
                for sheet in (book.sheets if sheets is None else sheets)
            ],
            "spreadsheetUrl": f"https://docs.google.com/spreadsheets/d/{book.id}/edit",
        }

    def do_get(self, book: Book, _: str, params: dict[str, Any], body: Any) -> Any:
        if params.get("includeGridData") == "true":
            raise ApiError(501, "includeGridData is not served by this fake")
        ranges = params.get("ranges") or []
        if not ranges:
            return self.resource(book)
        wanted = {self.parse(book, text).sheet.id for text in ranges}
        return self.resource(book, [sheet for sheet in book.sheets if sheet.id in wanted])

    def do_create(self, body: dict[str, Any]) -> Any:
        book = Book(self._new_id(), body.get("properties", {}).get("title") or "Untitled spreadsheet", [])
        for index, item in enumerate(body.get("sheets") or [{}]):
            properties = item.get("properties", {})
            grid_properties = properties.get("gridProperties", {})
            title = properties.get("title") or f"Sheet{index + 1}"
            if any(sheet.title.lower() == title.lower() for sheet in book.sheets):
                raise ApiError(
                    400,
                    f'Invalid requests[{index}].addSheet: A sheet with the name "{title}" already exists. '
                    "Please enter another name.",
                )
            sheet = Grid(
                int(properties.get("sheetId", index * 1000 + 11)),
                title,
                int(grid_properties.get("rowCount", 1000)),
                int(grid_properties.get("columnCount", 26)),
            )
            for data in item.get("data", []):
                top, left = int(data.get("startRow", 0)) + 1, int(data.get("startColumn", 0)) + 1
                for r, row in enumerate(data.get("rowData", []), start=top):
                    for c, cell in enumerate(row.get("values", []), start=left):
                        if r > sheet.rows or c > sheet.columns:
                            raise ApiError(400, f"Range ({quoted(title)}!{letters(c)}{r}) exceeds grid limits.")
                        value = cell.get("userEnteredValue", {})
                        if "formulaValue" in value:
                            sheet.cells[(r, c)] = Formula(value["formulaValue"])
                        elif value:
                            sheet.cells[(r, c)] = next(iter(value.values()))
            book.sheets.append(sheet)
        self.books[book.id] = book
        drive_entry(self.google, book.id, book.title, SHEET, True)
        return self.resource(book)

    # --- values --------------------------------------------------------------------------------
    def do_values_get(self, book: Book, text: str, params: dict[str, Any], body: Any) -> Any:
        return self.value_range(book, text, params)

    def do_values_batchGet(self, book: Book, _: str, params: dict[str, Any], body: Any) -> Any:
        ranges = params.get("ranges") or []
        return {"spreadsheetId": book.id, "valueRanges": [self.value_range(book, text, params) for text in ranges]}

    @staticmethod
    def _input_option(params: dict[str, Any]) -> str:
        option = params.get("valueInputOption")
        if option in (None, "INPUT_VALUE_OPTION_UNSPECIFIED"):
            raise ApiError(400, "'valueInputOption' is required but not specified")
        return option

    @staticmethod
    def _values(body: dict[str, Any]) -> list[list[Any]]:
        values = body.get("values") or []
        if body.get("majorDimension") == "COLUMNS":
            width = max((len(column) for column in values), default=0)
            values = [[column[r] if r < len(column) else None for column in values] for r in range(width)]
        return values

    def _write(self, sheet: Grid, top: int, left: int, values: list[list[Any]], option: str) -> dict[str, Any]:
        for r, row in enumerate(values, start=top):
            for c, value in enumerate(row, start=left):
                if value is None:
                    continue  # null leaves the cell as it is
                cell = entered(value, option)
                if cell == "":
                    sheet.cells.pop((r, c), None)
                else:
                    sheet.cells[(r, c)] = cell
        height, width = len(values), max((len(row) for row in values), default=0)
        rect = Rect(sheet, top, left, top + height - 1, left + width - 1)
        return {
            "updatedRange": a1(rect),
            "updatedRows": height,
            "updatedColumns": width,
            "updatedCells": sum(len(row) for row in values),
        }

    def do_values_update(self, book: Book, text: str, params: dict[str, Any], body: dict[str, Any]) -> Any:
        option = self._input_option(params)
        if body.get("range") and body["range"] != text:
            raise ApiError(400, f"Requested range [{text}] and the range in the body [{body['range']}] do not match.")
        rect = self.parse(book, text)
        values = self._values(body)
        explicit_end = ":" in text.rpartition("!")[2] or ("!" not in text and ":" in text)
        height, width = len(values), max((len(row) for row in values), default=0)
        if explicit_end and height > rect.bottom - rect.top + 1:
            raise ApiError(
                400, f"Requested writing within range [{text}], but tried writing to row [{rect.top + height - 1}]"
            )
        if explicit_end and width > rect.right - rect.left + 1:
            raise ApiError(
                400,
                f"Requested writing within range [{text}], but tried writing to column "
                f"[{letters(rect.left + width - 1)}]",
            )
        if rect.top + height - 1 > rect.sheet.rows or rect.left + width - 1 > rect.sheet.columns:
            end = f"{letters(rect.left + width - 1)}{rect.top + height - 1}"
            raise ApiError(
                400,
                f"Range ({quoted(rect.sheet.title)}!{letters(rect.left)}{rect.top}:{end}) exceeds grid limits. "
                f"Max rows: {rect.sheet.rows}, max columns: {rect.sheet.columns}",
            )
        return {"spreadsheetId": book.id, **self._write(rect.sheet, rect.top, rect.left, values, option)}

    def do_values_append(self, book: Book, text: str, params: dict[str, Any], body: dict[str, Any]) -> Any:
        option = self._input_option(params)
        rect = self.parse(book, text)
        sheet, values = rect.sheet, self._values(body)
        # the table starts at the first row of the range holding data and runs down (past the range,
        # as Google's does) while rows hold data at or right of the range's first column
        used = {r for (r, c) in sheet.cells if c >= rect.left}
        first_row = next(
            (
                r
                for r in range(rect.top, rect.bottom + 1)
                if any((r, c) in sheet.cells for c in range(rect.left, rect.right + 1))
            ),
            None,
        )
        table: Rect | None = None
        if first_row is not None:
            last = first_row
            while last + 1 in used:
                last += 1
            columns = [c for (r, c) in sheet.cells if first_row <= r <= last and c >= rect.left]
            table = Rect(sheet, first_row, min(columns), last, max(columns))
            top, left = last + 1, table.left
        else:
            top, left = rect.top, rect.left
        height, width = len(values), max((len(row) for row in values), default=0)
        if params.get("insertDataOption", "OVERWRITE") == "INSERT_ROWS":
            sheet.cells = {((r + height if r >= top else r), c): value for (r, c), value in sheet.cells.items()}
            sheet.rows += height
        else:
            sheet.rows = max(sheet.rows, top + height - 1)
        sheet.columns = max(sheet.columns, left + width - 1)
        answer: dict[str, Any] = {"spreadsheetId": book.id}
        if table is not None:
            answer["tableRange"] = a1(table)
        answer["updates"] = {"spreadsheetId": book.id, **self._write(sheet, top, left, values, option)}
        return answer

    def do_values_clear(self, book: Book, text: str, params: dict[str, Any], body: Any) -> Any:
        rect = self.parse(book, text)
        for key in [
            key for key in rect.sheet.cells if rect.top <= key[0] <= rect.bottom and rect.left <= key[1] <= rect.right
        ]:
            del rect.sheet.cells[key]
        return {"spreadsheetId": book.id, "clearedRange": a1(rect)}
