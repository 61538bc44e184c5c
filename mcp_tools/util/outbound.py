"""Outbound HTTP that cannot be turned against the machine it runs on.

Used by the `http` namespace and by `files.import`. A request goes out only when its host
matches an allowlist glob; the name is resolved once, every answer must be a public address
(loopback, private, link-local, metadata and other special ranges are refused unless a network
is explicitly allowed), and the connection goes to that checked address while the Host header
and TLS SNI keep the name, so a DNS answer that changes between check and connect changes
nothing. Redirects are not followed unless asked, and every hop is checked again.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from mcp_tools import __version__
from mcp_tools.core.tooling import ToolFailure

Resolver = Callable[[str, int], Awaitable[list[str]]]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
USER_AGENT = f"mcp-tools/{__version__}"
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Headers a caller may not set: they describe the connection, which is ours to manage.
RESERVED_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer"}
)


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for `host`, in its order, without duplicates."""
    import anyio

    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def parse_networks(values: Sequence[str]) -> tuple[IPNetwork, ...]:
    """CIDR strings from the config ('10.0.0.0/8', '127.0.0.1/32'); raises ValueError naming a bad one."""
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{value!r} is not an IP network such as '10.1.2.0/24' or '127.0.0.1/32'") from None
    return tuple(networks)


@dataclass(frozen=True)
class OutboundPolicy:
    """Where requests may go: host globs, and the non-public networks explicitly allowed."""

    allow_hosts: tuple[str, ...]
    allow_networks: tuple[IPNetwork, ...] = ()
    allow_plain_http: bool = True

    def host_allowed(self, host: str) -> bool:
        return any(fnmatch.fnmatchcase(host, pattern.lower()) for pattern in self.allow_hosts)

    def address_refusal(self, address: str) -> str | None:
        """Why this address may not be contacted, or None when it may."""
        try:
            ip: IPAddress = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return "not an IP address"
        embedded = embedded_ipv4(ip)
        if embedded is not None:
            ip = embedded
        if any(ip.version == network.version and ip in network for network in self.allow_networks):
            return None
        if ip.is_loopback:
            return "a loopback address"
        if ip.is_link_local:
            return "a link-local address (where cloud metadata services live)"
        if ip.is_private:
            return "a private address"
        if not ip.is_global or ip.is_multicast:
            return "not a public address"
        return None


NAT64 = ipaddress.ip_network("64:ff9b::/96")
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, compatible, NAT64, 6to4): that is where it leads."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in NAT64 or (ip in IPV4_COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


@dataclass
class FetchResult:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    truncated: bool
    url: str
    address: str
    redirects: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Target:
    url: str
    scheme: str
    host: str
    port: int
    host_header: str


