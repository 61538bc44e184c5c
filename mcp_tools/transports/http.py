"""Streamable HTTP: `/mcp` for every enabled namespace, `/<namespace>/mcp` for each one alone.

`POST /text-calls` runs the tool calls a model wrote as text, for hosts whose model has no
native tool calling (docs/text-calls.md).

Every path but `/healthz` and `/readyz` needs a bearer token (compared in constant time; its name becomes
the audit principal) and passes Host/Origin validation against DNS rebinding. What anonymous
traffic may take (the public paths' budgets, body sizes and deadlines) and the `[http] max_requests`
places of token holders live in `http_limits`; connection limits in `http_server`.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_tools.composition.app import LOCAL_HTTP_TOKEN_FILE, App
from mcp_tools.core.config import MAKE_TOKEN, ConfigError, describe_weak_tokens
from mcp_tools.transports.google_callback import google_callback_routes, google_sign_in_links
from mcp_tools.transports.http_errors import (
    BodyTooLargeExplained,
    InvalidRequestExplained,
    LoneSurrogatesAnswered,
    ProtocolVersionCheck,
)
from mcp_tools.transports.http_limits import Admission, BusyLimit, Load
from mcp_tools.transports.http_sessions import SessionOwners
from mcp_tools.transports.mcp_server import CALL_BUDGET_SCOPE_KEY, FORMS_SCOPE_KEY, PRINCIPAL_SCOPE_KEY, build_server
from mcp_tools.util.commands import mcp_tools
from mcp_tools.util.net import (
    LOOPBACK_HOSTS,
    LOOPBACK_ORIGINS,
    host_origin_refusal,
    is_loopback,
    is_wildcard,
    url_host,
    wildcard_without_names,
)
from mcp_tools.util.secrets import known_secrets

logger = logging.getLogger("mcp_tools.http")
PUBLIC_PATHS = ("/healthz", "/readyz")
READY_TIMEOUT_SECONDS = 3.0
READY_CHECK_KEPT_SECONDS = 1.0
# Paths with their own authentication: the approvals page (its sign-in and session cookie) and
# the Telegram webhook (Telegram's secret token header), Google's answer to a principal's sign-in
# (its single-use state). Host/Origin checks still apply.
OWN_AUTH_PREFIXES = ("/approvals", "/telegram/webhook", "/google/callback")


def resolve_tokens(app: App, host: str) -> dict[str, str]:
    """The configured tokens; on loopback with none, one kept in a private file in the state dir.

    Off loopback with no token the server does not start: an open port would hand the
    person's accounts to anyone who can reach it.
    """
    tokens = app.config.http_tokens()
    if tokens:
        return tokens
    if not is_loopback(host):
        raise ConfigError(
            f'refusing to serve HTTP on {host} without a bearer token: set [http.tokens] NAME = "..." '
            "or MCP_TOOLS_HTTP_TOKEN"
        )
    path = local_token_path(app)
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(32))
    logger.warning("no HTTP token configured; clients must send the token stored in %s", path)
    token = path.read_text().strip()
    known_secrets.add(token)
    return {"local": token}


def refuse_weak_tokens(app: App, host: str) -> None:
    """A guessable bearer token on a reachable address hands over the person's accounts: refused;
    on loopback, where only this machine can try, a warning."""
    weak = app.config.weak_http_tokens()
    if not weak:
        return
    what = f"the HTTP bearer {describe_weak_tokens(weak)}; make one with: {MAKE_TOKEN}"
    if not is_loopback(host):
        raise ConfigError(f"refusing to serve HTTP on {host}: {what}")
    logger.warning("%s (accepted on loopback only)", what)


def local_token_path(app: App) -> Path:
    return app.environment.state_dir / LOCAL_HTTP_TOKEN_FILE


def security_settings(app: App, host: str) -> TransportSecuritySettings:
    hosts = list(app.config.http.allowed_hosts)
    origins = list(app.config.http.allowed_origins)
    if is_loopback(host) or is_wildcard(host):  # every interface holds loopback too
        hosts += LOOPBACK_HOSTS
        origins += LOOPBACK_ORIGINS
    elif not hosts:
        hosts = [host, f"{host}:*"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def page_security(host: str, allowed_hosts: list[str]) -> TransportSecuritySettings:
    """Host/Origin rules for the standalone approvals page (`mcp-tools approvals serve`)."""
    hosts = list(allowed_hosts)
    origins: list[str] = []
    if is_loopback(host) or is_wildcard(host):
        hosts += LOOPBACK_HOSTS
        origins += LOOPBACK_ORIGINS
    origins += [f"{scheme}://{name.removesuffix(':*')}" for name in allowed_hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


class GuardMiddleware:
    """Host/Origin validation, then bearer-token authentication, in front of everything."""

    def __init__(
        self,
        app: ASGIApp,
        tokens: dict[str, str],
        settings: TransportSecuritySettings,
        form_principals: frozenset[str] = frozenset(),
        oauth: Any = None,
    ) -> None:
        self.app = app
        self.tokens = [(name, token.encode()) for name, token in tokens.items()]
        self.form_principals = form_principals
        self.settings = settings
        self.oauth = oauth  # mcp_tools.oauth.guard.OAuthGuard with [http.oauth]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        public = scope["type"] == "http" and self.oauth is not None and self.oauth.is_public(scope["path"])
        if scope["type"] != "http" or scope["path"] in PUBLIC_PATHS or public:
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refused = header_refusal(request, self.settings)
        if refused is not None:
            await refused(scope, receive, send)
            return
        if scope["path"].startswith(OWN_AUTH_PREFIXES):
            await self.app(scope, receive, send)
            return
        principal = self.authenticate(request.headers.get("authorization", ""))
        scope[FORMS_SCOPE_KEY] = principal is not None and principal in self.form_principals  # an OAuth caller: no
        if self.oauth is not None:
            await self.oauth.admit(scope, receive, send, self.app, request.headers.get("authorization", ""), principal)
            return
        if principal is None:
            await unauthorized()(scope, receive, send)
            return
        scope[PRINCIPAL_SCOPE_KEY] = principal
        await self.app(scope, receive, send)

    def authenticate(self, header: str) -> str | None:
        scheme, _, presented = header.partition(" ")
        if scheme.lower() != "bearer" or not presented:
            return None
        candidate = presented.strip().encode()
        found = None
        for name, token in self.tokens:  # every token is compared, so timing says nothing
            if hmac.compare_digest(candidate, token):
                found = name
        return found


def header_refusal(request: Request, settings: TransportSecuritySettings) -> Response | None:
    """The answer to a request whose Host or Origin is not one of ours (421, 403); None if they are.

    Stricter than the SDK's check, which takes any Host that starts with an allowed `name:` (so
    `127.0.0.1:8765, evil.example`) and any Origin that does (so one with a path).
    """
    refused = host_origin_refusal(
        request.headers.getlist("host"),
        request.headers.getlist("origin"),
        settings.allowed_hosts,
        settings.allowed_origins,
    )
    return None if refused is None else Response(refused[1], status_code=refused[0])


def unauthorized() -> Response:
    body = {"error": "unauthorized", "message": "send Authorization: Bearer <token>"}
    return Response(
        json.dumps(body),
        status_code=401,
        media_type="application/json",
        headers={"WWW-Authenticate": 'Bearer realm="mcp-tools"'},
    )


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


def readyz_endpoint(app: App, load: Load) -> Any:
    """Ready when the state store answers, no audit row waits in the local spool, and a token
    holder's request would find a place: a load balancer sends calls elsewhere while any is not so.

    The public paths filling up does not count: anyone could take the server out of rotation.
    Requests that arrive together share one check of the store, and its answer is kept for a
    second. `/healthz` stays a liveness check: the process is up, restarting it would not help."""
    checked: list[tuple[float, bool]] = []
    checking = anyio.Lock()

    async def store_answers() -> bool:
        from mcp_tools.state.store import StateStoreUnavailable

        async with checking:
            if checked and anyio.current_time() - checked[0][0] < READY_CHECK_KEPT_SECONDS:
                return checked[0][1]
            try:
                with anyio.fail_after(READY_TIMEOUT_SECONDS):
                    await anyio.to_thread.run_sync(app.store.ping, abandon_on_cancel=True)
                answered = True
            except (StateStoreUnavailable, TimeoutError):
                answered = False
            checked[:] = [(anyio.current_time(), answered)]
            return answered

    async def spooled() -> int:
        """Audit rows waiting in the local spool after trying to write them now (free when none wait)."""
        from mcp_tools.state.store import StateStoreUnavailable

        try:
            with anyio.fail_after(READY_TIMEOUT_SECONDS):
                return await anyio.to_thread.run_sync(app.store.audit_waiting, abandon_on_cancel=True)
        except (StateStoreUnavailable, TimeoutError):
            return -1

    async def readyz(request: Request) -> Response:
        waiting = await spooled() if await store_answers() else -1
        if waiting < 0:
            return JSONResponse({"status": "unavailable", "reason": "state store unreachable"}, status_code=503)
        if waiting:  # rows the store refused wait on local disk: `mcp-tools audit` cannot show them
            return JSONResponse(
                {"status": "unavailable", "reason": f"{waiting} audit rows wait in the local spool"}, status_code=503
            )
        if load.saturated():
            reason = f"saturated: all {load.max_requests} requests a token holder may run at once are running"
            return JSONResponse({"status": "unavailable", "reason": reason}, status_code=503)
        return JSONResponse({"status": "ready"})

    return readyz


def approval_routes(
    app: App, host: str, port: int, settings: TransportSecuritySettings, consent: Any = None
) -> list[Any]:
    """The approvals page at `/approvals` (where `consent` asks are answered) and, when configured,
    the Telegram webhook."""
    from starlette.routing import Mount

    from mcp_tools.approvals import serve_page_here

    routes: list[Any] = []
    url = f"http://{url_host(host)}:{port}/approvals"
    page = serve_page_here(app.config.approvals.page, app.store, app.out_of_band, settings, url)
    if page is not None:
        page.consent = consent
        page.google_sign_ins = google_sign_in_links(app)  # a principal's own links to connect Google
        page.login_command = mcp_tools("approvals", "login", "--http")  # the link for the page inside serve --http
        routes.append(Mount("/approvals", app=page))
    elif consent is not None:
        raise ConfigError("[http.oauth] embedded = true needs the approvals page: set [approvals.page] enabled = true")
    if app.config.approvals.telegram and app.config.approvals.telegram.updates == "webhook":
        from mcp_tools.approvals.telegram import WEBHOOK_PATH, TelegramChannel, webhook_endpoint

        telegram = next((c for c in app.out_of_band.channels if isinstance(c, TelegramChannel)), None)
        if telegram is not None:
            telegram.receives_webhook = True
            routes.append(Route(WEBHOOK_PATH, webhook_endpoint(telegram), methods=["POST"]))
    return routes


MAX_TEXT_CALL_BODY = 4_000_000 + 64_000  # the parser reads 1,000,000 characters; a body may hold them as UTF-8


def text_calls_endpoint(app: App) -> Any:
    """`POST /text-calls`: a reply in, `{format, calls, results, markdown, parse_errors}` out.

    The body is the reply as text/plain, or JSON `{"reply", "format"?, "output"?}`. Calls go
    through the same gate as MCP calls, with the token's name as principal and transport `text`;
    high-risk ones come back as `approval_required`, as for any client that cannot ask.
    """

    async def endpoint(request: Request) -> Response:
        from mcp_tools.policy.calls import Caller
        from mcp_tools.textcalls import FORMATS, render_markdown, run_reply, stream_reply

        principal = str(request.scope.get(PRINCIPAL_SCOPE_KEY, "http"))
        caller = Caller(transport="text", principal=principal, spend=request.scope.get(CALL_BUDGET_SCOPE_KEY))
        if request.query_params.get("stream") in ("1", "true"):
            format_ = request.query_params.get("format", "auto")
            if format_ not in FORMATS:
                return _bad_request(400, f"format must be one of {', '.join(FORMATS)}")

            async def body_pieces() -> AsyncIterator[bytes]:
                size = 0
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > MAX_TEXT_CALL_BODY:
                        return  # the parser has read all it reads by then; the rest is not run
                    yield chunk

            async def lines() -> AsyncIterator[bytes]:
                try:
                    async for event in stream_reply(app, body_pieces(), caller, format_):
                        yield _ndjson_line(event)
                except (RecursionError, UnicodeError) as exc:  # the status line is sent: say it in the stream
                    logger.warning("a streamed text-call reply could not be read: %s", type(exc).__name__)
                    yield _ndjson_line({"event": "error", "error": "bad_request", "message": _unreadable(exc)})

            return _DuplexResponse(lines(), media_type="application/x-ndjson")

        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_TEXT_CALL_BODY:
                return _bad_request(
                    413,
                    f"the reply is larger than a text call accepts ({MAX_TEXT_CALL_BODY:,} bytes, about "
                    f"{MAX_TEXT_CALL_BODY / 1_048_576:.1f} MiB): nothing ran. Send only the model's last reply, "
                    "or stream it with ?stream=1 (calls past the limit are not run)",
                )
        format_, output = request.query_params.get("format", "auto"), request.query_params.get("output", "report")
        reply: str | bytes = body
        if request.headers.get("content-type", "").split(";")[0].strip().lower() == "application/json":
            try:
                payload = json.loads(body)
            except RecursionError:
                return _bad_request(400, "the body is not valid JSON: it is nested too deeply")
            except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
                return _bad_request(400, f"the body is not valid JSON: {exc}")
            if not isinstance(payload, dict) or not isinstance(payload.get("reply"), str):
                return _bad_request(400, 'send {"reply": "<the model\'s reply>"} or the reply as text/plain')
            reply_text: str = payload["reply"]
            broken = _lone_surrogate(reply_text)
            if broken is not None:
                return _bad_request(
                    400,
                    f"reply is not Unicode text: it holds a lone surrogate (U+{ord(reply_text[broken]):04X}) "
                    f"at character {broken}",
                )
            reply = reply_text
            format_, output = payload.get("format", format_), payload.get("output", output)
        if not isinstance(format_, str) or format_ not in FORMATS:
            return _bad_request(400, f"format must be one of {', '.join(FORMATS)}")
        if not isinstance(output, str) or output not in ("report", "results", "markdown"):
            return _bad_request(400, "output must be report, results or markdown")
        try:
            report = await run_reply(app, reply, caller, format_)
        except (RecursionError, UnicodeError) as exc:  # a reader's limit, at the boundary: the body's fault
            logger.warning("a text-call reply could not be read: %s", type(exc).__name__)
            return _bad_request(400, _unreadable(exc))
        if output == "markdown":
            return _safe(
                lambda text: Response(text, media_type="text/markdown; charset=utf-8"), render_markdown(report.results)
            )
        return _safe(JSONResponse, report.as_results() if output == "results" else report.as_dict())

    return endpoint


class _DuplexResponse(StreamingResponse):
    """Streams the answer while the request body is still arriving.

    Starlette's own listens for a disconnect on the receive channel, which would swallow the body.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.stream_response(send)


