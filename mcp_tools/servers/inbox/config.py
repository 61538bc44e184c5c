"""The `[inbox]` config section: only pydantic, so importing it stays cheap."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

MIB = 1024 * 1024


def parse_listen(value: str) -> tuple[str, int]:
    """`host:port` or `[v6-host]:port` -> (host, port)."""
    host, separator, port_text = value.rpartition(":")
    if not separator or not port_text.isdigit() or not host:
        raise ValueError(f"listen address {value!r} must look like 127.0.0.1:2525")
    port = int(port_text)
    if not 0 <= port <= 65535:
        raise ValueError(f"port {port} is out of range")
    return host.strip("[]"), port


class InboxConfig(BaseModel):
    """The `[inbox]` section."""

    model_config = ConfigDict(extra="forbid")

    addresses: list[str] = Field(
        default_factory=list,
        description="Accepted recipients; SMTP refuses all others.",
        examples=[["assistant@example.org"]],
    )
    listen: str = Field(default="127.0.0.1:2525", description="Where `mcp-tools inbox smtp` listens.")
    max_message_bytes: int = Field(
        default=25 * MIB, ge=1024, le=1024 * MIB, description="Largest raw message accepted by any path."
    )
    max_attachment_bytes: int = Field(
        default=1 * MIB, ge=1024, le=64 * MIB, description="Largest binary attachment inbox.attachment returns."
    )
    blob_dir: Path | None = Field(
        default=None, description="Raw messages and attachments; relative paths are under the data dir."
    )
    summary_url: str | None = Field(
        default=None,
        description="An OpenAI-compatible endpoint that summarises new messages; unset: a local summary.",
        examples=["http://127.0.0.1:11434/v1"],
    )
    summary_model: str = Field(default="gpt-4o-mini", description="Model name sent to the endpoint.")
    summary_api_key: SecretStr | None = Field(default=None, description="Or MCP_TOOLS_SUMMARY_API_KEY.")
    summary_timeout_seconds: float = Field(
        default=20.0, gt=0, le=300, description="Time for the summary call before the local summary is used."
    )
    notify: Literal["log", "none", "telegram"] = Field(
        default="log", description="How a new message is announced; telegram uses the bot of [approvals.telegram]."
    )

    @field_validator("addresses")
    @classmethod
    def _normalise_addresses(cls, value: list[str]) -> list[str]:
        cleaned = [address.strip().lower() for address in value if address.strip()]
        for address in cleaned:
            if address.count("@") != 1 or address.startswith("@") or address.endswith("@"):
                raise ValueError(f"{address!r} is not an email address like inbox@example.org")
        return cleaned

    @field_validator("listen")
    @classmethod
    def _check_listen(cls, value: str) -> str:
        parse_listen(value)
        return value

    @field_validator("summary_url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("summary_url must start with http:// or https://")
        return value or None
