"""Where a client's answers go, told so that a person cannot be fooled by how it looks.

A client names itself, so its name proves nothing; what the person can check is where the code
goes. The consent page shows, first and in full, the registrable domain of each redirect URI
(the part someone registered: `attacker.example` in `claude.ai.<padding>.attacker.example`, by
the Public Suffix List, which knows `github.io` or `co.uk` are suffixes anyone can register
under), then the whole host, never cut. An internationalized name is shown in its `xn--` form
(letters of other alphabets can imitate familiar ones), an IP address as an address, a loopback
address as this computer, an application's own scheme as such; and it says when the client's name
does not match the domain its answers go to.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from mcp_tools.util.net import is_loopback

WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Destination:
    uri: str
    scheme: str
    host: str  # the whole host, as the browser will use it ("" for an application's scheme)
    site: str  # what to read first: the registrable domain, an IP address, "this computer", a scheme
    kind: str  # domain, ip, loopback, app, suffix
    notes: list[str] = field(default_factory=list)

    @property
    def address(self) -> str:
        """Scheme, whole host and port, without the path."""
        if self.kind == "app":
            return self.uri
        parts = urlsplit(self.uri)
        port = f":{parts.port}" if parts.port else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}{port}"


@lru_cache(maxsize=1)
def _suffixes() -> Any:
    from publicsuffixlist import PublicSuffixList  # its bundled list: nothing is fetched

    return PublicSuffixList()


def destination(uri: str) -> Destination:
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        note = f"whichever application claims the {scheme}: scheme (any installed application can)"
        return Destination(uri, scheme, "", "an application on this device", "app", [note])
    host = (parts.hostname or "").rstrip(".").lower()
    if is_loopback(host):
        return Destination(uri, scheme, host, "this computer", "loopback", [f"a program on this computer ({host})"])
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return Destination(uri, scheme, host, host, "ip", ["an IP address, not a domain name: no name says who it is"])
    notes = []
    if any(label.startswith("xn--") for label in host.split(".")):
        notes.append(
            "an internationalized name, shown in its xn-- form: letters of other alphabets can imitate familiar ones"
        )
    site = _suffixes().privatesuffix(host)
    if site is None:
        notes.append("not a domain anyone registered: a public suffix or a name without one")
        return Destination(uri, scheme, host, host, "suffix", notes)
    return Destination(uri, scheme, host, site, "domain", notes)


def name_matches(name: str | None, where: Destination) -> bool | None:
    """Whether a client's name matches the domain its answers go to; None where no domain says
    who it is (this computer, an application's scheme)."""
    if where.kind in ("loopback", "app"):
        return None
    if not name or where.kind != "domain":
        return False
    label = where.site.split(".", 1)[0]
    words = WORD.findall(unicodedata.normalize("NFKC", name).casefold())
    joined = {"".join(words[start:end]) for start in range(len(words)) for end in range(start + 1, len(words) + 1)}
    return label in joined
