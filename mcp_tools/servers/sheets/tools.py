"""The five sheets tools, declared as data.

Cell text is untrusted: the text block carrying it is fenced. Values are written literally
(`RAW`): a cell that starts with "=" stays text unless the call asks for formulas and the
person allowed them in `[sheets] allow_formulas`; that refusal comes before any request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_tools.core.tooling import (
    CallContext,
    Risk,
    ToolAlias,
    ToolFailure,
    ToolSpec,
    UpstreamScopes,
    alias_error,
    json_type,
)
from mcp_tools.servers.google.scopes import DRIVE_FILE, SPREADSHEETS, SPREADSHEETS_READONLY
from mcp_tools.servers.google.sharing import SharingFacts, exposure_risk, told
from mcp_tools.servers.sheets import a1
from mcp_tools.servers.sheets.models import (
    AppendArgs,
    Cells,
    ClearArgs,
    Cleared,
    CreateArgs,
    Created,
    ReadArgs,
    ReadResult,
    WriteArgs,
    Written,
)
from mcp_tools.servers.sheets.service import APPEND_TOOL, CLEAR_TOOL, CREATE_TOOL, READ_TOOL, WRITE_TOOL
from mcp_tools.util.text import fence

if TYPE_CHECKING:
    from mcp_tools.servers.sheets.service import SheetsService


def _parsed(text: str) -> a1.A1Range | None:
    return a1.parse(text) if text else None


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


async def read(service: SheetsService, args: ReadArgs, ctx: CallContext) -> ReadResult:
    page = await service.run(READ_TOOL, service.read, args.id, _parsed(args.range), args.formulas, args.offset)
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


def _start(where: a1.A1Range, args: Cells) -> a1.A1Range:
    """A start cell (or a column/row span) widened to exactly the block written."""
    height, width = len(args.values), max(len(row) for row in args.values)
    row, column = where.start_row or 1, where.start_col or 1
    return a1.A1Range(where.sheet, row, column, row + height - 1, column + width - 1)


async def write_risk(service: SheetsService, args: WriteArgs, facts: SharingFacts) -> Risk:
    """High when the spreadsheet is another's or shared: they read what is written."""
    return await exposure_risk(service, WRITE_TOOL, args.id, facts, Risk.MEDIUM)


async def precheck_write(service: SheetsService, args: WriteArgs, facts: SharingFacts) -> None:
    await _precheck_cells(service, args)


async def write(service: SheetsService, args: WriteArgs, ctx: CallContext, facts: SharingFacts) -> Written:
    target = _start(a1.parse(args.range), args)
    done = await service.run(WRITE_TOOL, service.update, args.id, target, args.values, _option(args))
    return Written(range=done.get("updatedRange", target.notation()), cells=int(done.get("updatedCells", 0)))


async def append_risk(service: SheetsService, args: AppendArgs, facts: SharingFacts) -> Risk:
    """High when the spreadsheet is another's or shared: they read what is appended."""
    return await exposure_risk(service, APPEND_TOOL, args.id, facts, Risk.MEDIUM)


async def precheck_append(service: SheetsService, args: AppendArgs, facts: SharingFacts) -> None:
    await _precheck_cells(service, args)


async def append(service: SheetsService, args: AppendArgs, ctx: CallContext, facts: SharingFacts) -> Written:
    where = _parsed(args.range) or a1.A1Range(None, 1, 1, 1, 1)
    done = await service.run(APPEND_TOOL, service.append, args.id, where, args.values, _option(args))
    return Written(range=done.get("updatedRange", ""), cells=int(done.get("updatedCells", 0)))


# --- create ------------------------------------------------------------------------------------


async def create(service: SheetsService, args: CreateArgs, ctx: CallContext) -> Created:
    made = await service.run(CREATE_TOOL, service.create, args.title, args.sheets)
    return Created(
        id=made["spreadsheetId"],
        url=made.get("spreadsheetUrl", ""),
        title=made.get("properties", {}).get("title", args.title),
        sheets=[sheet.get("properties", {}).get("title", "") for sheet in made.get("sheets", [])],
    )


# --- clear -------------------------------------------------------------------------------------


@dataclass
class ClearFacts:
    """The range as the precheck surveyed it (range, title, filled cells, digest): what the person confirms."""

    survey: dict[str, Any] | None = None


