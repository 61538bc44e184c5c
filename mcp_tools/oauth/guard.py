"""The HTTP side of `[http.oauth]`: metadata route, 401/403/429 answers, scopes to tools.

`OAuthGuard.admit` runs after Host/Origin checks for every authenticated path. A static token
(`[http.tokens]`) still signs in as before and reaches every tool; any other bearer token must
be an access token this server accepts. A `tools/call` for a tool outside the token's scopes
is answered 403 `insufficient_scope` naming the scope to ask for; such tools are not listed
for that caller either (`mcp_server` reads the reach this puts in the request scope).
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_tools.inventory.grammar import Entry, covers, parse_entries
from mcp_tools.oauth.resource import ResourceServer, TokenRefused, principal_for
from mcp_tools.oauth.settings import OAuthSettings
from mcp_tools.transports.http_limits import read_at_most, replay

METADATA_PREFIX = "/.well-known/oauth-protected-resource"
DEFAULT_MAX_BODY = 4 * 1024 * 1024  # `[http] max_body_bytes`: a body the MCP endpoint would refuse is refused here
UNAUTHENTICATED = "unauthenticated"
logger = logging.getLogger("mcp_tools.oauth")
AUTHORIZATION_SERVER_PATHS = ("/.well-known/oauth-authorization-server", "/authorize", "/token", "/register", "/revoke")


@dataclass(frozen=True)
class Reach:
    """What one caller's scopes reach; `None` scopes (a static token) reach everything."""

    settings: OAuthSettings
    scopes: frozenset[str] | None

    def allows(self, spec: Any) -> bool:
        return self.scope_for(spec) is None

    __call__ = allows  # the gate and the catalog ask a reach as they ask a function of the spec

    def refusal(self, spec: Any) -> str | None:
        """None when the caller reaches the tool, else why not (the inventory's reach filter)."""
        wanted = self.scope_for(spec)
        return None if wanted is None else f"outside the scopes this sign-in was granted; scope {wanted} reaches it"

    def scope_for(self, spec: Any) -> str | None:
        """None when the caller reaches the tool, else a scope that would reach it."""
        if self.scopes is None or not self.settings.scopes:
            return None  # a static token, or no scopes configured: every tool
        wanted = [scope for scope, entries in self.settings.scopes.items() if _reaches(entries, spec)]
        if self.scopes is None or any(scope in self.scopes for scope in wanted):
            return None
        return wanted[0] if wanted else next(iter(self.settings.scopes))

    def whole_scope(self) -> str | None:
        """None when the caller reaches every tool, else a scope that does (for paths beside MCP,
        such as `/text-calls`, which can run any tool)."""
        if self.scopes is None or not self.settings.scopes:
            return None
        whole = [
            scope
            for scope, entries in self.settings.scopes.items()
            if "*" in entries and not any(entry.startswith("-") for entry in entries)
        ]
        if any(scope in self.scopes for scope in whole):
            return None
        return whole[0] if whole else " ".join(self.settings.scopes)


def _reaches(entries: list[str], spec: Any) -> bool:
    """Whether a scope's entries cover the tool, in the grammar `[server] tools` writes."""
    return covers(_parsed(tuple(entries)), spec)


@functools.lru_cache(maxsize=256)
def _parsed(entries: tuple[str, ...]) -> list[Entry]:
    return parse_entries(entries, "scope entry")  # checked when the config was read


Audit = Callable[[str, str, str, str], None]  # principal, tool, decision, outcome


