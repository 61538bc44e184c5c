"""Small network facts shared by the transports and the namespaces."""

from __future__ import annotations

import ipaddress


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
