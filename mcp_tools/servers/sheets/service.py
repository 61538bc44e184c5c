"""The Sheets service: the shared Google client plus what the sheets tools do with it.

Every method here is blocking (googleapiclient is synchronous) and runs in a worker thread.
Ranges are parsed and checked by `a1` before any request; Google's own refusals (a range past
the grid, a sheet that does not exist) come back as `invalid_arguments` with a hint.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from mcp_tools.core.tooling import Environment, ToolFailure
from mcp_tools.servers.google.config import GoogleConfig
from mcp_tools.servers.google.service import GoogleService
from mcp_tools.servers.sheets import a1
from mcp_tools.servers.sheets.config import SheetsConfig

# The sheets tools this service calls Google for (each names its scopes; `tools.py` declares them)
READ_TOOL = "sheets.read"
WRITE_TOOL = "sheets.write"
APPEND_TOOL = "sheets.append"
CREATE_TOOL = "sheets.create"
CLEAR_TOOL = "sheets.clear"

META_FIELDS = "spreadsheetId,spreadsheetUrl,properties/title,sheets/properties(sheetId,title,gridProperties)"
META_SECONDS = 20.0  # how long a spreadsheet's sheet list and grid sizes are reused between reads
PAGE_CHARS = 25_000  # characters of cell text in one read answer: with its rendering, inside the result budget
CELL_OVERHEAD_CHARS = 4  # what each cell adds to an answer beside its text, counted against PAGE_CHARS
REQUESTS_PER_PAGE = 4
PROBE_CELLS = 20  # x the page cap: how far one request looks past a window that came back short
GAP_ROWS = 10  # more empty rows than this between data end the page; the next one starts at the data
GRID_HINT = (
    "The range reaches past the sheet's rows or columns (the message gives them): keep inside them, or add "
    "rows with sheets_append."
)
NOT_VISIBLE = (
    "Spreadsheet ids come from the URL (docs.google.com/spreadsheets/d/<id>/). With [sheets] access = "
    '"app" only spreadsheets this app created or was given are visible.'
)


@dataclass(frozen=True)
class Sheet:
    title: str
    id: int
    rows: int
    columns: int


@dataclass(frozen=True)
class Meta:
    id: str
    title: str
    url: str
    sheets: list[Sheet]

    @property
    def names(self) -> list[str]:
        return [sheet.title for sheet in self.sheets]

    def sheet(self, name: str | None) -> Sheet:
        """The named sheet (exact, then ignoring case), or the first grid when no name is given."""
        if not self.sheets:
            raise ToolFailure("not_found", f"spreadsheet {self.id} has no sheets")
        if name is None:  # the first sheet with a grid (a chart sheet has none)
            return next((sheet for sheet in self.sheets if sheet.rows and sheet.columns), self.sheets[0])
        for sheet in self.sheets:
            if sheet.title == name:
                return sheet
        for sheet in self.sheets:
            if sheet.title.lower() == name.lower():
                return sheet
        raise ToolFailure(
            "invalid_arguments",
            f"range: spreadsheet {self.title!r} has no sheet named {name!r}",
            "sheets: " + ", ".join(repr(title) for title in self.names[:50]),
        )


def digest(rows: list[list[Any]]) -> str:
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()


def count_filled(rows: list[list[Any]]) -> int:
    return sum(1 for row in rows for cell in row if cell not in ("", None))


class SheetsService(GoogleService):
    NAMESPACE, API, VERSION = "sheets", "sheets", "v4"

    def __init__(self, config: SheetsConfig, google: GoogleConfig, env: Environment, scopes: list[str]) -> None:
        super().__init__(google, env, scopes, access=config.access)
        self.config = config
        self._resources: dict[int, tuple[Any, Any, Any]] = {}
        self._meta: dict[str, tuple[float, Meta]] = {}  # spreadsheet id -> (when read, what it said)

    def _built(self, service: Any) -> tuple[Any, Any, Any]:
        """`spreadsheets()` and its `values()`, built once per service object (one per thread):
        googleapiclient spends about 20 ms building them, more than a small request takes."""
        found = self._resources.get(id(service))
        if found is None or found[0] is not service:
            spreadsheets = service.spreadsheets()
            found = (service, spreadsheets, spreadsheets.values())
            self._resources[id(service)] = found
        return found

    def spreadsheets(self, service: Any) -> Any:
        return self._built(service)[1]

    def cell_values(self, service: Any) -> Any:
        return self._built(service)[2]

    def call(self, tool: str, build: Any, api: str | None = None, version: str | None = None) -> Any:
        """Google's call, with hints that name what to fix in spreadsheet terms."""
        try:
            return super().call(tool, build, api, version)
        except ToolFailure as failure:
            message = failure.message
            if failure.kind == "not_found":
                failure.hint = self._not_visible_hint(tool)
            elif failure.kind == "denied_by_policy" and self.access != "all":
                failure.hint = (
                    f'With [sheets] access = "{self.access}" changes reach only spreadsheets this app created or '
                    'was given; the person can set access = "all".'
                )
            elif "exceeds grid limits" in message:
                failure.hint = GRID_HINT
            elif "Unable to parse range" in message:
                failure.hint = (
                    "Check the sheet name (sheets_read lists them) and write 'My Sheet'!A1:B2 for names with spaces."
                )
            raise

    def _not_visible_hint(self, tool: str) -> str:
        """Why a spreadsheet may be invisible: the access level, or a wider one not granted yet."""
        from mcp_tools.servers.google.config import auth_command
        from mcp_tools.servers.google.scopes import asked_scopes, short

        granted = set(self.client.account.granted_scopes())
        lacking = [short(scope) for scope in asked_scopes(tool, self.access) if scope not in granted]
        if lacking and not self.client.account.is_service_account:
            return (
                f'[sheets] access = "{self.access}" needs {", ".join(lacking)}, which the sign-in has not granted '
                f"yet: ask the person to run `{auth_command()}`. " + NOT_VISIBLE.split(". ")[0] + "."
            )
        return NOT_VISIBLE

    # --- reading ------------------------------------------------------------------------------
    def meta(self, tool: str, spreadsheet: str) -> Meta:
        """Title and sheets, reused for META_SECONDS so paging a big range asks once, not per page.

        Our own writes forget it at once; the reads that use it also pass the range to Google.
        """
        now = time.monotonic()
        found = self._meta.get(spreadsheet)
        if found is not None and now - found[0] < META_SECONDS:
            return found[1]
        meta = self._fetch_meta(tool, spreadsheet)
        if len(self._meta) > 100:
            self._meta.clear()
        self._meta[spreadsheet] = (now, meta)
        return meta

    def forget(self, spreadsheet: str) -> None:
        self._meta.pop(spreadsheet, None)

    def _fetch_meta(self, tool: str, spreadsheet: str) -> Meta:
        found = self.call(tool, lambda s: self.spreadsheets(s).get(spreadsheetId=spreadsheet, fields=META_FIELDS))
        sheets = []
        for item in found.get("sheets", []):
            properties = item.get("properties", {})
            grid = properties.get("gridProperties", {})
            sheets.append(
                Sheet(
                    properties.get("title", ""),
                    int(properties.get("sheetId", 0)),
                    int(grid.get("rowCount", 0)),
                    int(grid.get("columnCount", 0)),
                )
            )
        title = found.get("properties", {}).get("title", "")
        return Meta(found.get("spreadsheetId", spreadsheet), title, found.get("spreadsheetUrl", ""), sheets)

    def values(self, tool: str, spreadsheet: str, where: a1.A1Range, render: str) -> list[list[Any]]:
        found = self.call(
            tool,
            lambda s: self.cell_values(s).get(
                spreadsheetId=spreadsheet,
                range=where.notation(),
                valueRenderOption=render,
                majorDimension="ROWS",
                fields="values",
            ),
        )
        rows: list[list[Any]] = found.get("values", [])
        return rows

    def read(self, spreadsheet: str, where: a1.A1Range | None, formulas: bool, offset: int) -> dict[str, Any]:
        try:
            return self._read(spreadsheet, where, formulas, offset)
        except ToolFailure as failure:
            stale = "exceeds grid limits" in failure.message or "Unable to parse range" in failure.message
            if not stale or spreadsheet not in self._meta:
                raise
            self.forget(spreadsheet)  # the sheets changed since they were last read: once more, afresh
            return self._read(spreadsheet, where, formulas, offset)

    def _read(self, spreadsheet: str, where: a1.A1Range | None, formulas: bool, offset: int) -> dict[str, Any]:
        """One page of a range: whole rows, at most `max_read_cells` cells and PAGE_CHARS characters.

        Rows are fetched in windows sized by the cells left on the page; a few empty rows between
        data are kept as [], a longer gap ends the page, and empty rows at a page's edges are
        skipped (`range` says where the rows sit).
        """
        tool = READ_TOOL
        meta = self.meta(tool, spreadsheet)
        sheet = meta.sheet(where.sheet if where else None)
        bounded = (where or a1.A1Range()).on(sheet.title).clamp(sheet.rows, sheet.columns)
        assert bounded.start_row and bounded.start_col and bounded.end_row and bounded.end_col
        if bounded.end_row > sheet.rows or bounded.end_col > sheet.columns:
            raise ToolFailure(
                "invalid_arguments",
                f"range: Range ({bounded}) exceeds grid limits. Max rows: {sheet.rows}, max columns: {sheet.columns}",
                GRID_HINT,
            )
        width = bounded.end_col - bounded.start_col + 1
        cap = self.config.max_read_cells
        if width > cap:
            raise ToolFailure(
                "too_large",
                f"range: {bounded} is {width} columns wide; one answer holds at most {cap} cells",
                "Read fewer columns at a time, such as A:Z.",
            )
        render = "FORMULA" if formulas else "FORMATTED_VALUE"
        first = bounded.start_row + offset
        page: dict[str, Any] = {"meta": meta, "sheet": sheet.title, "rows": [], "first": None, "next": None}
        if first > bounded.end_row:
            if offset:
                raise ToolFailure(
                    "invalid_arguments",
                    f"offset {offset} is past the end of {bounded}",
                    "Start again from offset 0.",
                )
            return page
        rows: list[list[Any]] = []
        cells = chars = pending = requests = 0
        estimate, row, page_first, stopped_at, short = width, first, None, None, False
        while row <= bounded.end_row and requests < REQUESTS_PER_PAGE and cells + estimate <= cap:
            take = max(1, (cap - cells) // estimate)
            if short:  # the data may have ended: look further in one request, within a bounded transfer
                take = max(take, PROBE_CELLS * cap // width)
            last = min(bounded.end_row, row + take - 1)
            got = self.values(tool, spreadsheet, bounded.rows(row, last), render)
            requests += 1
            for index, values in enumerate(got):
                if not values:
                    pending += 1
                    continue
                # a cell costs its text and its separators (quotes and a comma in the JSON, a column
                # break in the text): many short cells fill an answer as surely as a few long ones
                size = sum(len(str(value)) + CELL_OVERHEAD_CHARS for value in values)
                if rows and (cells + len(values) > cap or chars + size > PAGE_CHARS or pending > GAP_ROWS):
                    stopped_at = row + index
                    break
                if page_first is None:
                    page_first, pending = row + index, 0
                rows.extend([] for _ in range(pending))
                rows.append(values)
                cells, chars, pending = cells + len(values), chars + size, 0
            if stopped_at is not None:
                break
            short = len(got) < last - row + 1
            pending += (last - row + 1) - len(got)
            estimate = max((len(values) for values in got), default=0) or estimate
            row = last + 1
        if stopped_at is None and row <= bounded.end_row:
            stopped_at = row
        page.update(rows=rows, first=page_first, width=width, bounded=bounded)
        page["next"] = stopped_at - bounded.start_row if stopped_at is not None else None
        return page

    # --- writing ------------------------------------------------------------------------------
    def update(self, spreadsheet: str, where: a1.A1Range, values: list[list[Any]], option: str) -> dict[str, Any]:
        self.forget(spreadsheet)
        return self.call_object(
            WRITE_TOOL,
            lambda s: self.cell_values(s).update(
                spreadsheetId=spreadsheet,
                range=where.notation(),
                valueInputOption=option,
                body={"majorDimension": "ROWS", "values": values},
            ),
        )

    def append(self, spreadsheet: str, where: a1.A1Range, values: list[list[Any]], option: str) -> dict[str, Any]:
        self.forget(spreadsheet)  # INSERT_ROWS grows the grid
        answer = self.call_object(
            APPEND_TOOL,
            lambda s: self.cell_values(s).append(
                spreadsheetId=spreadsheet,
                range=where.notation(),
                valueInputOption=option,
                insertDataOption="INSERT_ROWS",
                body={"majorDimension": "ROWS", "values": values},
            ),
        )
        updates: dict[str, Any] = answer.get("updates", {})
        return updates

    def create(self, title: str, sheets: dict[str, list[str]]) -> dict[str, Any]:
        """One request: the sheets, each with its header row as literal text (never a formula)."""
        body: dict[str, Any] = {"properties": {"title": title}}
        if sheets:
            body["sheets"] = []
            for name, header in sheets.items():
                sheet: dict[str, Any] = {
                    "properties": {
                        "title": name,
                        "gridProperties": {"rowCount": 1000, "columnCount": max(26, len(header))},
                    }
                }
                if header:
                    cells = [{"userEnteredValue": {"stringValue": text}} for text in header]
                    sheet["data"] = [{"startRow": 0, "startColumn": 0, "rowData": [{"values": cells}]}]
                body["sheets"].append(sheet)
        return self.call_object(
            CREATE_TOOL,
            lambda s: self.spreadsheets(s).create(
                body=body, fields="spreadsheetId,spreadsheetUrl,properties/title,sheets/properties(sheetId,title)"
            ),
        )

    def survey(self, spreadsheet: str, where: a1.A1Range) -> dict[str, Any]:
        """What a clear would remove: the spreadsheet's title, the range on its sheet, the cells holding data."""
        tool = CLEAR_TOOL
        meta = self.meta(tool, spreadsheet)
        sheet = meta.sheet(where.sheet)
        target = where.on(sheet.title)
        rows = self.values(tool, spreadsheet, target, "FORMULA")
        return {"title": meta.title, "range": target, "filled": count_filled(rows), "digest": digest(rows)}

    def clear(self, spreadsheet: str, where: a1.A1Range) -> str:
        self.forget(spreadsheet)
        found = self.call(
            CLEAR_TOOL,
            lambda s: self.cell_values(s).clear(spreadsheetId=spreadsheet, range=where.notation(), body={}),
        )
        return str(found.get("clearedRange", where.notation()))
