"""The `[notes]` section: the vault (and more vaults), embeddings, daily notes, the watcher and the limits."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, StringConstraints, model_validator

VAULT_LABEL = r"^[a-z0-9][a-z0-9_-]{0,39}$"
DEFAULT_VAULT = "default"  # the label of `[notes] vault`


class VaultConfig(BaseModel):
    """A `[notes.vaults.LABEL]` section: one more vault, with its own index. Unset settings are `[notes]`'s."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The vault folder.", examples=["~/Documents/Work"])
    daily_folder: str | None = Field(default=None, description="Daily notes' folder in this vault.")
    daily_format: str | None = Field(default=None, description="Daily notes' names in this vault.")
    daily_template: str | None = Field(default=None, description="A note this vault's daily notes start from.")
    trash_folder: str | None = Field(default=None, description="Where deleted notes go, inside this vault.")
    watch: bool | None = Field(default=None, description="Pick up edits made outside this vault live.")


class NotesConfig(BaseModel):
    """The `[notes]` section."""

    model_config = ConfigDict(extra="forbid")

    vault: str | None = Field(
        default=None, description="The vault folder; without it the namespace is off.", examples=["~/Documents/Vault"]
    )
    embeddings: Literal["none", "fastembed", "openai"] = Field(
        default="none", description="Semantic search beside BM25: a local model, or an OpenAI-compatible endpoint."
    )
    embedding_model: str | None = Field(
        default=None, description="Default: BAAI/bge-small-en-v1.5 (fastembed), text-embedding-3-small (openai)."
    )
    embedding_model_path: str | None = Field(default=None, description="fastembed: load the model from this folder.")
    embedding_url: str | None = Field(
        default=None, description="openai: an OpenAI-compatible endpoint (default https://api.openai.com/v1)."
    )
    embedding_api_key: SecretStr | None = Field(default=None, description="Or MCP_TOOLS_EMBEDDING_API_KEY.")
    embedding_batch: int = Field(default=32, ge=1, le=512, description="Texts per embedding request.")
    embedding_timeout: float = Field(default=30.0, gt=0, description="Seconds per embedding request.")
    daily_folder: str = Field(default="", description="Daily notes' folder when .obsidian/daily-notes.json is absent.")
    daily_format: str = Field(default="YYYY-MM-DD", description="Daily notes' names, in Moment.js tokens as Obsidian.")
    daily_template: str | None = Field(default=None, description="A note new daily notes start from.")
    watch: bool = Field(default=True, description="Pick up edits made outside live.")
    watch_debounce_ms: int = Field(
        default=300, ge=10, le=60_000, description="Quiet time after an outside edit before it is indexed."
    )
    max_note_bytes: int = Field(
        default=2_000_000, ge=1_000, description="Larger notes are not read, written or indexed."
    )
    trash_folder: str = Field(default=".trash", description="Where deleted notes go, inside the vault.")
    vaults: dict[Annotated[str, StringConstraints(pattern=VAULT_LABEL)], VaultConfig] = Field(
        default_factory=dict,
        description="More vaults by label; tools then take a `vault` argument ([notes] vault is 'default').",
        examples=["work"],
    )

    @model_validator(mode="after")
    def _labels(self) -> NotesConfig:
        if DEFAULT_VAULT in self.vaults:
            raise ValueError(f"[notes.vaults.{DEFAULT_VAULT}]: that label is [notes] vault's; choose another")
        return self