async def precheck_clear(service: SheetsService, args: ClearArgs, facts: ClearFacts) -> None:
    facts.survey = await service.run(CLEAR_TOOL, service.survey, args.id, a1.parse(args.range))


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

    cleared = await service.run(CLEAR_TOOL, run)
    return Cleared(range=cleared, cells=confirmed["filled"])


# Sheets API argument names, as other systems' sheets tools pass them.
_ALIAS_RENAMES = {
    "spreadsheetId": "id",
    "spreadsheet_id": "id",
    "valueInputOption": "value_input",
    "value_input_option": "value_input",
    "valueRenderOption": "value_render",
    "value_render_option": "value_render",
}


def _options_alias(arguments: dict[str, Any]) -> dict[str, Any]:
    """Google's valueInputOption / valueRenderOption become `formulas`; a list of sheet names a dict."""
    out = dict(arguments)
    for key, formula_value in (("value_input", "USER_ENTERED"), ("value_render", "FORMULA")):
        if key not in out:
            continue
        option = out.pop(key)
        if not isinstance(option, str):
            raise alias_error(f"{key} must be a string such as RAW or {formula_value}, got {json_type(option)}")
        out.setdefault("formulas", option.strip().upper() == formula_value)
    if isinstance(out.get("sheets"), list) and all(isinstance(name, str) for name in out["sheets"]):
        out["sheets"] = {name: [] for name in out["sheets"]}
    return out


TOOLS: list[ToolSpec[Any, Any, Any]] = [
    ToolSpec(
        name=READ_TOOL,
        scopes=UpstreamScopes(
            (DRIVE_FILE,),
            ("sheets.spreadsheets.get", "sheets.spreadsheets.values.get"),
            wider={"read": (SPREADSHEETS_READONLY,), "all": (SPREADSHEETS,)},
        ),
        aliases=(ToolAlias("sheets_read", _ALIAS_RENAMES, _options_alias),),
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
        name=WRITE_TOOL,
        scopes=UpstreamScopes(
            (DRIVE_FILE,), ("drive.files.get", "sheets.spreadsheets.values.update"), wider={"all": (SPREADSHEETS,)}
        ),
        aliases=(ToolAlias("sheets_write", _ALIAS_RENAMES, _options_alias),),
        title="Write cells",
        description="Write rows of values into a range; text stays text.",
        input_model=WriteArgs,
        output_model=Written,
        handler=write,
        risk=Risk.MEDIUM,
        describe=lambda args, facts: told(
            f"write {sum(len(row) for row in args.values)} cell(s) at {args.range} in {args.id}", facts
        ),
        dynamic_risk=write_risk,
        precheck=precheck_write,
        facts=SharingFacts,
        idempotent=True,
        open_world=True,
        tier="extended",
        destructive=True,
    ),
    ToolSpec(
        name=APPEND_TOOL,
        scopes=UpstreamScopes(
            (DRIVE_FILE,), ("drive.files.get", "sheets.spreadsheets.values.append"), wider={"all": (SPREADSHEETS,)}
        ),
        aliases=(ToolAlias("sheets_append", _ALIAS_RENAMES, _options_alias),),
        title="Append rows",
        description="Add rows after the last row of a table.",
        input_model=AppendArgs,
        output_model=Written,
        handler=append,
        risk=Risk.MEDIUM,
        describe=lambda args, facts: told(
            f"append {len(args.values)} row(s) to {args.range or 'the first sheet'} of {args.id}", facts
        ),
        dynamic_risk=append_risk,
        precheck=precheck_append,
        facts=SharingFacts,
        open_world=True,
        tier="extended",
        destructive=False,
    ),
    ToolSpec(
        name=CREATE_TOOL,
        scopes=UpstreamScopes((DRIVE_FILE,), ("sheets.spreadsheets.create",), wider={"all": (SPREADSHEETS,)}),
        aliases=(ToolAlias("sheets_create", _ALIAS_RENAMES, _options_alias),),
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
        name=CLEAR_TOOL,
        scopes=UpstreamScopes(
            (DRIVE_FILE,),
            ("sheets.spreadsheets.get", "sheets.spreadsheets.values.get", "sheets.spreadsheets.values.clear"),
            wider={"all": (SPREADSHEETS,)},
        ),
        aliases=(ToolAlias("sheets_clear", _ALIAS_RENAMES, _options_alias),),
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
