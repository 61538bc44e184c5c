"""The `[web]` section: the Tavily key and endpoint, and the defaults a search uses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from mcp_tools.core.tooling import NotConfigured
from mcp_tools.util.net import is_loopback

DEFAULT_API_BASE_URL = "https://api.tavily.com"
MAX_RESULTS_CAP = 10
SearchDepth = Literal["basic", "advanced", "fast", "ultra-fast"]


class WebConfig(BaseModel):
    """The `[web]` section."""

    model_config = ConfigDict(extra="forbid")

    api_key: SecretStr | None = Field(default=None, description="Tavily API key; else env TAVILY_API_KEY.")
    api_base_url: str = Field(default=DEFAULT_API_BASE_URL, description="Tavily endpoint (proxies, tests).")
    max_results: int = Field(default=5, ge=1, le=MAX_RESULTS_CAP, description="Results when a call names none.")
    search_depth: SearchDepth = Field(default="basic", description="Depth when a call names none.")
    timeout_seconds: float = Field(default=30.0, gt=0, le=120, description="Total time one search may take.")

    @field_validator("api_base_url")
    @classmethod
    def _https_unless_loopback(cls, value: str) -> str:
        return validate_api_base_url(value)


def validate_api_base_url(value: str) -> str:
    """The key travels in a header, so only loopback endpoints may use plain http."""
    value = value.strip().rstrip("/")
    parts = urlsplit(value)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError("api_base_url must be an http(s) URL such as https://api.tavily.com")
    if parts.username or parts.password:
        raise ValueError("api_base_url must not carry credentials; set api_key instead")
    if parts.query or parts.fragment:
        raise ValueError("api_base_url must not have a query or fragment")
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise ValueError("api_base_url must use https (plain http is allowed only for localhost)")
    return value


def resolve_api_key(config: WebConfig, env: Mapping[str, str]) -> str:
    """Config first, then TAVILY_API_KEY; no key means the namespace is off (never keyless mode)."""
    candidate = config.api_key.get_secret_value() if config.api_key is not None else ""
    candidate = candidate.strip() or env.get("TAVILY_API_KEY", "").strip()
    if not candidate:
        raise NotConfigured("set TAVILY_API_KEY or [web] api_key")
    if any(not (0x21 <= ord(char) <= 0x7E) for char in candidate):
        raise NotConfigured("the Tavily API key contains spaces or characters not allowed in an HTTP header")
    return candidate
