"""The `[sheets]` section: only pydantic, so importing it stays cheap."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class SheetsConfig(BaseModel):
    """The `[sheets]` section; the account itself is set up in `[google]`."""

    model_config = ConfigDict(extra="forbid")

    access: Literal["app", "read", "all"] = Field(
        default="app",
        description=(
            '"app": spreadsheets this app created or was given (drive.file); "read": also read every '
            'spreadsheet (spreadsheets.readonly); "all": read and change every spreadsheet (spreadsheets).'
        ),
    )
    allow_formulas: bool = Field(
        default=False,
        description="Let sheets.write and sheets.append evaluate '=' formulas when a call asks (formulas: true).",
    )
    max_read_cells: int = Field(default=2000, ge=100, le=50_000, description="Cells in one sheets.read answer.")
    max_write_cells: int = Field(default=10_000, ge=1, le=100_000, description="Cells one write or append may send.")
