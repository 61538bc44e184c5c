"""The `[files]` section: the backend (a local root or an S3 bucket), size limits, the name rule, imports."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

KIB = 1024
MIB = 1024 * KIB


class FilesConfig(BaseModel):
    """The `[files]` section."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["local", "s3"] = Field(
        default="local",
        description="A local folder, or an S3 bucket (R2, MinIO; needs the [s3] extra).",
    )
    names: Literal["strict", "unicode"] = Field(
        default="strict",
        description="'strict': paths of A-Z a-z 0-9 _ - . / only; 'unicode': any printable name, kept exactly.",
    )
    root: Path | None = Field(
        default=None, description="Local folder; default: <data_dir>/files.", examples=["~/Documents/assistant"]
    )
    max_read_bytes: int = Field(default=1 * MIB, ge=1 * KIB, le=64 * MIB, description="Returned per read call.")
    max_write_bytes: int = Field(
        default=10 * MIB, ge=1 * KIB, le=1024 * MIB, description="Per write, and the largest file edit will open."
    )
    bucket: str | None = Field(default=None, description="S3: the bucket.")
    prefix: str = Field(default="", description="S3: the key prefix everything lives under, e.g. 'assistant/'.")
    endpoint_url: str | None = Field(default=None, description="S3: another endpoint (R2, MinIO); unset for AWS.")
    region: str | None = Field(default=None, description="S3: the region, e.g. 'auto'.")
    access_key_id: str | None = Field(default=None, description="S3: better MCP_TOOLS_S3_ACCESS_KEY_ID.")
    secret_access_key: SecretStr | None = Field(default=None, description="S3: better MCP_TOOLS_S3_SECRET_ACCESS_KEY.")
    import_hosts: list[str] = Field(default_factory=list, description="Host globs files.import may fetch from.")
    import_networks: list[str] = Field(
        default_factory=list, description="Non-public networks files.import may reach anyway, e.g. '10.0.5.0/24'."
    )
    import_plain_http: bool = Field(default=False, description="Let files.import fetch http:// URLs.")
    import_timeout_seconds: float = Field(
        default=60.0, gt=0, le=600, description="Most one files.import download may take."
    )

    @field_validator("import_networks")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        from mcp_tools.util.outbound import parse_networks

        parse_networks(value)
        return value