class StreamsEndCleanly:
    """An MCP event stream open when the server stops (Ctrl-C) is ended, not dropped.

    On shutdown the SDK's event-stream responses stop without sending the end of their body, and
    uvicorn logs "ASGI callable returned without completing response" for each connected
    client. Here a response that was started is always finished: the client sees its stream end,
    and the server stops without an error in its log."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = finished = False

        async def tracked(message: Message) -> None:
            nonlocal started, finished
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                finished = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        finally:
            if started and not finished:
                with anyio.CancelScope(shield=True), contextlib.suppress(OSError, RuntimeError):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})


def _bad_request(status: int, message: str) -> Response:
    return JSONResponse({"error": "bad_request", "message": message}, status_code=status)


def _unreadable(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "the reply could not be read: it is nested too deeply"
    return "the reply could not be read: it is not valid Unicode text"


def _lone_surrogate(text: str) -> int | None:
    """Where a string holds a lone surrogate (which no UTF-8 text can), or None."""
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError as exc:
        return exc.start


def _safe(respond: Callable[[Any], Response], content: Any) -> Response:
    """The response, its strings made valid UTF-8 first when they are not (a call echoing `\\ud800`)."""
    try:
        return respond(content)
    except UnicodeEncodeError:
        from mcp_tools.util.text import utf8_safe

        return respond(utf8_safe(content))


def _ndjson_line(event: dict[str, Any]) -> bytes:
    try:
        return json.dumps(event, ensure_ascii=False).encode() + b"\n"
    except UnicodeEncodeError:
        from mcp_tools.util.text import utf8_safe

        return json.dumps(utf8_safe(event), ensure_ascii=False).encode() + b"\n"


def oauth_guard(app: App) -> Any:
    """With `[http.oauth]`, the guard that accepts the authorization server's access tokens."""
    settings = app.config.http.oauth
    if settings is None:
        return None
    import importlib.util

    from mcp_tools.oauth.guard import OAuthGuard
    from mcp_tools.util.commands import pip_install

    if importlib.util.find_spec("joserfc") is None:
        raise ConfigError(f"[http.oauth] needs joserfc to check access tokens: {pip_install('oauth')}")
    if settings.embedded and importlib.util.find_spec("publicsuffixlist") is None:
        raise ConfigError(f"[http.oauth] embedded = true needs publicsuffixlist: {pip_install('oauth')}")
    known_secrets.add_from_model(settings)

    def find_spec(name: str, namespace: str | None) -> Any:
        tool = app.find_tool(name, namespace)
        return tool.spec if tool is not None else None

    def audit(principal: str, tool: str, decision: str, outcome: str) -> None:
        import time

        from mcp_tools.state.store import AuditRow

        row = AuditRow(time.time(), "http", principal[:300], tool, {}, None, decision, None, 0.0, outcome)
        try:
            app.gate.store.record(row)
        except Exception:  # a refusal stands whether or not its row could be written
            logger.exception("could not write the audit row for a refused request")

    embedded = None
    if settings.embedded:
        from mcp_tools.oauth.embedded import EmbeddedAuthorizationServer
        from mcp_tools.oauth.limits import Limits
        from mcp_tools.state import derive_key
        from mcp_tools.state.oauth import OAuthStore

        secret = app.config.state_secret()
        store = OAuthStore(app.gate.store, derive_key(secret, "oauth clients") if secret else None)
        store.import_file(app.environment.state_dir / "oauth.sqlite3")  # from before the state store held it
        issuer = settings.issuer_url
        scopes = list(dict.fromkeys([*settings.required_scopes, *settings.scopes]))
        embedded = EmbeddedAuthorizationServer(
            store, issuer, settings.resource, issuer + "/approvals/consent", scopes, audit, limits=Limits.of(settings)
        )
    max_body = app.config.http.max_body_bytes
    return OAuthGuard(settings, find_spec, audit, embedded=embedded, store=app.gate.store, max_body=max_body)


