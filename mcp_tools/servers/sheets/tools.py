"""The five sheets tools, declared as data.

Cell text is untrusted: the text block carrying it is fenced. Values are written literally
(`RAW`): a cell that starts with "=" stays text unless the call asks for formulas and the
person allowed them in `[sheets] allow_formulas`; that refusal comes before any request.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema, field_validator, model_validator

from mcp_tools.servers.sheets import a1
from mcp_tools.text import fence
from mcp_tools.tooling import Arguments, CallContext, Output, Risk, ToolFailure, ToolSpec

if TYPE_CHECKING:
    from mcp_tools.servers.sheets.service import SheetsService

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


def _parsed(text: str) -> a1.A1Range | None:
    return a1.parse(text) if text else None


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


async def _precheck_cells(service: SheetsService, args: Cells) -> None:
    """Refused before any request: formulas the config does not allow, more cells than allowed."""
    if args.formulas and not service.config.allow_formulas:
        raise ToolFailure(
            "denied_by_policy",
            "formulas are off: [sheets] allow_formulas is false, so values are written as literal text",
            "Call again without formulas (text starting with '=' stays text), or ask the person to allow them.",
        )
    cells = sum(len(row) for row in args.values)
    if cells > service.config.max_write_cells:
        raise ToolFailure(
            "too_large",
            f"values: {cells} cells; one call writes at most {service.config.max_write_cells}",
            "Split the rows over several calls.",
        )


def _option(args: Cells) -> str:
    return "USER_ENTERED" if args.formulas else "RAW"


# --- read --------------------------------------------------------------------------------------


class ReadArgs(Arguments):
    id: SpreadsheetId
    range: Range = Field(default="", description="A1 range, or a sheet name for its used range; empty: first sheet.")
    formulas: bool = Field(default=False, description="Formulas instead of their results.")
    offset: int = Field(default=0, ge=0, le=a1.MAX_ROWS, description="Rows past the range's first row.")


class ReadResult(Output):
    title: str
    sheets: list[str]  # every sheet of the spreadsheet
    range: str  # where `values` sit: first row, last row, the columns read
    values: Rows
    next_offset: int | None  # pass as offset for more rows; null at the end


async def read(service: SheetsService, args: ReadArgs, ctx: CallContext) -> ReadResult:
    page = await service.run("sheets.read", service.read, args.id, _parsed(args.range), args.formulas, args.offset)
    meta, rows = page["meta"], page["rows"]
    where = ""
    if rows:
        bounded = page["bounded"]
        used = max(len(row) for row in rows)
        where = bounded.rows(page["first"], page["first"] + len(rows) - 1)
        where = where.columns(bounded.start_col, bounded.start_col + used - 1).notation()
    return ReadResult(title=meta.title, sheets=meta.names, range=where, values=rows, next_offset=page["next"])


_ROW_ENCODER = json.JSONEncoder(ensure_ascii=False)


def render_read(result: ReadResult) -> str:
    head = f"Spreadsheet {result.title!r}; sheets: {', '.join(result.sheets)}\n"
    if not result.values:
        head += "No values in this range."
    else:
        head += f"{result.range}, {len(result.values)} row(s)"
    if result.next_offset is not None:
        head += f"; more rows, call again with offset={result.next_offset}"
    body = "\n".join(map(_ROW_ENCODER.encode, result.values))  # one encoder: json.dumps builds one per row
    return head + ("\n" + fence("spreadsheet cells", body) if body else "")


# --- write and append --------------------------------------------------------------------------


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


def _start(where: a1.A1Range, args: Cells) -> a1.A1Range:
    """A start cell (or a column/row span) widened to exactly the block written."""
    height, width = len(args.values), max(len(row) for row in args.values)
    row, column = where.start_row or 1, where.start_col or 1
    return a1.A1Range(where.sheet, row, column, row + height - 1, column + width - 1)


async def write(service: SheetsService, args: WriteArgs, ctx: CallContext) -> Written:
    target = _start(a1.parse(args.range), args)
    done = await service.run("sheets.write", service.update, args.id, target, args.values, _option(args))
    return Written(range=done.get("updatedRange", target.notation()), cells=int(done.get("updatedCells", 0)))


class AppendArgs(Cells):
    range: Range = Field(default="", description="The table: sheet name or A1 range; empty: first sheet.")


async def append(service: SheetsService, args: AppendArgs, ctx: CallContext) -> Written:
    where = _parsed(args.range) or a1.A1Range(None, 1, 1, 1, 1)
    done = await service.run("sheets.append", service.append, args.id, where, args.values, _option(args))
    return Written(range=done.get("updatedRange", ""), cells=int(done.get("updatedCells", 0)))


# --- create ------------------------------------------------------------------------------------


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


async def create(service: SheetsService, args: CreateArgs, ctx: CallContext) -> Created:
    made = await service.run("sheets.create", service.create, args.title, args.sheets)
    return Created(
        id=made["spreadsheetId"],
        url=made.get("spreadsheetUrl", ""),
        title=made.get("properties", {}).get("title", args.title),
        sheets=[sheet.get("properties", {}).get("title", "") for sheet in made.get("sheets", [])],
    )


# --- clear -------------------------------------------------------------------------------------


class ClearArgs(Arguments):
    id: SpreadsheetId
    range: Range = Field(min_length=1, description="A1 range, or a sheet name for the whole sheet.")


class Cleared(Output):
    range: str
    cells: int  # cells that held data before


@dataclass
class ClearFacts:
    """The range as the precheck surveyed it (range, title, filled cells, digest): what the person confirms."""

    survey: dict[str, Any] | None = None


async def precheck_clear(service: SheetsService, args: ClearArgs, facts: ClearFacts) -> None:
    facts.survey = await service.run("sheets.clear", service.survey, args.id, a1.parse(args.range))


def describe_clear(args: ClearArgs, facts: ClearFacts) -> str:
    survey = facts.survey
    if survey is None:
        return f"clear {args.range} in spreadsheet {args.id}"
    return f"Clear {survey['range']} in spreadsheet {survey['title']!r}: {survey['filled']} cell(s) hold data"


async def clear(service: SheetsService, args: ClearArgs, ctx: CallContext, facts: ClearFacts) -> Cleared:
    if facts.survey is None:
        await precheck_clear(service, args, facts)
    confirmed = facts.survey
    assert confirmed is not None  # the precheck surveyed it or raised

    def run() -> str:
        now = service.survey(args.id, a1.parse(args.range))
        if now["digest"] != confirmed["digest"]:
            raise ToolFailure(
                "conflict",
                f"{now['range']} changed after it was confirmed ({now['filled']} cells hold data now)",
                "Call sheets_clear again so the person confirms what is there now.",
            )
        return service.clear(args.id, confirmed["range"])

    cleared = await service.run("sheets.clear", run)
    return Cleared(range=cleared, cells=confirmed["filled"])


TOOLS: list[ToolSpec[Any, Any, Any]] = [
    ToolSpec(
        name="sheets.read",
        title="Read spreadsheet",
        description="Rows of a Sheets range, with the sheet names; page with next_offset.",
        input_model=ReadArgs,
        output_model=ReadResult,
        handler=read,
        risk=Risk.LOW,
        describe=lambda args: f"read {args.range or 'the first sheet'} of spreadsheet {args.id}",
        read_only=True,
        idempotent=True,
        open_world=True,
        tier="core",
        render_text=render_read,
    ),
    ToolSpec(
        name="sheets.write",
        title="Write cells",
        description="Write rows of values into a range; text stays text.",
        input_model=WriteArgs,
        output_model=Written,
        handler=write,
        risk=Risk.MEDIUM,
        describe=lambda args: f"write {sum(len(row) for row in args.values)} cell(s) at {args.range} in {args.id}",
        precheck=_precheck_cells,
        idempotent=True,
        open_world=True,
        tier="extended",
        destructive=True,
    ),
    ToolSpec(
        name="sheets.append",
        title="Append rows",
        description="Add rows after the last row of a table.",
        input_model=AppendArgs,
        output_model=Written,
        handler=append,
        risk=Risk.MEDIUM,
        describe=lambda args: f"append {len(args.values)} row(s) to {args.range or 'the first sheet'} of {args.id}",
        precheck=_precheck_cells,
        open_world=True,
        tier="extended",
        destructive=False,
    ),
    ToolSpec(
        name="sheets.create",
        title="Create spreadsheet",
        description="New spreadsheet with named sheets and optional header rows.",
        input_model=CreateArgs,
        output_model=Created,
        handler=create,
        risk=Risk.MEDIUM,
        describe=lambda args: f"create spreadsheet {args.title!r}",
        open_world=True,
        tier="extended",
        destructive=False,
    ),
    ToolSpec(
        name="sheets.clear",
        title="Clear range",
        description="Clear the values of a range (formatting stays).",
        input_model=ClearArgs,
        output_model=Cleared,
        handler=clear,
        risk=Risk.HIGH,
        describe=describe_clear,
        precheck=precheck_clear,
        facts=ClearFacts,
        idempotent=True,
        open_world=True,
        tier="extended",
        destructive=True,
    ),
]
