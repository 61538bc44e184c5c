"""The `[contacts]` section: only pydantic, so importing it stays cheap."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ContactsConfig(BaseModel):
    """The `[contacts]` section; the account itself is set up in `[google]`. An empty section turns contacts on."""

    model_config = ConfigDict(extra="forbid")

    directory: bool = Field(True, description="Also search the Workspace directory (people of your organisation)")
