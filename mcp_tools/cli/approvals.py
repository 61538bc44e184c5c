"""`mcp-tools approvals` and `mcp-tools audit`: answer high-risk calls, serve the approvals page,
read the audit log."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from mcp_tools.cli.common import (
    config_of,
    count_of_rows,
    forget_listening,
    listening_base,
    record_listening,
    tcp_port,
)
from mcp_tools.core.config import Config, ConfigError, HttpSettings


def add_commands(commands: Any) -> None:
    approvals = commands.add_parser("approvals", help="approve or deny high-risk calls from clients that cannot ask")
    sub = approvals.add_subparsers(metavar="ACTION")
    listing = sub.add_parser("list", help="pending and approved, unexpired approvals")
    listing.add_argument("--all", action="store_true", help="include used, denied and expired ones")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=cmd_approvals_list)
    for action, text in (("show", "show one approval"), ("approve", "approve it"), ("deny", "deny it")):
        item = sub.add_parser(action, help=text)
        item.add_argument("id")
        item.set_defaults(handler=cmd_approvals_item, action=action)
    serve_page = sub.add_parser("serve", help="serve the approvals page (loopback by default)")
    serve_page.add_argument("--host", help="address (default from [approvals.page] host: 127.0.0.1)")
    serve_page.add_argument("--port", type=tcp_port, help="port (default from [approvals.page] port: 8766)")
    serve_page.set_defaults(handler=cmd_approvals_serve)
    login = sub.add_parser("login", help="print a one-time sign-in link for the approvals page")
    login.add_argument("--http", action="store_true", help="for the page of `serve --http` (at [http] host:port)")
    login.add_argument(
        "--for",
        dest="principal",
        metavar="PRINCIPAL",
        help="a link for one person: it shows and answers only that principal's approvals "
        "(a token's name, or subject@issuer for OAuth)",
    )
    login.set_defaults(handler=cmd_approvals_login)
    approvals.set_defaults(handler=cmd_approvals_list, all=False, json=False)

    audit = commands.add_parser("audit", help="the audit log of every call")
    audit.add_argument(
        "--tail",
        type=count_of_rows,
        default=20,
        metavar="N",
        help="how many of the latest rows (default 20; 0 prints none, a negative number is refused)",
    )
    audit.add_argument("--json", action="store_true", help="one JSON object per line")
    audit.set_defaults(handler=cmd_audit)


def open_store(args: argparse.Namespace) -> Any:
    from mcp_tools.state import open_state_store

    config = config_of(args)
    return open_state_store(config), config


def cmd_approvals_list(args: argparse.Namespace) -> int:
    from mcp_tools.policy.display import json_text, visible

    store, _ = open_store(args)
    now = time.time()
    approvals = [approval.as_dict(now) for approval in store.list_approvals(include_done=args.all)]
    if args.json:
        print(json_text(approvals))
    elif not approvals:
        print("No approvals waiting.")
    for item in [] if args.json else approvals:
        summary = visible(item["summary"])
        print(f"{item['id']}  {item['status']:<9} {item['tool']:<24} expires {item['expires']}  {summary}")
    return 0


def cmd_approvals_item(args: argparse.Namespace) -> int:
    store, config = open_store(args)
    now = time.time()
    if args.action == "show":
        approval = store.get_approval(args.id)
        if approval is None:
            print(f"mcp-tools: no approval with id {args.id}", file=sys.stderr)
            return 1
        from mcp_tools.policy.display import json_text

        shown = approval.as_dict(now) | store.approval_meta([approval.id]).get(approval.id, {})
        print(json_text(shown))
        return 0
    try:
        from mcp_tools.policy.decisions import Decisions

        decided = Decisions(store, config.policy.approval_ttl_seconds).decide(args.id, args.action == "approve", "cli")
    except (LookupError, ValueError) as exc:
        print(f"mcp-tools: {exc}", file=sys.stderr)
        return 1
    from mcp_tools.policy.display import visible

    verb = "Approved" if decided.status == "approved" else "Denied"
    print(f"{verb} {decided.id}: {visible(decided.summary)}")
    if decided.status == "approved":
        print(
            "A call waiting for it runs now; otherwise the same call with the same arguments may run once, "
            f"until {decided.as_dict(now)['expires']}, while what it acts on is as described (if that changes, "
            "you are asked again)."
        )
    return 0


def login_base(config: Config, for_http: bool) -> str:
    from mcp_tools.approvals import page_url
    from mcp_tools.util.commands import mcp_tools
    from mcp_tools.util.net import url_host

    if config.approvals.page.url:
        return page_url(config)
    running = listening_base(config, "http" if for_http else "page")
    if running:
        return running
    if not for_http:
        base, command = page_url(config), mcp_tools("approvals", "serve")
    else:
        base, command = (
            f"http://{url_host(config.http.host)}:{config.http.port}/approvals",
            mcp_tools("serve", "--http"),
        )
    print(
        f"mcp-tools: no `{command}` is running with this state dir ({config.state_dir()}); "
        f"the link is for the configured address, {base}: start the server there to use it",
        file=sys.stderr,
    )
    return base


def cmd_approvals_login(args: argparse.Namespace) -> int:
    from mcp_tools.approvals.page import new_login_link

    store, config = open_store(args)
    link = new_login_link(store, login_base(config, args.http), config.approvals.page.login_ttl_seconds, args.principal)
    print(link)
    print(f"Open it within {config.approvals.page.login_ttl_seconds // 60} minutes; it works once.", file=sys.stderr)
    return 0


def cmd_approvals_serve(args: argparse.Namespace) -> int:
    from mcp_tools.approvals.page import ApprovalsPage, new_login_link
    from mcp_tools.policy.decisions import Decisions
    from mcp_tools.transports.http import page_security
    from mcp_tools.transports.http_server import bind, serve
    from mcp_tools.util.net import is_loopback, url_host

    store, config = open_store(args)
    settings = config.approvals.page
    host = args.host or settings.host
    port = args.port if args.port is not None else settings.port
    if not is_loopback(host) and not settings.allowed_hosts:
        raise ConfigError(
            f"refusing to serve the approvals page on {host} without [approvals.page] allowed_hosts "
            "(the names the page is reached by)"
        )
    if port == 0:
        print("mcp-tools: port 0 is not supported for the page (the sign-in link needs the port)", file=sys.stderr)
        return 2
    sock = bind(host, port)  # a port another program holds must not receive the sign-in link below
    decisions = Decisions(store, config.policy.approval_ttl_seconds)
    page = ApprovalsPage(store, decisions, settings, page_security(host, settings.allowed_hosts))
    base = settings.url or f"http://{url_host(host)}:{port}/approvals"
    print(f"mcp-tools: approvals page on {base}/", file=sys.stderr)
    print(f"Sign in (once, within {settings.login_ttl_seconds // 60} minutes):", file=sys.stderr)
    print(new_login_link(store, base, settings.login_ttl_seconds), flush=True)
    record = record_listening(config, "page", base)
    try:
        # the same connection limits as `serve --http`, and the limits of its paths open to anyone
        serve(page_server(page, config.http), host, port, config.http, sock)
    finally:
        forget_listening(record)
    return 0


def page_server(page: Any, limits: HttpSettings | None = None) -> Any:
    """The page at /approvals; with `limits`, behind the body deadline, body size and
    per-address budgets of the paths `serve --http` opens to anyone."""
    from starlette.applications import Starlette
    from starlette.responses import RedirectResponse
    from starlette.routing import Mount, Route

    async def home(request: Any) -> Any:
        return RedirectResponse("/approvals/", status_code=307)

    app = Starlette(routes=[Route("/", home), Mount("/approvals", app=page)])
    if limits is not None:
        from mcp_tools.transports.http_limits import Admission, Load

        load = Load(limits.max_requests, limits.public_max_requests)
        app.add_middleware(Admission, settings=limits, is_public=lambda path: True, load=load)
    return app


def cmd_audit(args: argparse.Namespace) -> int:
    """Audit rows for a terminal: every field through the one renderer, so a key or value a model
    chose (a bidi override, a zero-width space, a newline) cannot reorder or hide what is shown."""
    from mcp_tools.policy.display import json_text, value_text, visible

    store, _ = open_store(args)
    for row in store.tail(args.tail) if args.tail else []:
        item = row.as_dict()
        if args.json:
            print(json_text(item, indent=None))
            continue
        shown = {key: visible(str(value), 80) if isinstance(value, str) else value for key, value in item.items()}
        arguments = value_text(item["arguments"], 80)
        if len(arguments) > 80:
            arguments = arguments[:79] + "…"
        approval = f" {shown['approval_id']}" if item["approval_id"] else ""
        approval += f" by {shown['answered_by']}" if item["answered_by"] else ""
        tool = f"{shown['tool']}@{shown['account']}" if item["account"] else shown["tool"]
        print(
            f"{shown['time']} {shown['transport']:<5} {shown['principal']:<8} {tool:<22} "
            f"{shown['risk'] or '-':<6} {shown['decision']}{approval} -> {shown['outcome']} "
            f"({item['duration_ms']} ms) {arguments}"
        )
    return 0
