"""The `[notes]` section: the vault, embeddings, daily notes, the watcher and the limits."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class NotesConfig(BaseModel):
    """The `[notes]` section."""

    model_config = ConfigDict(extra="forbid")

    vault: str | None = None
    embeddings: Literal["none", "fastembed", "openai"] = "none"
    embedding_model: str | None = None
    embedding_model_path: str | None = None
    embedding_url: str | None = None
    embedding_api_key: SecretStr | None = None
    embedding_batch: int = Field(default=32, ge=1, le=512)
    embedding_timeout: float = Field(default=30.0, gt=0)
    daily_folder: str = ""
    daily_format: str = "YYYY-MM-DD"
    daily_template: str | None = None
    watch: bool = True
    watch_debounce_ms: int = Field(default=300, ge=10, le=60_000)
    max_note_bytes: int = Field(default=2_000_000, ge=1_000)
    trash_folder: str = ".trash"