def build_http_app(app: App, host: str, port: int | None = None) -> Starlette:
    """The ASGI app; its lifespan runs the namespaces' background work and the MCP sessions."""
    oauth = oauth_guard(app)
    refuse_weak_tokens(app, host)
    tokens = app.config.http_tokens() if oauth is not None else resolve_tokens(app, host)
    settings = security_settings(app, host)
    unnamed = wildcard_without_names(host, app.config.http.allowed_hosts)
    if unnamed is not None:
        logger.warning("%s", unnamed)
    managers: list[StreamableHTTPSessionManager] = []
    load = Load(app.config.http.max_requests, app.config.http.public_max_requests)
    routes: list[Route] = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz_endpoint(app, load), methods=["GET"]),
        Route("/text-calls", text_calls_endpoint(app), methods=["POST"]),
        *(oauth.routes() if oauth is not None else []),
    ]

    max_body = app.config.http.max_body_bytes

    def mount(path: str, namespace: str | None) -> None:
        manager = StreamableHTTPSessionManager(
            app=build_server(app, transport="http", namespace=namespace),
            security_settings=settings,
            max_request_body_size=max_body,
        )
        managers.append(manager)
        sessions = SessionOwners(StreamsEndCleanly(StreamableHTTPASGIApp(manager)), manager)
        body_checked = BodyTooLargeExplained(sessions, max_body)
        endpoint = ProtocolVersionCheck(LoneSurrogatesAnswered(InvalidRequestExplained(body_checked)))
        routes.append(Route(path, endpoint=endpoint))

    consent = oauth.embedded if oauth is not None else None
    routes.extend(approval_routes(app, host, app.config.http.port if port is None else port, settings, consent))
    routes.extend(google_callback_routes(app))
    mount("/mcp", None)
    for name, namespace in app.namespaces.items():
        mount(f"/{name}/mcp", name)
        if namespace.http_routes is not None:
            for extra in namespace.http_routes(app.services[name]):
                routes.append(Route(extra.path, extra.endpoint, methods=list(extra.methods)))

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(app.running())
            for manager in managers:
                await stack.enter_async_context(manager.run())
            yield

    def is_public(path: str) -> bool:
        return path.startswith(OWN_AUTH_PREFIXES) or (oauth is not None and oauth.is_public(path))

    starlette = Starlette(routes=routes, lifespan=lifespan)
    starlette.add_middleware(BusyLimit, load=load, is_public=is_public)  # once the token is accepted
    starlette.add_middleware(
        GuardMiddleware,
        tokens=tokens,
        settings=settings,
        form_principals=app.config.form_principals(),
        oauth=oauth,
    )
    # outermost: the public paths' budgets and every body's deadline, before any other work
    starlette.add_middleware(Admission, settings=app.config.http, is_public=is_public, load=load)
    return starlette
