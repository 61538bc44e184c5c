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

    addresses: list[str] = Field(default_factory=list)
    listen: str = "127.0.0.1:2525"
    max_message_bytes: int = Field(default=25 * MIB, ge=1024, le=1024 * MIB)
    max_attachment_bytes: int = Field(default=1 * MIB, ge=1024, le=64 * MIB)
    blob_dir: Path | None = None
    summary_url: str | None = None
    summary_model: str = "gpt-4o-mini"
    summary_api_key: SecretStr | None = None
    summary_timeout_seconds: float = Field(default=20.0, gt=0, le=300)
    notify: Literal["log", "none", "telegram"] = "log"

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
