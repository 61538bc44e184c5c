"""Recipients given by name: each resolved to the one contact address it matches.

A `to`, `cc` or `bcc` entry without "@" is a name. It is looked up with the People API (the
shared searches in `mcp_tools.servers.google.people`) when the sign-in holds the contacts scopes;
exactly one address must match, and the message then goes to `Name <address>`, which the
allowlist and the confirmation see like any address given. Blocking: runs in a worker thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.google.scopes import CONTACTS_OTHER_READONLY, CONTACTS_READONLY, DIRECTORY_READONLY

if TYPE_CHECKING:
    from mcp_tools.servers.gmail.models import ComposeArgs
    from mcp_tools.servers.gmail.service import GmailService

Args = TypeVar("Args", bound="ComposeArgs")
FIELDS = ("to", "cc", "bcc")
MAX_CANDIDATES = 10
SPECIALS = set('()<>[]:;@\\,."')


def is_name(value: str) -> bool:
    return "@" not in value


def display(name: str, address: str) -> str:
    """`Name <address>`, the name quoted when it holds characters an address header treats specially."""
    clean = "".join(ch for ch in name if ch.isprintable() and ch not in '"\\<>').strip()
    if not clean:
        return address
    return f'"{clean}" <{address}>' if SPECIALS & set(clean) else f"{clean} <{address}>"


def resolve_names(service: GmailService, tool: str, args: Args) -> tuple[Args, list[str]]:
    """`args` with every name replaced by its contact's address, and one line per name resolved."""
    names = list(dict.fromkeys(value for field in FIELDS for value in getattr(args, field) if is_name(value)))
    if not names:
        return args, []
    granted = set(service.client.account.granted_scopes())
    if CONTACTS_READONLY not in granted:
        raise ToolFailure(
            "invalid_arguments",
            f"{names[0][:80]!r} is not an email address, and names cannot be looked up: contacts are off",
            "give the address, or ask the person to turn on [contacts] (and sign in again) so names resolve",
        )
    resolved = {name: _one_address(service, tool, name, granted) for name in names}
    update = {field: [resolved.get(value, value) for value in getattr(args, field)] for field in FIELDS}
    notes = [f"{name!r} is {resolved[name]} (from contacts)" for name in names]
    return args.model_copy(update=update), notes


def _one_address(service: GmailService, tool: str, name: str, granted: set[str]) -> str:
    found = service.people.search(
        tool,
        name.strip(),
        MAX_CANDIDATES,
        other=CONTACTS_OTHER_READONLY in granted,
        directory=DIRECTORY_READONLY in granted,
    )
    candidates = list(dict.fromkeys(display(view["name"], address) for view in found for address in view["emails"]))
    if len(candidates) > 1:  # a contact named exactly so, with one address, is the one meant
        wanted = name.strip().casefold()
        exact = [display(v["name"], a) for v in found if v["name"].strip().casefold() == wanted for a in v["emails"]]
        candidates = exact if len(exact) == 1 else candidates
    if not candidates:
        raise ToolFailure(
            "not_found",
            f"no contact with an email address matches {name[:80]!r}",
            "give the address, or check the name with contacts_search",
        )
    if len(candidates) > 1:
        raise ToolFailure(
            "invalid_arguments",
            f"{name[:80]!r} matches several contacts: {'; '.join(candidates[:MAX_CANDIDATES])}",
            "give the address of the one meant",
        )
    return candidates[0]
