"""`[http.oauth]`: which authorization server signs the tokens, and what each scope reaches."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from mcp_tools.inventory.grammar import EntryError, parse_entry
from mcp_tools.util.net import is_loopback

SCOPE = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]+$")  # RFC 6749 scope-token characters


class OAuthSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    issuer: str | None = Field(
        default=None,
        description="The authorization server's issuer identifier (its metadata names it).",
        examples=["https://auth.example.org"],
    )
    embedded: bool = Field(default=False, description="Be the authorization server too (for one person).")
    resource: str = Field(
        description="This server's canonical URI, e.g. https://mcp.example.org/mcp.",
        examples=["https://mcp.example.org/mcp"],
    )
    scopes: dict[str, list[str]] = Field(
        default_factory=dict,
        description=(
            'Which tools each scope reaches, as [server] tools names them: "*", "read_only", a namespace, '
            '"ns.method" or "ns.tier", "-" before one to leave it out.'
        ),
    )
    required_scopes: list[str] = Field(default_factory=list, description="Scopes every token must carry.")
    introspection_client_id: str | None = Field(
        default=None, description="For opaque (non-JWT) access tokens: RFC 7662 introspection credentials."
    )
    introspection_client_secret: SecretStr | None = Field(default=None, description="With introspection_client_id.")
    introspection_cache_seconds: float = Field(
        default=60,
        ge=0,
        le=3600,
        description=(
            "How long an active introspection answer is reused (never past the token's exp); "
            "a token revoked at the issuer may be accepted this long; 0 asks the issuer every time."
        ),
    )
    introspection_cache_entries: int = Field(
        default=10_000,
        ge=1,
        le=1_000_000,
        description="Most introspection answers kept; the least recently used go first.",
    )
    leeway_seconds: int = Field(default=30, ge=0, le=300, description="Clock skew allowed on exp and nbf.")
    jwks_min_refresh_seconds: float = Field(
        default=30, ge=0, le=3600, description="Least time between fetches of the issuer's keys for an unknown kid."
    )
    jwks_cache_seconds: float = Field(
        default=3600, ge=60, le=7 * 24 * 3600, description="How long the issuer's metadata and keys are kept."
    )
    calls_per_minute: int | None = Field(
        default=None, ge=1, le=100_000, description="Tool calls each principal may make per minute; 429 beyond it."
    )

    max_clients: int = Field(
        default=200,
        ge=1,
        le=100_000,
        description=(
            "Most dynamically registered clients kept (embedded); a new one evicts the oldest that holds no tokens."
        ),
    )
    unconsented_client_seconds: float = Field(
        default=86_400,
        ge=60,
        le=30 * 86_400,
        description="How long a registration that never completed a consent is kept (embedded).",
    )
    registrations_per_hour: int = Field(
        default=20, ge=1, le=100_000, description="Client registrations each address may make per hour (embedded)."
    )
    max_pending_consents: int = Field(
        default=500, ge=1, le=100_000, description="Most consent requests waiting at once (embedded); oldest go first."
    )
    max_pending_consents_per_client: int = Field(
        default=10, ge=1, le=1000, description="Most consent requests one client may have waiting (embedded)."
    )

    @field_validator("issuer", "resource")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise ValueError("must be an https:// URL")
        if parts.scheme == "http" and not is_loopback(parts.hostname):
            raise ValueError("must be an https:// URL (http:// is accepted only on a loopback address)")
        if parts.fragment or parts.query:
            raise ValueError("must have no query and no fragment")
        return value

    @field_validator("scopes")
    @classmethod
    def _check_scopes(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for scope, entries in value.items():
            if not SCOPE.match(scope):
                raise ValueError(f"{scope!r} is not a valid scope name")
            for entry in entries:
                try:
                    parse_entry(entry, "scope entry")
                except EntryError as exc:
                    raise ValueError(f"{scope} = [{entry!r}]: {exc}") from None
        return value

    @field_validator("required_scopes")
    @classmethod
    def _check_required(cls, value: list[str]) -> list[str]:
        for scope in value:
            if not SCOPE.match(scope):
                raise ValueError(f"{scope!r} is not a valid scope name")
        return value

    @model_validator(mode="after")
    def _check_issuer(self) -> OAuthSettings:
        if (self.introspection_client_id is None) != (self.introspection_client_secret is None):
            raise ValueError("set both introspection_client_id and introspection_client_secret, or neither")
        if self.embedded and self.issuer is not None and self.issuer != self.embedded_issuer:
            raise ValueError(f"with embedded = true the issuer is this server ({self.embedded_issuer}): leave it out")
        if not self.embedded and self.issuer is None:
            raise ValueError("set issuer (your authorization server) or embedded = true")
        return self

    @property
    def embedded_issuer(self) -> str:
        """This server's own origin, the issuer of an embedded authorization server."""
        parts = urlsplit(self.resource)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def issuer_url(self) -> str:
        """The issuer tokens must name: the configured one, or this server when embedded."""
        return self.embedded_issuer if self.embedded else str(self.issuer)
