"""Who besides the person can read a Drive file or folder, for the writes that land in it.

Writing into a document, a spreadsheet or a folder that someone else owns or that is shared
exposes the person's words to everyone who can open it, as widely as sharing does: such a write
asks first (high risk), and the line the person reads says with whom the target is shared. The
answer comes from Drive's own metadata (`owners`, `ownedByMe`, `shared`, `permissions`); when it
cannot be had (a scope that does not reach Drive's metadata, an error) the write asks as well.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp_tools.core.tooling import Risk, ToolFailure

SHARING_FIELDS = "id,name,ownedByMe,shared,owners(emailAddress,me),permissions(type,role,emailAddress,domain)"
UNKNOWN = "people this server could not check (Drive did not say who can open it)"


@dataclass
class SharingFacts:
    """Who besides the person can open the target, as the risk check found it (empty: nobody)."""

    shared_with: list[str] = field(default_factory=list)


def audience(metadata: dict[str, Any]) -> list[str]:
    """Who besides the person can open a file, in words, from its Drive metadata."""
    found: list[str] = []
    owners = [owner for owner in metadata.get("owners") or [] if not owner.get("me")]
    if "ownedByMe" not in metadata and not metadata.get("owners"):
        found.append("the members of its shared drive")
    elif metadata.get("ownedByMe") is False or owners:
        names = ", ".join(str(owner.get("emailAddress") or "someone") for owner in owners) or "someone else"
        found.append(f"its owner {names}")
    owner_emails = {str(owner.get("emailAddress", "")).lower() for owner in owners}
    for permission in metadata.get("permissions") or []:
        kind, role = permission.get("type"), permission.get("role", "reader")
        email = str(permission.get("emailAddress", ""))
        if kind == "anyone":
            found.append(f"anyone with the link ({role})")
        elif kind == "domain":
            found.append(f"everyone at {permission.get('domain', 'a domain')} ({role})")
        elif kind in ("user", "group") and role != "owner" and email.lower() not in owner_emails:
            found.append(f"{email or 'a ' + str(kind)} ({role})")
    if metadata.get("shared") and not metadata.get("permissions") and len(found) <= 1:
        found.append("others (Drive says it is shared)")
    return list(dict.fromkeys(found))


def shared_with(service: Any, tool: str, file_id: str) -> list[str]:
    """`audience` of one file, asked of Drive; `[UNKNOWN]` when Drive does not answer: a file
    Drive's metadata does not show (another scope reaches it, or it is missing, which the write
    itself then reports) is asked about all the same."""
    try:
        metadata = service.client.execute(
            "drive",
            "v3",
            lambda s: s.files().get(fileId=file_id, fields=SHARING_FIELDS, supportsAllDrives=True),
            tool=tool,
        )
    except ToolFailure as failure:
        if failure.kind == "invalid_arguments":
            raise
        return [UNKNOWN]
    return audience(metadata if isinstance(metadata, dict) else {})


async def exposure_risk(service: Any, tool: str, file_id: str | None, facts: SharingFacts, base: Risk) -> Risk:
    """High when the target is open to anyone besides the person; else `base`."""
    if file_id:
        facts.shared_with = await service.run(tool, shared_with, service, tool, file_id)
    return Risk.HIGH if facts.shared_with else base


def told(line: str, facts: SharingFacts) -> str:
    """The line the person reads, with whom the target is shared when it is."""
    if not facts.shared_with:
        return line
    return f"{line} — it is shared with {', '.join(facts.shared_with)}, who will see what is written"