class OAuthGuard:
    def __init__(
        self,
        settings: OAuthSettings,
        find_spec: Callable[[str, str | None], Any],
        audit: Audit,
        clock: Callable[[], float] = time.monotonic,
        embedded: Any = None,
        store: Any = None,
        max_body: int = DEFAULT_MAX_BODY,
    ) -> None:
        from mcp.server.auth.routes import build_resource_metadata_url

        self.settings = settings
        self.embedded = embedded  # EmbeddedAuthorizationServer with `embedded = true`
        self.server = ResourceServer(settings, embedded=embedded)
        self.find_spec = find_spec
        self.audit = audit
        self.clock = clock
        self.metadata_url = str(build_resource_metadata_url(settings.resource))  # type: ignore[arg-type]
        self.calls: dict[str, deque[float]] = {}
        self.max_body = max_body  # the one limit: every body that can run is read whole and its calls counted
        # Replicas sharing a PostgreSQL state share each principal's budget there; a SQLite
        # state is one machine's, counted in this process.
        self.shared_budget = store if store is not None and getattr(store, "engine", "sqlite") != "sqlite" else None

    def routes(self) -> list[Route]:
        """RFC 9728 metadata at the well-known path for the resource, served by the SDK's handler."""
        from mcp.server.auth.routes import create_protected_resource_routes
        from pydantic import AnyHttpUrl

        scopes = self.scopes_offered()
        # The issuer goes in as a string, so the model keeps it exactly (no added "/"): clients
        # compare it with the issuer the authorization server's metadata names.
        routes = create_protected_resource_routes(
            resource_url=AnyHttpUrl(self.settings.resource),
            authorization_servers=[self.settings.issuer_url],  # type: ignore[list-item]
            scopes_supported=scopes or None,
            resource_name="mcp-tools",
        )
        if self.embedded is not None:
            routes += self.authorization_server_routes(scopes)
        return routes

    def scopes_offered(self) -> list[str]:
        return list(dict.fromkeys([*self.settings.required_scopes, *self.settings.scopes]))

    def authorization_server_routes(self, scopes: list[str]) -> list[Route]:
        """The SDK's authorization-server routes, each refusal written to the audit log."""
        from mcp.server.auth.routes import create_auth_routes
        from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions

        issuer = AuthSettings.model_validate(
            {"issuer_url": self.settings.issuer_url, "resource_server_url": None}
        ).issuer_url
        routes = create_auth_routes(
            self.embedded,
            issuer_url=issuer,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=scopes or None, default_scopes=scopes or None
            ),
            revocation_options=RevocationOptions(enabled=True),
        )
        from mcp.server.auth.handlers.metadata import MetadataHandler
        from mcp.server.auth.routes import build_metadata, cors_middleware

        # Client ID Metadata Documents are served too (a client_id that is an https URL).
        metadata = build_metadata(
            issuer,
            None,
            ClientRegistrationOptions(enabled=True, valid_scopes=scopes or None),
            RevocationOptions(enabled=True),
        )
        metadata.client_id_metadata_document_supported = True
        from mcp_tools.oauth.limits import AddressRate, guard_authorize, guard_register

        def refused(outcome: str) -> None:
            self.audit(UNAUTHENTICATED, "-", "oauth_refused", outcome)

        for route in routes:
            if route.path == "/.well-known/oauth-authorization-server":
                route.app = cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"])
            elif route.path == "/register":
                route.app = guard_register(route.app, AddressRate(self.settings.registrations_per_hour))
            elif route.path == "/authorize":
                route.app = guard_authorize(route.app, self.embedded, refused)
            route.app = _audited(route.app, route.path, self.audit)
        return routes

    def is_public(self, path: str) -> bool:
        if self.embedded is not None and path in AUTHORIZATION_SERVER_PATHS:
            return True
        return path == METADATA_PREFIX or path.startswith(METADATA_PREFIX + "/")

    def challenge(self, status: int = 401, error: str | None = None, scope: str | None = None) -> Response:
        """`WWW-Authenticate: Bearer resource_metadata=..., scope=...` (RFC 9728 §5.1, RFC 6750 §3)."""
        parts = []
        if error:
            parts.append(f'error="{error}"')
        parts.append(f'resource_metadata="{self.metadata_url}"')
        wanted = scope or " ".join(self.settings.required_scopes)
        if wanted:
            parts.append(f'scope="{wanted}"')
        body: dict[str, Any] = {"error": error or "unauthorized"}
        body["message"] = {
            401: "sign in: send Authorization: Bearer <access token> (see resource_metadata)",
            403: f"this token's scopes do not reach the tool; ask for scope {wanted}",
        }.get(status, "refused")
        return Response(
            json.dumps(body),
            status_code=status,
            media_type="application/json",
            headers={"WWW-Authenticate": "Bearer " + ", ".join(parts)},
        )

    async def admit(
        self, scope: Scope, receive: Receive, send: Send, app: ASGIApp, header: str, static: str | None
    ) -> None:
        """Authenticate (a static token's name, or an access token), check reach and rate, run the app."""
        from mcp_tools.transports.mcp_server import CALL_BUDGET_SCOPE_KEY, PRINCIPAL_SCOPE_KEY, REACH_SCOPE_KEY

        if static is not None:
            principal, reach = static, Reach(self.settings, None)
        else:
            scheme, _, presented = header.partition(" ")
            if scheme.lower() != "bearer" or not presented.strip():
                await self.challenge()(scope, receive, send)
                return
            try:
                token = await self.server.check(presented.strip())
            except TokenRefused as refused:
                self.audit(refused.principal or UNAUTHENTICATED, "-", "token_refused", refused.reason)
                await self.challenge(error="invalid_token")(scope, receive, send)
                return
            issuer = str((token.claims or {}).get("iss"))
            principal = principal_for(issuer, token.subject or "")
            reach = Reach(self.settings, frozenset(token.scopes))
        scope[PRINCIPAL_SCOPE_KEY] = principal
        scope[REACH_SCOPE_KEY] = reach
        if not scope["path"].endswith("/mcp"):
            wanted = reach.whole_scope()
            if wanted is not None:  # text calls, ingest endpoints: they reach past the tool list
                self.audit(principal, "-", "insufficient_scope", f"{scope['path'][:100]} needs scope {wanted}")
                await self.challenge(403, "insufficient_scope", wanted)(scope, receive, send)
                return
            if self.settings.calls_per_minute is not None:  # text calls are counted one by one as they run
                scope[CALL_BUDGET_SCOPE_KEY] = functools.partial(self._spend_one, principal)
        if str(scope.get("method", "")).upper() == "POST" and scope["path"].endswith("/mcp"):
            # Read whole, however it is sent (a declared length, chunks, padding), up to the same
            # limit the MCP endpoint has: what is larger is refused here, and what runs is counted.
            body, complete = await read_at_most(receive, self.max_body)
            if not complete:
                if len(body) > self.max_body:
                    await self.too_large()(scope, receive, send)
                return  # else the client went away before its body was whole: nothing to run
            refused_response = self._check_call(scope, body, principal, reach)
            if refused_response is not None:
                await refused_response(scope, receive, send)
                return
            receive = replay(body, receive)
        await app(scope, receive, send)

    def too_large(self) -> Response:
        from mcp_tools.transports.http_errors import too_large_error

        error = too_large_error(self.max_body)
        return Response(json.dumps({"jsonrpc": "2.0", "id": None, "error": error}), 413, media_type="application/json")

    def _check_call(self, scope: Scope, body: bytes, principal: str, reach: Reach) -> Response | None:
        names = _called_tools(body)
        if names is None:
            from mcp_types.jsonrpc import PARSE_ERROR

            error = {"code": PARSE_ERROR, "message": "Parse error: the body is not valid JSON (UTF-8)"}
            return Response(
                json.dumps({"jsonrpc": "2.0", "id": None, "error": error}), 400, media_type="application/json"
            )
        if not names:
            return None
        namespace = scope["path"][1:-4] if scope["path"] != "/mcp" else None
        for name in dict.fromkeys(names):
            spec = self.find_spec(name, namespace or None)
            if spec is None:
                continue
            wanted = reach.scope_for(spec)
            if wanted is not None:
                self.audit(principal, spec.name, "insufficient_scope", f"needs scope {wanted}")
                return self.challenge(403, "insufficient_scope", wanted)
        limit = self.settings.calls_per_minute
        if limit is not None:
            retry = self._spend(principal, len(names), limit)
            if retry is not None:
                self.audit(principal, names[0][:200], "rate_limited", f"over {limit} calls per minute")
                return Response(
                    json.dumps({"error": "rate_limited", "message": f"at most {limit} tool calls per minute"}),
                    status_code=429,
                    media_type="application/json",
                    headers={"Retry-After": str(int(retry))},
                )
        return None

    def _spend_one(self, principal: str, tool: str) -> float | None:
        """One call that runs past the MCP endpoint (a text call): None when it fits the minute."""
        limit = self.settings.calls_per_minute
        if limit is None:
            return None
        retry = self._spend(principal, 1, limit)
        if retry is not None:
            self.audit(principal, tool[:200], "rate_limited", f"over {limit} calls per minute")
        return retry

    def _spend(self, principal: str, calls: int, limit: int) -> float | None:
        """None when `calls` more fit the principal's minute (they are counted), else seconds to wait."""
        if self.shared_budget is not None:
            from mcp_tools.state.store import StateStoreUnavailable

            try:
                return self.shared_budget.spend_calls(principal, calls, limit)  # type: ignore[no-any-return]
            except StateStoreUnavailable:  # this replica still counts its own calls meanwhile
                logger.warning("calls per minute counted per replica: the state store cannot be reached")
        now = self.clock()
        window = self.calls.setdefault(principal, deque())
        while window and window[0] <= now - 60:
            window.popleft()
        if len(window) + calls > limit:
            return max(1, int(60 - (now - window[0])) + 1) if window else 60
        window.extend([now] * calls)
        return None


