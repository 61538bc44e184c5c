"""The http service: credentials filled in from the environment, kept out of results, and recent responses to page."""

from __future__ import annotations

import base64
import re
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel

from mcp_tools.core.tooling import NotConfigured
from mcp_tools.servers.http_requests.config import HEADER_NAME, HttpConfig
from mcp_tools.util.outbound import OutboundPolicy, Resolver, parse_networks, system_resolver

# DEL#
# DEL#
REDACTED = "[redacted]"
CACHED_RESPONSES = 8
ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class HttpService:
    """The policy, the per-host credentials (never shown) and the last few responses for paging."""

    def __init__(self, config: HttpConfig, credentials: dict[str, dict[str, str]]) -> None:
        self.config = config
        self.policy = OutboundPolicy(
            tuple(host.lower() for host in config.allow_hosts),
            parse_networks(config.allow_networks),
            config.allow_plain_http,
        )
        self._credentials = credentials
        self._secrets = secret_variants(value for headers in credentials.values() for value in headers.values())
        self.resolver: Resolver = system_resolver
        self.tls_verify: Any = True  # an ssl.SSLContext to trust a private CA (tests, intranets)
        self.responses: OrderedDict[str, StoredResponse] = OrderedDict()

    def __repr__(self) -> str:
        return f"HttpService(allow_hosts={list(self.policy.allow_hosts)!r}, credentials=[redacted])"

    def credentials_for(self, host: str) -> dict[str, str]:
        return dict(self._credentials.get(host, {}))

    def has_credentials(self, host: str) -> bool:
        return host in self._credentials

    def redact_bytes(self, data: bytes) -> bytes:
        for secret in self._secrets:
            data = data.replace(secret.encode(), REDACTED.encode())
        return data

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text

    def remember(self, response: StoredResponse) -> None:
        self.responses[response.id] = response
        while len(self.responses) > CACHED_RESPONSES:
            self.responses.popitem(last=False)


def secret_variants(values: Any) -> list[str]:
    """Each credential as sent, its parts after a scheme word ('Bearer x'), and their URL-encoded and
    base64 forms, longest first so a longer match is never half-replaced by a shorter one."""
    found: set[str] = set()
    for value in values:
        for part in [value, *value.split()]:
            if len(part) >= 6:
                found.update({part, quote(part, safe=""), base64.b64encode(part.encode()).decode()})
    return sorted(found, key=len, reverse=True)


def expand_credentials(config: HttpConfig, env: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """Header values with `${NAME}` filled in from the environment; a missing variable turns the namespace off."""
    credentials: dict[str, dict[str, str]] = {}
    for host, settings in config.hosts.items():
        headers: dict[str, str] = {}
        for name, secret in settings.headers.items():
            if not HEADER_NAME.match(name):
                raise NotConfigured(f"[http.outbound.hosts.{host!r}] header name {name!r} is not valid")

            def fill(match: re.Match[str], host: str = host) -> str:
                variable = match.group(1)
                if not env.get(variable):
                    raise NotConfigured(f"set the environment variable {variable} (used for {host})")
                return env[variable]

            value = ENV_REFERENCE.sub(fill, secret.get_secret_value())
            if any(char in value for char in "\r\n\0"):
                raise NotConfigured(f"a header value for {host} contains a line break")
            headers[name] = value
        credentials[host.lower().rstrip(".")] = headers
    return credentials


class StoredResponse(BaseModel):
    id: str
    status: int
    url: str
    headers: dict[str, str]
    body: bytes
    truncated: bool
    redirects: list[str]
