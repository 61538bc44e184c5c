"""The approvals page: pending high-risk calls, Approve and Deny, and recent decisions.

A page that can let mail be sent and files be deleted is guarded like one:
- its own login: a one-time link (`mcp-tools approvals login`, or printed by `approvals serve`)
  whose token is stored only as a hash, then an HttpOnly, SameSite=Strict session cookie;
- a CSRF token, bound to the session, on every state change, and POSTs only from its own origin;
- Host/Origin validation against DNS rebinding, a strict Content-Security-Policy, no inline
  script, no third-party assets, no caching, no framing;
- it shows what the confirmation shows (summary, tool, risk, redacted arguments), never a secret.

Every approval has its own link (`/approvals/a/<id>`). The page script long-polls a fragment:
the server answers when what the page shows has changed (woken at once by decisions made in
its process, and within a poll interval by other processes' through the store's events), so new
and decided approvals appear without a reload.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from mcp_tools.approvals.link import ApprovalLinks, link_routes
from mcp_tools.core.config import ApprovalPageSettings
from mcp_tools.core.tooling import Risk
from mcp_tools.policy.decisions import Decisions
from mcp_tools.policy.display import asked_by
from mcp_tools.policy.gate import ConfirmationRequest
from mcp_tools.state.store import Approval, StateStore, iso_time
from mcp_tools.util.commands import mcp_tools
from mcp_tools.util.net import host_origin_refusal, origin_authority, parse_authority

logger = logging.getLogger("mcp_tools.page")
STATIC = Path(__file__).resolve().parent / "static"
COOKIE = "mcp_tools_approvals"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
RECENT = 15
PAGE_SIZE = 20
LONG_POLL_SECONDS = 10.0
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
APPROVAL_ID_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def login_hash(token: str, principal: str | None) -> str:
    """What is stored for a sign-in link: a link for one principal hashes the principal with the
    token, so changing the `for` of a link makes a link that was never issued."""
    return token_hash(token if principal is None else f"{token}\n{principal}")


def new_login_link(store: StateStore, base_url: str, ttl_seconds: float, principal: str | None = None) -> str:
    """A one-time sign-in link; only the token's hash is stored.

    With `principal`, the browser it signs in sees and answers only that principal's approvals
    (one person of several, e.g. an OAuth subject); without, it is the owner's and sees all.
    """
    token = secrets.token_urlsafe(32)
    store.add_page_login(login_hash(token, principal), ttl_seconds)
    query = urlencode({"token": token, **({"for": principal} if principal is not None else {})})
    return f"{base_url.rstrip('/')}/login?{query}"


@dataclass
class Session:
    csrf: str
    expires: float
    principal: str | None = None  # None: the owner, who sees every approval

    def sees(self, approval: Approval) -> bool:
        return self.principal is None or approval.principal == self.principal


class Sessions:
    """Signed-in browsers, by the hash of their cookie, in the state store: a browser signed in
    through one replica is signed in on every replica. The CSRF token is derived from the cookie,
    so nothing stored lets anyone act as the browser."""

    def __init__(self, lifetime_seconds: float, store: StateStore) -> None:
        self.lifetime = lifetime_seconds
        self.store = store

    def start(self, principal: str | None = None) -> tuple[str, Session]:
        cookie = secrets.token_urlsafe(32)
        expires = self.store.add_page_session(token_hash(cookie), self.lifetime, principal)
        return cookie, Session(csrf=csrf_for(cookie), expires=expires, principal=principal)

    def find(self, cookie: str | None) -> Session | None:
        if not cookie or len(cookie) > 200:
            return None
        found = self.store.page_session(token_hash(cookie))
        if found is None:
            return None
        expires, principal = found
        return Session(csrf=csrf_for(cookie), expires=expires, principal=principal)

    def end(self, cookie: str | None) -> None:
        if cookie and len(cookie) <= 200:
            self.store.end_page_session(token_hash(cookie))


def csrf_for(cookie: str) -> str:
    return hmac.new(cookie.encode(), b"mcp-tools approvals page csrf", hashlib.sha256).hexdigest()


def confirmation_request(approval: Approval) -> ConfirmationRequest:
    """The confirmation a client's form would show for this approval (the same words, made visible)."""
    try:
        risk = Risk.parse(approval.risk)
    except ValueError:
        risk = Risk.HIGH
    return ConfirmationRequest(approval.tool, risk, approval.summary, approval.args_display, approval.args_sha256)