def check_url(url: str, policy: OutboundPolicy, field_name: str = "url") -> Target:
    """Scheme, credentials and host against the policy; the host comes back IDNA-encoded."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise ToolFailure("invalid_arguments", f"{field_name} is not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ToolFailure("invalid_arguments", f"{field_name} must be an http(s) URL with a host")
    if scheme == "http" and not policy.allow_plain_http:
        raise ToolFailure("denied_by_policy", f"{field_name} uses plain http, which the config does not allow")
    if parts.username is not None or parts.password is not None:
        raise ToolFailure(
            "invalid_arguments",
            f"{field_name} must not carry a user name or password",
            "credentials for a host belong in the server's config, which adds them itself",
        )
    try:
        host = parts.hostname.rstrip(".").encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise ToolFailure("invalid_arguments", f"{field_name} has a host name that is not valid") from None
    if not policy.host_allowed(host):
        raise ToolFailure(
            "denied_by_policy",
            f"host {host} is not in the allowed hosts",
            "only hosts the person listed in the config can be contacted; ask them to add it",
        )
    port = port or (443 if scheme == "https" else 80)
    default_port = port == (443 if scheme == "https" else 80)
    bracketed = f"[{host}]" if ":" in host else host
    host_header = bracketed if default_port else f"{bracketed}:{port}"
    netloc = host_header
    clean = urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))
    return Target(clean, scheme, host, port, host_header)


async def pinned_address(target: Target, policy: OutboundPolicy, resolver: Resolver) -> str:
    """Resolve once and check every answer; the first is the one we connect to."""
    try:
        literal = ipaddress.ip_address(target.host)
        addresses = [str(literal)]
    except ValueError:
        try:
            addresses = await resolver(target.host, target.port)
        except OSError as error:
            reason = error.strerror or error
            raise ToolFailure("upstream_error", f"could not resolve {target.host} ({reason})") from None
    if not addresses:
        raise ToolFailure("upstream_error", f"{target.host} has no address")
    for address in addresses:
        refusal = policy.address_refusal(address)
        if refusal:
            raise ToolFailure(
                "denied_by_policy",
                f"{target.host} resolves to {address}, {refusal}; requests to it are refused",
                "only public addresses can be contacted unless the config allows that network",
            )
    return addresses[0]


def _pinned_url(target: Target, address: str) -> str:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    host = f"[{ip}]" if ip.version == 6 else str(ip)
    parts = urlsplit(target.url)
    return urlunsplit((parts.scheme, f"{host}:{target.port}", parts.path, parts.query, ""))


async def fetch(
    *,
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes | None,
    policy: OutboundPolicy,
    resolver: Resolver = system_resolver,
    credentials_for: Callable[[str], Mapping[str, str]] = lambda host: {},
    max_bytes: int,
    timeout: float,
    max_redirects: int = 0,
    verify: Any = True,
) -> FetchResult:
    """One request (and up to `max_redirects` checked redirects); the body is cut at `max_bytes`."""
    import anyio
    import httpx

    redirects: list[str] = []
    target = check_url(url, policy)
    first_host = target.host
    try:
        with anyio.fail_after(timeout):
            async with httpx.AsyncClient(
                trust_env=False,
                follow_redirects=False,
                timeout=timeout,
                headers={"User-Agent": USER_AGENT},
                verify=verify,
            ) as client:
                while True:
                    address = await pinned_address(target, policy, resolver)
                    credentials = credentials_for(target.host)
                    ours = {name.lower() for name in credentials}
                    sent = {
                        name: value
                        for name, value in headers.items()
                        if name.lower() not in ours and (target.host == first_host or not _sensitive(name))
                    }
                    sent.update(credentials)
                    sent["Host"] = target.host_header
                    request = client.build_request(
                        method,
                        _pinned_url(target, address),
                        headers=sent,
                        content=body,
                        extensions={"sni_hostname": target.host} if target.scheme == "https" else {},
                    )
                    response = await client.send(request, stream=True)
                    try:
                        location = response.headers.get("location")
                        if response.status_code in REDIRECT_STATUSES and location and len(redirects) < max_redirects:
                            next_url = urljoin(target.url, location)
                            redirects.append(next_url)
                            target = check_url(next_url, policy, "a redirect")
                            if response.status_code == 303 or (
                                response.status_code in (301, 302) and method not in ("GET", "HEAD")
                            ):
                                method, body = "GET", None
                            continue
                        data, truncated = await _read_capped(response, max_bytes)
                        return FetchResult(
                            status=response.status_code,
                            headers=list(response.headers.multi_items()),
                            body=data,
                            truncated=truncated,
                            url=target.url,
                            address=address,
                            redirects=redirects,
                        )
                    finally:
                        await response.aclose()
    except TimeoutError:
        raise ToolFailure("timeout", f"no complete answer from {target.host} within {timeout:g} seconds") from None
    except httpx.TimeoutException:
        raise ToolFailure("timeout", f"{target.host} did not answer in time") from None
    except httpx.HTTPError as error:
        raise ToolFailure(
            "upstream_error", f"could not complete the request to {target.host} ({type(error).__name__})"
        ) from None


def _sensitive(name: str) -> bool:
    """Headers that must not follow a redirect to another host."""
    return name.lower() in ("authorization", "cookie", "proxy-authorization") or "token" in name.lower()


async def _read_capped(response: Any, max_bytes: int) -> tuple[bytes, bool]:
    chunks = bytearray()
    async for chunk in response.aiter_bytes():
        room = max_bytes - len(chunks)
        if len(chunk) > room:
            chunks += chunk[:room]
            return bytes(chunks), True
        chunks += chunk
    return bytes(chunks), False
