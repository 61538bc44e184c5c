"""The consent page's question: which client, where its answers go, and what it asks for.

Where the answers go comes first, as the registrable domain, in full: the client's name is only
what it calls itself, so the page says so when that name does not match the domain.
"""

from __future__ import annotations

from html import escape as e
from typing import Any

from mcp_tools.oauth.destinations import Destination, destination, name_matches


def _where(where: Destination, css: str) -> str:
    notes = "".join(f"<li>{e(note)}</li>" for note in where.notes)
    return (
        f'<li class="{css}"><strong class="site">{e(where.site)}</strong> '
        f'<code class="address">{e(where.address)}</code>{f"<ul>{notes}</ul>" if notes else ""}</li>'
    )


def _name_line(name: str | None, goes_to: Destination) -> str:
    matches = name_matches(name, goes_to)
    shown = f"“{e(name)}”" if name else "no name"
    if matches is None:
        return f'<p class="name">It calls itself {shown}; nothing here can check that name.</p>'
    if matches:
        return f'<p class="name">It calls itself {shown}, which matches {e(goes_to.site)}.</p>'
    return (
        f'<p class="name mismatch"><strong>It calls itself {shown}, which does not match '
        f"{e(goes_to.site)}</strong>, where its answers go. A client chooses its own name: allow it "
        "only if you know that domain.</p>"
    )


def consent_body(asked: dict[str, Any], registered: list[str], root: str, request_id: str, csrf: str) -> str:
    """The `<main>` of the consent page for one waiting request."""
    goes_to = destination(str(asked["redirect_uri"]))
    name = asked.get("client_name")
    others = [destination(uri) for uri in dict.fromkeys(registered) if uri != asked["redirect_uri"]]
    scopes = ", ".join(asked["scopes"]) or "every tool"
    also = (
        '<p>It may also send answers to:</p><ul class="destinations">'
        + "".join(_where(where, "other") for where in others)
        + "</ul>"
        if others
        else ""
    )
    return (
        '<main class="consent"><h2>Allow a client whose answers go to '
        f'<span class="site">{e(goes_to.site)}</span>?</h2>'
        f'<ul class="destinations">{_where(goes_to, "this")}</ul>'
        f"{_name_line(str(name) if name else None, goes_to)}{also}"
        f"<p>It asks to use your tools with <strong>{e(scopes)}</strong>.</p>"
        f'<p>Client id: <code class="client-id">{e(str(asked["client_id"]))}</code></p>'
        f'<form method="post" action="{e(root)}/consent/{e(request_id)}">'
        f'<input type="hidden" name="csrf" value="{e(csrf)}">'
        '<button type="submit" name="answer" value="allow">Allow</button> '
        '<button type="submit" name="answer" value="deny">Deny</button></form></main>'
    )
