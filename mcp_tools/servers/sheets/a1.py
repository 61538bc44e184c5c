"""A1 notation: parsing what a model writes, and writing what Google reads back.

Forms: `A1`, `A1:B2`, whole columns `A:C`, whole rows `2:5`, open-ended `A2:C`, each with an
optional sheet (`Sheet1!A1:B2`, `'It''s'!A1`), or a sheet name alone (the whole sheet). A bare
name that is not a cell reference is a sheet name, as Google reads it. Rows and columns are
1-based; None on a bound means "to the edge of the grid".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

MAX_COLUMNS = 18_278  # ZZZ
MAX_ROWS = 10_000_000  # a spreadsheet holds at most 10 million cells
MAX_SHEET_NAME = 100
_ENDPOINT = re.compile(r"\$?([A-Za-z]{1,3})?\$?([0-9]{1,8})?")
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CELLISH = re.compile(r"[A-Za-z]{1,3}[0-9]+|[Rr][0-9]*[Cc][0-9]*")


class A1Error(ValueError):
    """A range that is not A1 notation; the message says what is wrong."""


def column_number(letters: str) -> int:
    number = 0
    for letter in letters.upper():
        number = number * 26 + ord(letter) - 64
    return number


def column_letters(number: int) -> str:
    letters = ""
    while number > 0:
        number, rest = divmod(number - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def quote_sheet(name: str) -> str:
    """The sheet name as Google writes it: bare when plain, else quoted with '' for '."""
    if _PLAIN_NAME.fullmatch(name) and not _CELLISH.fullmatch(name):
        return name
    return "'" + name.replace("'", "''") + "'"


def check_sheet_name(name: str) -> str:
    if not name.strip() or len(name) > MAX_SHEET_NAME:
        raise A1Error(f"a sheet name has 1 to {MAX_SHEET_NAME} characters")
    if any(ord(char) < 32 or ord(char) == 127 for char in name):
        raise A1Error("a sheet name cannot hold control characters")
    return name


@dataclass(frozen=True)
class A1Range:
    sheet: str | None = None
    start_row: int | None = None
    start_col: int | None = None
    end_row: int | None = None
    end_col: int | None = None

    @property
    def single_cell(self) -> bool:
        return self.start_row is not None and (self.start_row, self.start_col) == (self.end_row, self.end_col)

    @property
    def whole_sheet(self) -> bool:
        return self.start_row is None and self.start_col is None and self.end_row is None and self.end_col is None

    def on(self, sheet: str) -> A1Range:
        return replace(self, sheet=sheet)

    def clamp(self, rows: int, columns: int) -> A1Range:
        """Open bounds closed at the grid's edge; explicit bounds kept (Google judges them)."""
        return replace(
            self,
            start_row=self.start_row or 1,
            start_col=self.start_col or 1,
            end_row=self.end_row if self.end_row is not None else rows,
            end_col=self.end_col if self.end_col is not None else columns,
        )

    def rows(self, first: int, last: int) -> A1Range:
        return replace(self, start_row=first, end_row=last)

    def columns(self, first: int, last: int) -> A1Range:
        return replace(self, start_col=first, end_col=last)

    @property
    def height(self) -> int | None:
        if self.end_row is None:
            return None
        return self.end_row - (self.start_row or 1) + 1

    @property
    def width(self) -> int | None:
        if self.end_col is None:
            return None
        return self.end_col - (self.start_col or 1) + 1

    def cells(self) -> str:
        """The cell part alone: A1:B2, A:C, 2:5 or A2:C."""
        start = column_letters(self.start_col or 0) + (str(self.start_row) if self.start_row else "")
        end = column_letters(self.end_col or 0) + (str(self.end_row) if self.end_row else "")
        if self.whole_sheet:
            return ""
        if start == end and self.start_row and self.start_col:
            return start
        if self.start_row and not self.start_col and not self.end_col:
            return f"{self.start_row}:{self.end_row or self.start_row}"
        if not start:
            start = "A" if self.end_col else "1"
        return f"{start}:{end}"

    def notation(self) -> str:
        cells = self.cells()
        if self.sheet is None:
            return cells
        return quote_sheet(self.sheet) + ("!" + cells if cells else "")

    def __str__(self) -> str:
        return self.notation()


def _endpoint(text: str) -> tuple[int | None, int | None]:
    found = _ENDPOINT.fullmatch(text)
    if not text or found is None or not (found.group(1) or found.group(2)):
        raise A1Error(f"{text!r} is not a cell such as B7, a column such as C or a row such as 12")
    letters, digits = found.groups()
    column = column_number(letters) if letters else None
    row = int(digits) if digits else None
    if row is not None and not 1 <= row <= MAX_ROWS:
        raise A1Error(f"row {row} is outside 1..{MAX_ROWS}")
    if column is not None and column > MAX_COLUMNS:
        raise A1Error(f"column {letters.upper()} is past the last column ZZZ")
    return column, row


def parse_cells(text: str) -> A1Range:
    """`A1`, `A1:B2`, `A:C`, `2:5`, `A2:C` (no sheet)."""
    first, colon, second = text.strip().partition(":")
    start_col, start_row = _endpoint(first)
    if not colon:
        if start_col is None or start_row is None:
            raise A1Error(f"{text!r}: a single cell needs a column and a row, such as B7")
        return A1Range(None, start_row, start_col, start_row, start_col)
    end_col, end_row = _endpoint(second)
    if (start_col is None) != (end_col is None):
        raise A1Error(f"{text!r} mixes a whole row with a column; write A1:C5, A:C or 2:5")
    if start_col is not None and end_col is not None and start_col > end_col:
        start_col, end_col = end_col, start_col
    if start_row is not None and end_row is not None and start_row > end_row:
        start_row, end_row = end_row, start_row
    if start_row is None and end_row is not None:
        start_row = 1  # A:C5 reads as A1:C5
    return A1Range(None, start_row, start_col, end_row, end_col)


_CELL_SHAPE = re.compile(r"\$?[A-Za-z]{0,3}\$?[0-9]*(:\$?[A-Za-z]{0,3}\$?[0-9]*)?")


def _looks_like_cells(text: str) -> bool:
    """Letters then digits, or a colon: Google reads it as cells (and so do we, errors included)."""
    return bool(_CELL_SHAPE.fullmatch(text)) and (":" in text or any(char.isdigit() for char in text))


def parse(text: str) -> A1Range:
    """A range as a person or a model writes it; raises A1Error saying what to fix."""
    text = text.strip()
    if not text:
        raise A1Error("the range is empty; give A1 notation such as Sheet1!A1:C10, or a sheet name")
    if text.startswith("'"):
        name, position = [], 1
        while True:
            end = text.find("'", position)
            if end < 0:
                raise A1Error(f"{text[:80]!r}: the quoted sheet name is not closed (write ' inside it as '')")
            name.append(text[position:end])
            if text[end + 1 : end + 2] == "'":
                name.append("'")
                position = end + 2
                continue
            position = end + 1
            break
        sheet = check_sheet_name("".join(name))
        rest = text[position:]
        if not rest:
            return A1Range(sheet)
        if not rest.startswith("!"):
            raise A1Error(f"{text[:80]!r}: after the quoted sheet name comes ! and the cells, such as !A1:B2")
        return parse_cells(rest[1:]).on(sheet)
    if "!" in text:
        sheet, _, cells = text.rpartition("!")
        check_sheet_name(sheet)
        return parse_cells(cells).on(sheet) if cells else A1Range(sheet)
    if _looks_like_cells(text):
        return parse_cells(text)
    return A1Range(check_sheet_name(text))