def _called_tools(body: bytes) -> list[str] | None:
    """The tools a body calls (each `tools/call` of a batch), or None when it cannot be read as JSON:
    such a body is refused, not passed on uncounted to a parser that might read it otherwise."""
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    messages = payload if isinstance(payload, list) else [payload]
    names = []
    for message in messages:
        if isinstance(message, dict) and message.get("method") == "tools/call":
            params = message.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            names.append(name if isinstance(name, str) else "")  # counted even when it names nothing
    return names


def _audited(app: ASGIApp, path: str, audit: Audit) -> ASGIApp:
    """Writes an audit row for every refusal of an authorization-server endpoint: an error
    status with its `error`, or a redirect that carries `error=` back to the client."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        status = 0
        location = ""
        body = b""

        async def watching(message: Message) -> None:
            nonlocal status, location, body
            if message["type"] == "http.response.start":
                status = int(message["status"])
                for name, value in message.get("headers", []):
                    if name.lower() == b"location":
                        location = value.decode("latin-1")
                    elif name.lower() == b"content-type" and value.startswith(b"text/html"):
                        status = 0  # a refusal page for a person: audited where it is written
            elif message["type"] == "http.response.body" and status >= 400 and len(body) < 4096:
                body += message.get("body", b"")
            await send(message)

        await app(scope, receive, watching)
        error = None
        if status >= 400:
            try:
                error = json.loads(body).get("error_description") or json.loads(body).get("error")
            except (ValueError, AttributeError):
                error = f"status {status}"
        elif 300 <= status < 400 and "error=" in location:
            from urllib.parse import parse_qs, urlsplit

            query = parse_qs(urlsplit(location).query)
            error = (query.get("error_description") or query.get("error") or ["refused"])[0]
        if error:
            audit(UNAUTHENTICATED, "-", "oauth_refused", f"{path}: {str(error)[:300]}")

    return wrapped
