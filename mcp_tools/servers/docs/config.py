"""The `[docs]` section: only pydantic, so importing it stays cheap."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class DocsConfig(BaseModel):
    """The `[docs]` section; the account itself is set up in `[google]`."""

    model_config = ConfigDict(extra="forbid")

    access: Literal["app", "read", "all"] = Field(
        default="app",
        description=(
            '"app": only documents this app created or the person opened with it (drive.file); '
            '"read": read every document, write only the app\'s (documents.readonly); '
            '"all": read and change every document (documents).'
        ),
    )
