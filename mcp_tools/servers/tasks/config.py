"""The `[tasks]` section: only pydantic, so importing it stays cheap."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class TasksConfig(BaseModel):
    """The `[tasks]` section; the account itself is set up in `[google]`. An empty section turns tasks on."""

    model_config = ConfigDict(extra="forbid")
