"""The arguments and results of the sheets tools, and the checks their fields share."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema, field_validator, model_validator

from mcp_tools.core.tooling import Arguments, Output
from mcp_tools.servers.sheets import a1

MAX_CELL_CHARS = 50_000  # Google's limit for one cell
MAX_ROWS_PER_CALL = 10_000
MAX_CELLS_PER_CALL = 100_000  # the hard bound; [sheets] max_write_cells is usually lower
_ID = re.compile(r"[A-Za-z0-9_-]{10,100}")
_URL_ID = re.compile(r"/spreadsheets/d/([A-Za-z0-9_-]+)")


def _spreadsheet_id(value: Any) -> Any:
    """An id, or a spreadsheet URL pasted whole (its /d/<id>/ part is the id)."""
    if isinstance(value, str):
        value = value.strip()
        found = _URL_ID.search(value)
        if found:
            value = found.group(1)
        if not _ID.fullmatch(value):
            raise ValueError("not a spreadsheet id (letters, digits, - and _, from the URL's /d/<id>/)")
    return value


def _range(value: Any) -> Any:
    """Checked A1 notation; "" (where allowed) means the default, blanks are a mistake."""
    if isinstance(value, str) and value:
        try:
            a1.parse(value)
        except a1.A1Error as error:
            raise ValueError(str(error)) from None
    return value


SpreadsheetId = Annotated[str, BeforeValidator(_spreadsheet_id), Field(description="Spreadsheet id or URL.")]
Range = Annotated[str, BeforeValidator(_range), Field(max_length=300)]
# one type list, not anyOf: shorter in the context, and a validating client checks 10,000 cells fast
Cell = Annotated[str | int | float | bool | None, WithJsonSchema({"type": ["string", "number", "boolean", "null"]})]
# rows of strings, numbers and booleans; the schema stops at the rows, so a validating client does
# not walk 10,000 cells one by one (the server's own model still checks every cell)
Rows = Annotated[list[list[str | int | float | bool]], WithJsonSchema({"type": "array", "items": {"type": "array"}})]
Formulas = Field(default=False, description="Evaluate '=' formulas (if [sheets] allow_formulas).")


def _check_values(values: list[list[Any]]) -> list[list[Any]]:
    cells = 0
    for number, row in enumerate(values):
        cells += len(row)
        for cell in row:
            if isinstance(cell, str) and len(cell) > MAX_CELL_CHARS:
                raise ValueError(f"values[{number}]: a cell holds at most {MAX_CELL_CHARS} characters")
            if isinstance(cell, float) and not math.isfinite(cell):
                raise ValueError(f"values[{number}]: numbers must be finite")
    if cells == 0:
        raise ValueError("values: give at least one cell")
    if cells > MAX_CELLS_PER_CALL:
        raise ValueError(f"values: at most {MAX_CELLS_PER_CALL} cells in one call")
    return values


class Cells(Arguments):
    """Shared by write and append: literal values unless formulas are asked for and allowed."""

    id: SpreadsheetId
    range: Range = ""
    values: list[list[Cell]] = Field(min_length=1, max_length=MAX_ROWS_PER_CALL)
    formulas: bool = Formulas

    @field_validator("values")
    @classmethod
    def _bounded(cls, value: list[list[Any]]) -> list[list[Any]]:
        return _check_values(value)


class ReadArgs(Arguments):
    id: SpreadsheetId
    range: Range = Field(default="", description="A1 range or sheet name; empty: the first sheet.")
    formulas: bool = Field(default=False, description="Formulas, not values.")
    offset: int = Field(default=0, ge=0, le=a1.MAX_ROWS, description="Rows to skip.")


class ReadResult(Output):
    title: str
    sheets: list[str]  # every sheet of the spreadsheet
    range: str  # where `values` sit: first row, last row, the columns read
    values: Rows
    next_offset: int | None  # pass as offset for more rows; null at the end


class WriteArgs(Cells):
    range: Range = Field(min_length=1, description="A1 start cell or range.")

    @model_validator(mode="after")
    def _fits(self) -> WriteArgs:
        where = a1.parse(self.range)
        height, width = len(self.values), max(len(row) for row in self.values)
        if where.whole_sheet:
            raise ValueError("range: name the cells to write, such as Sheet1!A1")
        too_big = (where.height is not None and height > where.height) or (
            where.width is not None and width > where.width
        )
        if too_big and not where.single_cell:
            raise ValueError(
                f"values: {height} row(s) x {width} column(s) do not fit in {self.range}; "
                "give a start cell such as A1 to write them all"
            )
        return self


class Written(Output):
    range: str
    cells: int


class AppendArgs(Cells):
    range: Range = Field(default="", description="The table: sheet name or A1 range; empty: first sheet.")


class CreateArgs(Arguments):
    title: str = Field(min_length=1, max_length=200)
    sheets: dict[str, list[Annotated[str, Field(max_length=1000)]]] = Field(
        default_factory=dict, max_length=50, description="Sheet name -> header row ([] for none)."
    )

    @field_validator("sheets")
    @classmethod
    def _names(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        seen = set()
        for name, header in value.items():
            try:
                a1.check_sheet_name(name)
            except a1.A1Error as error:
                raise ValueError(f"{name[:80]!r}: {error}") from None
            if name.lower() in seen:
                raise ValueError(f"{name[:80]!r}: two sheets cannot share a name")
            seen.add(name.lower())
            if len(header) > a1.MAX_COLUMNS:
                raise ValueError(f"{name[:80]!r}: a header row has at most {a1.MAX_COLUMNS} cells")
        return value


class Created(Output):
    id: str
    url: str
    title: str
    sheets: list[str]


class ClearArgs(Arguments):
    id: SpreadsheetId
    range: Range = Field(min_length=1, description="A1 range, or a sheet name for the whole sheet.")


class Cleared(Output):
    range: str
    cells: int  # cells that held data before
