"""The `[http.outbound]` section: the hosts and networks a request may reach, and per-host credentials."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from mcp_tools.core.tooling import MAX_PAGE_CHARS
from mcp_tools.util.outbound import parse_networks

KIB = 1024
MIB = 1024 * KIB
HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$")


class HostSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    headers: dict[str, SecretStr] = Field(
        default_factory=dict, description="Added to every request to this host; '${NAME}' reads an env variable."
    )


class HttpConfig(BaseModel):
    """The `[http.outbound]` section."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=False, description="Nothing of the namespace exists until this is true.")
    allow_hosts: list[str] = Field(default_factory=list, description="Host globs, e.g. 'api.github.com', '*.x.org'.")
    allow_networks: list[str] = Field(
        default_factory=list, description="Non-public networks that may be reached anyway, e.g. '10.0.5.0/24'."
    )
    allow_plain_http: bool = Field(
        default=False, description="Allow http:// URLs (credentials would travel unencrypted)."
    )
    max_redirects: int = Field(default=0, ge=0, le=10, description="Redirects followed, each checked again.")
    timeout_seconds: float = Field(
        default=30.0, gt=0, le=300, description="For the whole request, redirects and body included."
    )
    max_response_bytes: int = Field(
        default=5 * MIB, ge=1 * KIB, le=100 * MIB, description="Bodies are cut here (truncated: true)."
    )
    max_base64_bytes: int = Field(
        default=256 * KIB,
        ge=1 * KIB,
        le=10 * MIB,
        description="Binary bodies up to this size come back as base64; larger ones are omitted.",
    )
    page_chars: int = Field(
        default=20_000, ge=1_000, le=MAX_PAGE_CHARS, description="Text (or base64) returned per call."
    )
    hosts: dict[str, HostSettings] = Field(
        default_factory=dict, description="Settings for one host, e.g. its credentials.", examples=["api.github.com"]
    )

    @field_validator("allow_networks")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        parse_networks(value)
        return value
