"""Small network facts shared by the transports and the namespaces."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from typing import Any

# The names and browser origins of this machine, accepted whenever a server listens on loopback.
LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost"]
LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


def is_loopback(host: str | None) -> bool:
    """True for `localhost` and loopback addresses (IPv6 with or without brackets)."""
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str | None) -> bool:
    """An address that listens on every interface (`0.0.0.0`, `::`), loopback included."""
    try:
        return ipaddress.ip_address((host or "").strip().strip("[]")).is_unspecified
    except ValueError:
        return False


def url_host(host: str) -> str:
    """The host to put in a URL for a server listening on `host`: on every interface, this
    machine's loopback address (a browser cannot open 0.0.0.0, and it is no allowed Host);
    an IPv6 address in brackets."""
    if is_wildcard(host):
        return "127.0.0.1" if ":" not in host else "[::1]"
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def wildcard_without_names(host: str, allowed_hosts: Sequence[str]) -> str | None:
    """What to tell the person who serves on every interface without naming the host clients use."""
    if not is_wildcard(host) or allowed_hosts:
        return None
    return (
        f"serving on {host} with no [http] allowed_hosts: clients on this machine get in (127.0.0.1, localhost), "
        "others are refused (421 Invalid Host header) until allowed_hosts names the host they use, e.g. "
        'allowed_hosts = ["mcp.example.org", "192.168.1.20:*"]'
    )


# One authority as the Host header and an Origin carry it: a DNS name or IPv4 address, or an IPv6
# address in brackets, and an optional port. Nothing else: no list, no user, no path.
_AUTHORITY = re.compile(r"(?P<name>[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])(?::(?P<port>[0-9]{1,5}))?")
_ORIGIN = re.compile(r"(?P<scheme>https?)://(?P<authority>[^/?#@\s,]+)")


def parse_authority(value: str) -> tuple[str, str | None] | None:
    """`(name, port)` of a single `host[:port]`, lower-cased; None for anything else."""
    found = _AUTHORITY.fullmatch(value.strip().lower())
    if found is None:
        return None
    return found["name"], found["port"]


def origin_authority(origin: str) -> tuple[str, str, str | None] | None:
    """`(scheme, name, port)` of an Origin that is exactly `scheme://host[:port]`; None otherwise.

    An Origin never has a path, a query, user info or a second value; one that does is forged.
    """
    found = _ORIGIN.fullmatch(origin.strip().lower())
    if found is None:
        return None
    authority = parse_authority(found["authority"])
    return None if authority is None else (found["scheme"], *authority)


def _matches(name: str, port: str | None, pattern: str) -> bool:
    """`name` matches only without a port, `name:8765` that port, `name:*` any port."""
    wanted = pattern.strip().lower()
    if wanted.endswith(":*"):
        base = parse_authority(wanted[:-2])
        return base is not None and base[1] is None and base[0] == name and port is not None
    allowed = parse_authority(wanted)
    return allowed is not None and allowed == (name, port)


def host_allowed(host: str, allowed_hosts: Sequence[str]) -> bool:
    """A Host header naming exactly one allowed authority (`127.0.0.1:*`, `example.org`)."""
    parsed = parse_authority(host)
    return parsed is not None and any(_matches(*parsed, pattern) for pattern in allowed_hosts)


def origin_allowed(origin: str, allowed_origins: Sequence[str]) -> bool:
    """An Origin that is exactly one allowed `scheme://host[:port]` (`http://localhost:*`)."""
    parsed = origin_authority(origin)
    if parsed is None:
        return False
    scheme, name, port = parsed
    for pattern in allowed_origins:
        allowed_scheme, sep, rest = pattern.strip().lower().partition("://")
        if sep and allowed_scheme == scheme and _matches(name, port, rest):
            return True
    return False


def host_origin_refusal(
    hosts: Sequence[str], origins: Sequence[str], allowed_hosts: Sequence[str], allowed_origins: Sequence[str]
) -> tuple[int, str] | None:
    """Why a request's Host/Origin headers are refused (status, reason), or None when they pass.

    Against DNS rebinding and forged headers: exactly one Host naming one allowed authority, and
    at most one Origin that is exactly an allowed origin. A request without Origin (not from a
    browser) passes.
    """
    if len(hosts) != 1 or not host_allowed(hosts[0], allowed_hosts):
        return 421, "Invalid Host header"
    if len(origins) > 1 or (origins and not origin_allowed(origins[0], allowed_origins)):
        return 403, "Invalid Origin header"
    return None


def address_key(scope: Mapping[str, Any]) -> str:
    """The client address a budget is kept for (an ASGI scope's): an IPv4 address, or an IPv6 /64,
    the block one party usually holds whole."""
    client = scope.get("client")
    host = str(client[0]) if client else ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host[:100]  # a Unix socket, or what a trusted proxy forwarded as it was
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)