class ApprovalsPage:
    """The page's routes, mounted at `/approvals` by `approvals serve` and by `serve --http`."""

    def __init__(
        self,
        store: StateStore,
        decisions: Decisions,
        settings: ApprovalPageSettings,
        security: TransportSecuritySettings,
    ) -> None:
        self.store = store
        self.decisions = decisions
        self.settings = settings
        self.sessions = Sessions(settings.session_hours * 3600, store)
        # the command that prints a sign-in link for this page, as this installation spells it
        self.login_command = mcp_tools("approvals", "login")
        self.security = security
        # Behind a TLS-terminating proxy the request looks like plain HTTP; the public URL says otherwise.
        self.secure_cookie = bool(settings.url and settings.url.startswith("https://"))
        # With `[http.oauth] embedded = true`: the authorization server whose consent asks are answered here.
        self.consent: Any = None
        # Where principals connect Google accounts: principal -> its open sign-ins (label, link, expires).
        self.google_sign_ins: Callable[[str], list[tuple[str, str, float]]] | None = None
        self._routes = self.app()

    def app(self) -> Starlette:
        routes = [
            Route("/", self.index, methods=["GET"]),
            Route("/a/{approval_id}", self.index, methods=["GET"]),
            Route("/fragment", self.fragment, methods=["GET"]),
            Route("/login", self.login, methods=["GET"]),
            Route("/logout", self.logout, methods=["POST"]),
            Route("/a/{approval_id}/{action}", self.decide, methods=["POST"]),
            Route("/static/{name}", self.static, methods=["GET"]),
            Route("/consent/{request_id}", self.consent_page, methods=["GET"]),
            Route("/consent/{request_id}", self.consent_answer, methods=["POST"]),
            Route("/clients/revoke", self.revoke_client, methods=["POST"]),
            *link_routes(ApprovalLinks(self.store, self.decisions, page_shell)),  # URL-mode elicitation's links
        ]
        return Starlette(routes=routes)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Host/Origin checks and the security headers around every route of the page."""
        if scope["type"] != "http":
            return
        request = Request(scope)
        refused: Response | None = None
        reason = host_origin_refusal(
            request.headers.getlist("host"),
            request.headers.getlist("origin"),
            self.security.allowed_hosts,
            self.security.allowed_origins,
        )
        if reason is not None:
            refused = Response(reason[1], status_code=reason[0])
        elif request.method == "POST" and not same_origin(request):
            refused = Response("cross-origin request refused", status_code=403)
        await (refused or self._routes)(scope, receive, self._with_headers(send))

    def _with_headers(self, send: Any) -> Any:
        async def wrapped(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.decode().lower() != "cache-control"]
                headers += [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        return wrapped

    # -- sign-in ----------------------------------------------------------------------------

    def _session(self, request: Request) -> Session | None:
        return self.sessions.find(request.cookies.get(COOKIE))

    async def login(self, request: Request) -> Response:
        token = request.query_params.get("token", "")
        principal = request.query_params.get("for")
        if (
            not token
            or len(token) > 200
            or len(principal or "") > 1000
            or not self.store.use_page_login(login_hash(token, principal))
        ):
            return page_shell(
                "Sign-in link not valid",
                f"<p>This sign-in link is unknown, used or expired. Run <code>{e(self.login_command)}</code> "
                "for a new one.</p>",
                status=403,
            )
        cookie, _ = self.sessions.start(principal)
        target = root_of(request) + "/"
        response = page_shell(
            "Signed in",
            f'<p>Signed in. <a href="{html.escape(target)}">Open the approvals</a>.</p>',
            refresh=target,
        )
        response.set_cookie(
            COOKIE,
            cookie,
            max_age=int(self.sessions.lifetime),
            path=root_of(request) or "/",
            httponly=True,
            samesite="strict",
            secure=self.secure_cookie or request.url.scheme == "https",
        )
        return response

    async def logout(self, request: Request) -> Response:
        session = self._session(request)
        if session is None or not await csrf_ok(request, session):
            return refusal(request, 403, "sign-in or CSRF token missing")
        self.sessions.end(request.cookies.get(COOKIE))
        response = RedirectResponse(root_of(request) + "/", status_code=303)
        response.delete_cookie(COOKIE, path=root_of(request) or "/")
        return response

    # -- pages ------------------------------------------------------------------------------

    async def index(self, request: Request) -> Response:
        session = self._session(request)
        if session is None:
            return signed_out(root_of(request), self.login_command)
        focus = request.path_params.get("approval_id")
        if focus is not None and not valid_id(focus):
            return page_shell("Not found", "<p>No such approval.</p>", status=404)
        root = root_of(request)
        page = page_number(request)
        query = urlencode({k: v for k, v in (("focus", focus), ("page", page if page > 1 else None)) if v})
        body = (
            f'<main id="live" data-fragment="{html.escape(root)}/fragment'
            f'{"?" + html.escape(query) if query else ""}">{self.render(root, session, focus, page)}</main>'
            f'<form method="post" action="{html.escape(root)}/logout" class="logout">'
            f'<input type="hidden" name="{CSRF_FIELD}" value="{html.escape(session.csrf)}">'
            '<button type="submit">Sign out</button></form>'
        )
        return page_shell("Approvals", body, root=root)

    async def fragment(self, request: Request) -> Response:
        session = self._session(request)
        if session is None:
            return JSONResponse({"error": "signed_out"}, status_code=401)
        focus = request.query_params.get("focus")
        if focus is not None and not valid_id(focus):
            focus = None
        since = request.query_params.get("since")
        deadline = time.monotonic() + LONG_POLL_SECONDS
        while True:  # a long poll: answer as soon as what the page shows has changed
            html = self.render(root_of(request), session, focus, page_number(request))
            version = hashlib.sha256(html.encode()).hexdigest()[:16]
            if version != since or time.monotonic() >= deadline or await request.is_disconnected():
                return HTMLResponse(html, headers={"X-Version": version})
            await self.decisions.wait_for_change(min(self.decisions.poll_interval, deadline - time.monotonic()))

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        types = {"page.js": "text/javascript", "page.css": "text/css"}
        if name not in types:
            return Response("not found", status_code=404)
        return Response((STATIC / name).read_bytes(), media_type=types[name])

    async def decide(self, request: Request) -> Response:
        session = self._session(request)
        if session is None:
            return refusal(request, 401, "sign in first")
        if not await csrf_ok(request, session):
            return refusal(request, 403, "CSRF token missing or wrong")
        approval_id, action = request.path_params["approval_id"], request.path_params["action"]
        if action not in ("approve", "deny") or not valid_id(approval_id):
            return refusal(request, 404, "no such action")
        owned = self.store.get_approval(approval_id)
        if owned is not None and not session.sees(owned):
            return refusal(request, 404, f"no approval with id {approval_id}")  # another person's: not even there
        try:
            decided = self.decisions.decide(approval_id, action == "approve", "page")
        except LookupError:
            return refusal(request, 404, f"no approval with id {approval_id}")
        except ValueError as exc:
            return refusal(request, 409, str(exc))
        if wants_json(request):
            return JSONResponse({"id": decided.id, "status": decided.status})
        return RedirectResponse(f"{root_of(request)}/a/{decided.id}", status_code=303)

    # -- OAuth consent (the embedded authorization server) ---------------------------------

    def _consent_of(self, request: Request) -> tuple[str, dict[str, Any]] | None:
        request_id = request.path_params["request_id"]
        if self.consent is None or len(request_id) > 64:
            return None
        found = self.consent.consent_request(request_id)
        return None if found is None else (request_id, found)

    async def consent_page(self, request: Request) -> Response:
        session = self._session(request)
        if session is None or session.principal is not None:
            return page_shell(
                "Sign in to allow a client",
                "<p>An application asks to use your tools. Sign in with a link from "
                f"<code>{e(self.login_command)}</code>, then open this address again.</p>",
                status=401,
            )
        found = self._consent_of(request)
        if found is None:
            return page_shell("Not found", "<p>This request is unknown, answered or expired.</p>", status=404)
        request_id, asked = found
        from mcp_tools.approvals.consent import consent_body

        root = root_of(request)
        registered = self.consent.redirect_uris_of(str(asked["client_id"])) if self.consent is not None else []
        body = consent_body(asked, registered, root, request_id, session.csrf)
        return page_shell("Allow a client", body, root=root)

    async def consent_answer(self, request: Request) -> Response:
        session = self._session(request)
        if session is None or session.principal is not None:
            return refusal(request, 401, "sign in first")
        if not await csrf_ok(request, session):
            return refusal(request, 403, "CSRF token missing or wrong")
        answer = (await request.form()).get("answer")
        if self.consent is None or answer not in ("allow", "deny"):
            return refusal(request, 404, "no such answer")
        target = self.consent.answer(request.path_params["request_id"][:64], answer == "allow")
        if target is None:
            return refusal(request, 404, "this request is unknown, answered or expired")
        # A navigation, not a redirect of the form post: `form-action 'self'` would stop that one.
        return page_shell(
            "Returning to the application",
            f'<p><a href="{e(target)}">Continue to the application</a>.</p>',
            refresh=target,
        )

    async def revoke_client(self, request: Request) -> Response:
        session = self._session(request)
        if session is None or session.principal is not None:
            return refusal(request, 401, "sign in first")
        if not await csrf_ok(request, session):
            return refusal(request, 403, "CSRF token missing or wrong")
        client_id = (await request.form()).get("client_id")
        if self.consent is None or not isinstance(client_id, str) or len(client_id) > 2000:
            return refusal(request, 404, "no such client")
        self.consent.revoke_client(client_id)
        return RedirectResponse(root_of(request) + "/", status_code=303)

    def _clients_section(self, root: str, session: Session) -> str:
        """The applications signed in through the embedded authorization server, each revocable."""
        if self.consent is None or session.principal is not None:
            return ""
        clients = self.consent.clients()
        parts = ['<section class="clients"><h2>Applications signed in</h2>']
        if not clients:
            parts.append('<p class="empty">No application is signed in.</p>')
        for client_id, name in clients:
            parts.append(
                f'<form method="post" action="{e(root)}/clients/revoke" class="client">'
                f"<strong>{e(name if len(name) <= 100 else name[:99] + '…')}</strong> <code>{e(client_id)}</code> "
                f'<input type="hidden" name="{CSRF_FIELD}" value="{e(session.csrf)}">'
                f'<input type="hidden" name="client_id" value="{e(client_id)}">'
                '<button type="submit">Revoke</button></form>'
            )
        parts.append("</section>")
        return "".join(parts)

    # -- rendering --------------------------------------------------------------------------

    def render(self, root: str, session: Session, focus: str | None = None, page: int = 1) -> str:
        now = self.store.clock()
        mine = session.principal
        count = self.store.count_pending(principal=mine)
        pages = max(1, -(-count // PAGE_SIZE))
        page = min(max(1, page), pages)
        pending = self.store.pending_approvals((page - 1) * PAGE_SIZE, PAGE_SIZE, principal=mine)
        focused = self.store.get_approval(focus) if focus else None
        if focused is not None and not session.sees(focused):
            focused = None
        rows = [
            row
            for row in self.store.tail(200)
            if (row.risk == "high" or row.approval_id) and (mine is None or row.principal == mine)
        ][-RECENT:]
        ids = (
            [a.id for a in pending] + ([focused.id] if focused else []) + [r.approval_id for r in rows if r.approval_id]
        )
        meta = self.store.approval_meta(sorted(set(ids)))
        parts: list[str] = []
        if focus:
            if focused is None:
                parts.append('<section class="focus"><p>No approval with this id.</p></section>')
            else:
                parts.append('<section class="focus"><h2>This approval</h2>')
                parts.append(self._card(root, session, focused, meta.get(focused.id, {}), now))
                parts.append(f'<p><a href="{html.escape(root)}/">All approvals</a></p></section>')
        parts.append(self._google_section(session))
        parts.append(f'<section class="pending"><h2>Waiting for you ({count})</h2>')
        if not count:
            parts.append('<p class="empty">Nothing waits for your approval.</p>')
        pager = self._pager(root, page, pages, count)
        parts.append(pager)
        for approval in pending:
            if focused is None or approval.id != focused.id:
                parts.append(self._card(root, session, approval, meta.get(approval.id, {}), now))
        if len(pending) > 3:
            parts.append(pager)
        parts.append("</section>")
        parts.append('<section class="recent"><h2>Recent decisions</h2>')
        if not rows:
            parts.append('<p class="empty">No high-risk calls yet.</p>')
        else:
            parts.append(
                "<table><thead><tr><th>When</th><th>Tool</th><th>Decision</th><th>Answered by</th>"
                "<th>Outcome</th></tr></thead><tbody>"
            )
            for row in reversed(rows):
                by = row.answered_by or (meta.get(row.approval_id or "", {}) or {}).get("decided_by") or ""
                parts.append(
                    f'<tr class="decision-{e(row.decision)}"><td>{time_html(row.ts)}</td>'
                    f"<td>{e(row.tool)}</td><td>{e(row.decision.replace('_', ' '))}</td>"
                    f"<td>{e(by)}</td><td>{e(row.outcome)}</td></tr>"
                )
            parts.append("</tbody></table>")
        parts.append("</section>")
        parts.append(self._clients_section(root, session))
        return "".join(parts)

    def _google_section(self, session: Session) -> str:
        """The Google sign-in links of the principal signed in to the page, to it alone: a link
        connects whatever Google account opens it to that principal, so the owner's view (every
        approval) does not show them either."""
        if self.google_sign_ins is None or session.principal is None:
            return ""
        links = self.google_sign_ins(session.principal)
        if not links:
            return ""
        items = "".join(
            f'<li><a href="{e(link)}" rel="noopener noreferrer" target="_blank">Connect your Google account'
            f"</a> (as {e(label)}; until {time_html(expires)})</li>"
            for label, link, expires in links
        )
        return (
            '<section class="google"><h2>Connect Google</h2><p>A call of yours needs a Google account of '
            f"your own. Open a link, sign in at Google, then call again; each link works once.</p><ul>{items}</ul>"
            "</section>"
        )

    def _pager(self, root: str, page: int, pages: int, count: int) -> str:
        """`Showing 21–40 of 115`, with links to the newer and older pages; nothing when one page holds all."""
        if pages <= 1:
            return ""
        first = (page - 1) * PAGE_SIZE + 1
        last = min(count, page * PAGE_SIZE)
        links = []
        if page > 1:
            links.append(f'<a href="{e(root)}/?page={page - 1}" rel="prev">Newer</a>')
        if page < pages:
            links.append(f'<a href="{e(root)}/?page={page + 1}" rel="next">Older</a>')
        return (
            f'<nav class="pager" aria-label="Pages of pending approvals"><span>Showing {first}–{last} of {count} '
            f"(page {page} of {pages})</span> {' '.join(links)}</nav>"
        )

    def _card(self, root: str, session: Session, approval: Approval, meta: dict[str, Any], now: float) -> str:
        status = approval.effective_status(now)
        link = f"{root}/a/{approval.id}"
        request = confirmation_request(approval)
        who = asked_by(approval.principal, meta.get("transport"), meta.get("client"))
        out = [
            f'<article class="approval status-{e(status)}" id="{e(approval.id)}">',
            f"<h3>{e(request.headline())}</h3>",
            f'<pre class="confirmation">{e(request.details())}</pre>',
            "<dl>",
            f"<dt>Asked</dt><dd>{e(who.removeprefix('asked '))}, {time_html(approval.created)}</dd>",
            f"<dt>Expires</dt><dd>{time_html(approval.expires)}</dd>",
            f'<dt>Approval</dt><dd><a href="{e(link)}">{e(approval.id)}</a></dd>',
            f'<dt>Status</dt><dd class="status">{e(status)}</dd>',
        ]
        if meta.get("decided_by"):
            out.append(f"<dt>Answered by</dt><dd>{e(meta['decided_by'])}</dd>")
        out.append("</dl>")
        if status == "pending":
            out.append('<div class="actions">')
            for action, label in (("approve", "Approve"), ("deny", "Deny")):
                out.append(
                    f'<form method="post" action="{e(link)}/{action}">'
                    f'<input type="hidden" name="{CSRF_FIELD}" value="{e(session.csrf)}">'
                    f'<button type="submit" class="{action}" data-approval="{e(approval.id)}">{label}</button></form>'
                )
            out.append("</div>")
        out.append("</article>")
        return "".join(out)


def time_html(ts: float) -> str:
    """A time the page script shows in the person's own zone, relative ("2 min ago"), exact on hover.

    Without the script it reads as UTC. The markup holds no relative words, so it changes only
    when the data does (the long poll compares versions of it).
    """
    exact = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))
    return f'<time datetime="{e(iso_time(ts))}" title="{e(exact)}">{e(exact[:16])} UTC</time>'


def e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def valid_id(value: str) -> bool:
    return 0 < len(value) <= 40 and set(value) <= APPROVAL_ID_CHARS


def page_number(request: Request) -> int:
    """`?page=N` of the pending list; anything else is the first page."""
    value = request.query_params.get("page", "")
    return int(value) if value.isdigit() and len(value) < 7 else 1


def root_of(request: Request) -> str:
    return str(request.scope.get("root_path", "")).rstrip("/")


def same_origin(request: Request) -> bool:
    """A state change must come from this page: its Origin is exactly `scheme://` and the host it was sent to."""
    origin = origin_authority(request.headers.get("origin") or "")
    host = parse_authority(request.headers.get("host") or "")
    return origin is not None and host is not None and origin[1:] == host


async def csrf_ok(request: Request, session: Session) -> bool:
    presented = request.headers.get(CSRF_HEADER)
    if presented is None:
        content_type = request.headers.get("content-type", "")
        if content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
            form = await request.form()
            value = form.get(CSRF_FIELD)
            presented = value if isinstance(value, str) else None
    return presented is not None and hmac.compare_digest(presented.encode(), session.csrf.encode())


def wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def refusal(request: Request, status: int, message: str) -> Response:
    if wants_json(request):
        return JSONResponse({"error": message}, status_code=status)
    return page_shell("Not done", f"<p>{e(message)}</p>", status=status)


def signed_out(root: str, login_command: str) -> Response:
    return page_shell(
        "Sign in",
        f"<p>Sign in with a link from <code>{e(login_command)}</code> (it works once).</p>",
        status=401,
        root=root,
    )


def page_shell(title: str, body: str, status: int = 200, root: str = "", refresh: str | None = None) -> HTMLResponse:
    root = root or "/approvals"
    script = f'<script src="{e(root)}/static/page.js" defer></script>' if body.startswith("<main") else ""
    meta_refresh = f'<meta http-equiv="refresh" content="0; url={e(refresh)}">' if refresh else ""
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"{meta_refresh}<title>{e(title)} · mcp-tools</title>"
        f'<link rel="stylesheet" href="{e(root)}/static/page.css">{script}</head>'
        f'<body><header><h1>{e(title)}</h1><p class="live" role="status" aria-live="polite"></p></header>'
        f"{body}</body></html>"
    )
    return HTMLResponse(page, status_code=status)
