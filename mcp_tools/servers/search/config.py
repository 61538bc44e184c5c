"""The `[search]` section."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SearchConfig(BaseModel):
    """The `[search]` section."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, description="Serve search.all over the enabled namespaces.")
    timeout_seconds: float = Field(default=5.0, gt=0, le=120, description="Per namespace; slower ones are partial.")
