"""The `mcp-tools` command. Heavy modules are imported inside the commands that need them."""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from mcp_tools import __version__
from mcp_tools.config import Config, ConfigError, default_config_path, load_config

CONFIG_TEMPLATE = """\
# mcp-tools configuration. Every setting is optional; what is shown is the default.
# Secrets may also come from the environment (see the README), which keeps them out of this file.

[server]
# Namespaces to run. Unset: every namespace that is configured (files and inbox need nothing).
# servers = ["files", "notes", "calendar", "web", "inbox"]
# Tools to serve: namespace, namespace.tier (core | extended), namespace.tool, "*" or "*.core";
# a leading "-" excludes. Unset: ["*.core"], the core tier of every running namespace.
# tools = ["files", "notes.core", "-files.move"]
# "dynamic": also serve toolsets_list and toolsets_enable, so the model can add toolsets itself.
discovery = "static"
# Wire names are namespace_method; "." gives namespace.method (some clients reject dots).
wire_separator = "_"
# state_dir = "..."   # approvals, audit log, indexes (default: the platform's state dir)
# data_dir = "..."    # the file store and the inbox's blobs (default: the platform's data dir)
# Our own loggers; other libraries stay at INFO or quieter (MCP_TOOLS_LIBRARY_LOG_LEVEL lowers them).
log_level = "warning"

[policy]
disabled = []              # globs of tools to hide, e.g. ["files.delete"]
read_only = false          # true hides and refuses every tool that changes anything
on_no_elicitation = "approve_out_of_band"   # or "deny"
approval_ttl_seconds = 600
elicitation_timeout_seconds = 300
# Ask before nothing? Ask before everything? Rules are globs over canonical names, checked in
# order, before the shipped defaults. Risks: low | medium | high | deny. Rules come last: every
# key after a [[policy.rules]] line belongs to that rule.
# [[policy.rules]]
# match = "files.write"
# risk = "high"

[http]
host = "127.0.0.1"
port = 8765
allowed_hosts = []         # extra Host values allowed besides loopback
allowed_origins = []       # extra browser Origins allowed
# Named bearer tokens; the name is recorded in the audit log. Or MCP_TOOLS_HTTP_TOKEN(_NAME).
# [http.tokens]
# laptop = "a-long-random-string"

[approvals]
# How high-risk calls reach you when the client cannot ask (see docs/approvals.md).
wait_seconds = 45          # a call waits this long for your answer (Claude Desktop gives up at ~60 s)
# [approvals.page]         # `mcp-tools approvals serve`, and /approvals in `serve --http`
# url = "http://127.0.0.1:8766/approvals"   # set it to make stdio calls wait for the page
# [approvals.telegram]
# chat_id = 123456789
# allowed_user_ids = [123456789]
# bot token: set MCP_TOOLS_TELEGRAM_BOT_TOKEN
# [approvals.notify]
# command = ["notify-send", "mcp-tools: an approval is waiting"]

# Several replicas share approvals, the audit log and sign-ins in PostgreSQL (docs/deploy.md);
# unset, they stay in SQLite files in state_dir. pip install 'mcp-tools-suite[postgres]'
# [state]
# url = "postgresql://mcp_tools:PASSWORD@db.internal:5432/mcp_tools"   # or MCP_TOOLS_STATE_URL
# secret = "32+ random bytes, the same on every replica"               # or MCP_TOOLS_STATE_SECRET

[files]
# root = "~/mcp-files"     # default: <data_dir>/files
# names = "unicode"        # allow spaces, accents and any script in file names (default: "strict")

# [notes]
# vault = "~/Obsidian/Research"

# [calendar]
# url = "https://caldav.icloud.com/"
# username = "you@icloud.com"
# calendar = "AI Assistant Shared"
# timezone = "Europe/Berlin"
# password: set MCP_TOOLS_CALDAV_PASSWORD
# backend = "google"       # instead of CalDAV: a Google calendar named by `calendar`, with [google]

# [web]
# api key: set TAVILY_API_KEY

# [inbox]
# addresses = ["assistant@example.com"]

# [google]
# client_secrets = "~/.config/mcp-tools/client_secret.json"   # then: mcp-tools auth google

# [gmail]
# allowed_recipients = ["*@example.com"]

# [drive]                  # drive, docs, sheets and tasks run only with their section
# access = "app"           # only files this app created or opened; "read" or "all" reach further

# [docs]
# access = "app"

# [sheets]
# access = "app"
# allow_formulas = false

# [tasks]
"""


def main(argv: Sequence[str] | None = None) -> int:
    gc.disable()  # start-up imports allocate much and free little; `serving()` or the end turns it back on
    try:
        return _main(argv)
    finally:
        gc.enable()


def serving() -> None:
    """Start-up is over: what it built lives as long as the server, so the collector leaves it be.

    Collection is off while the SDK, pydantic and the namespaces are imported (about a tenth
    of start-up), and frozen objects are not traversed by later full collections.
    """
    gc.freeze()
    gc.enable()


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(namespaces_wanted(argv))
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    from mcp_tools.logs import configure_logging
    from mcp_tools.secrets import known_secrets, scrub_text

    known_secrets.add_from_environ(os.environ)
    configure_logging()
    from mcp_tools.commands import use_config

    use_config(args.config)  # commands printed from here on reach the same config and state
    try:
        return int(args.handler(args) or 0)
    except ConfigError as exc:
        print(f"mcp-tools: {scrub_text(str(exc))}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        from mcp_tools.policy.store import StateStoreError

        if not isinstance(exc, StateStoreError):
            raise
        print(f"mcp-tools: {scrub_text(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return quiet_broken_pipe()
    finally:
        use_config(None)  # main may run again in this process (tests, embedding)


def quiet_broken_pipe() -> int:
    """The reader went away (`mcp-tools call ... | head`): stop quietly, as a shell tool would."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # so flushing stdout at exit cannot raise again
    os.close(devnull)
    return 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader left


def namespaces_wanted(argv: Sequence[str]) -> list[str] | None:
    """Which namespaces' commands the parser needs: importing them all would slow every start.

    The command word decides: a namespace name needs that namespace, a core command none, and
    no command (or help) lists them all.
    """
    from mcp_tools.servers import CATALOG

    words = [
        word for index, word in enumerate(argv) if not word.startswith("-") and argv[index - 1 : index] != ["--config"]
    ]
    if not words:
        return None
    return [words[0]] if words[0] in CATALOG else []


def build_parser(namespaces: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line; `namespaces` limits which namespaces' own commands are loaded."""
    parser = argparse.ArgumentParser(prog="mcp-tools", description="Policy-gated MCP tools over your data.")
    parser.add_argument("--version", action="version", version=f"mcp-tools {__version__}")
    parser.add_argument("--config", help="config file (default: $MCP_TOOLS_CONFIG or the platform config dir)")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    serve = commands.add_parser("serve", help="serve MCP over stdio (default) or streamable HTTP")
    serve.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    serve.add_argument("--host", help="HTTP address (default from [http] host: 127.0.0.1)")
    serve.add_argument("--port", type=tcp_port, help="HTTP port (default from [http] port: 8765)")
    serve.add_argument(
        "--metrics-port",
        type=tcp_port,
        metavar="N",
        help="serve Prometheus metrics on 127.0.0.1:N (pip install 'mcp-tools-suite[metrics]')",
    )
    serve.add_argument("--servers", help="comma-separated namespaces to run, e.g. files,notes")
    serve.add_argument("--tools", help="what to serve this run, e.g. files,notes.core; --tools=-files.move excludes")
    serve.set_defaults(handler=cmd_serve)

    tools = commands.add_parser("tools", help="list the tools with their wire names, risks and annotations")
    tools.add_argument("--json", action="store_true")
    tools.add_argument("--servers", help="comma-separated namespaces to run")
    tools.add_argument("--tools", help="a selection to show instead of [server] tools")
    tools.add_argument("--all", action="store_true", help="also the tools not served, and why")
    tools.add_argument("--budget", action="store_true", help="characters and ~tokens (chars/4) per tool and namespace")
    tools.set_defaults(handler=cmd_tools)

    call = commands.add_parser("call", help="call one tool through the same policy as a client")
    call.add_argument("name", help="canonical (files.read) or wire (files_read) name")
    call.add_argument("--args", default="{}", help="arguments as a JSON object")
    call.add_argument("--json", action="store_true", help="print the structured result")
    call.set_defaults(handler=cmd_call)

    call_text = commands.add_parser(
        "call-text", help="run the tool calls a model wrote as text (any of three formats) through the same policy"
    )
    call_text.add_argument("file", nargs="?", default="-", help="the model's reply; - (default) reads stdin")
    call_text.add_argument("--json", action="store_true", help="print a JSON list of the results (--output json)")
    call_text.add_argument(
        "--format",
        choices=("auto", "scissors", "prose"),
        default="auto",
        help="the reply's shape: scissors (calls, then the delimiter, then markdown), prose (JSON in the text), "
        "or auto (default: decided from the reply's start)",
    )
    call_text.add_argument(
        "--output",
        choices=("text", "json", "results", "markdown", "report"),
        help="text (default): a section per call; json: [{call, name, is_error, structured}]; results: "
        "[{id, name, content | error}]; markdown: calls and results as markdown; report: "
        "{format, calls, results, markdown, parse_errors}",
    )
    call_text.add_argument(
        "--stream",
        action="store_true",
        help="read the reply as it arrives and run each call as soon as it is complete; prints one JSON event a line",
    )
    call_text.set_defaults(handler=cmd_call_text)

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
    audit.add_argument("--tail", type=int, default=20, help="how many of the latest rows (default 20)")
    audit.add_argument("--json", action="store_true", help="one JSON object per line")
    audit.set_defaults(handler=cmd_audit)

    doctor = commands.add_parser("doctor", help="check the config, the state dir and each namespace")
    doctor.add_argument("--tools", help="a selection to check instead of [server] tools")
    doctor.set_defaults(handler=cmd_doctor)

    config = commands.add_parser("config", help="config helpers")
    config_sub = config.add_subparsers(metavar="ACTION")
    init = config_sub.add_parser("init", help="write a commented config file")
    init.add_argument("--force", action="store_true", help="replace an existing file")
    init.set_defaults(handler=cmd_config_init)

    install = commands.add_parser("install", help="register mcp-tools with a client")
    install_sub = install.add_subparsers(metavar="CLIENT")
    claude = install_sub.add_parser("claude-desktop", help="print (or --write) the Claude Desktop entry")
    claude.add_argument("--write", action="store_true", help="merge the entry into Claude Desktop's config")
    claude.add_argument("--claude-config", help="path of claude_desktop_config.json (default: the platform's)")
    claude.add_argument("--name", default="mcp-tools", help="server name in Claude Desktop")
    claude.set_defaults(handler=cmd_install_claude)

    auth = commands.add_parser("auth", help="sign in to an account that namespaces use")
    auth_sub = auth.add_subparsers(metavar="ACCOUNT")
    google = auth_sub.add_parser("google", help="sign in to Google (gmail and the other Google namespaces)")
    google.add_argument("--no-browser", action="store_true", help="print the address; paste back where it ends")
    google.set_defaults(handler=cmd_auth_google)

    add_namespace_commands(commands, namespaces)
    accept_config_anywhere(parser)
    return parser


def tcp_port(text: str) -> int:
    """A port number, refused by the parser when out of range (0 picks a free one)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0 to 65535)")
    return port


def accept_config_anywhere(parser: argparse.ArgumentParser) -> None:
    """`--config PATH` after the command too (`mcp-tools serve --config x.toml`), as people and
    client configs write it; given before the command, it is not overridden."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in {id(sub): sub for sub in action.choices.values()}.values():
                if "--config" not in sub._option_string_actions:
                    sub.add_argument("--config", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
                accept_config_anywhere(sub)


def add_namespace_commands(commands: Any, namespaces: Sequence[str] | None) -> None:
    """`mcp-tools NAMESPACE COMMAND` for the commands a namespace declares."""
    from mcp_tools.servers import CATALOG, load_namespace

    for name in CATALOG if namespaces is None else namespaces:
        try:
            namespace = load_namespace(name)
        except Exception as exc:  # a broken namespace must not take the whole CLI down
            logging.getLogger("mcp_tools").warning("namespace %s offers no commands: %s", name, exc)
            continue
        if not namespace.commands:
            continue
        group = commands.add_parser(name, help=f"{name} commands")
        group_sub = group.add_subparsers(metavar="ACTION")
        for command in namespace.commands:
            parser = group_sub.add_parser(command.name, help=command.help)
            command.add_arguments(parser)
            parser.set_defaults(handler=cmd_namespace, namespace=name, command=command.name)


def _config(args: argparse.Namespace) -> Config:
    return load_config(args.config)


def _servers(value: str | None) -> list[str] | None:
    """`--servers a,b`: known namespaces only, so a typo stops the server instead of serving nothing."""
    if not value:
        return None
    from mcp_tools.servers import CATALOG
    from mcp_tools.suggest import closest

    names = [part.strip() for part in value.split(",") if part.strip()]
    for name in names:
        if name not in CATALOG:
            close = closest(name, CATALOG)
            guess = f"; did you mean {close[0]!r}?" if close else f"; expected some of {', '.join(sorted(CATALOG))}"
            raise ConfigError(f"--servers: unknown namespace {name!r}{guess}")
    return names


def _tools(args: argparse.Namespace) -> list[str] | None:
    value = getattr(args, "tools", None)
    return None if value is None else [part.strip() for part in value.split(",") if part.strip()]


def cmd_serve(args: argparse.Namespace) -> int:
    import anyio

    from mcp_tools.app import build_app

    config = _config(args)
    from mcp_tools.logs import configure_logging

    configure_logging(config.server.log_level)
    app = build_app(config, _servers(args.servers), _tools(args))
    if args.metrics_port is not None:
        _serve_metrics(app, args.metrics_port)
    if not args.http:
        try:
            anyio.run(_serve_stdio, app)
        except BaseExceptionGroup as group:  # the client closed our stdout: it is gone, end quietly
            if group.split(BrokenPipeError)[1] is not None:
                raise
            return quiet_broken_pipe()
        return 0
    from mcp_tools.http import build_http_app
    from mcp_tools.http_server import bind, serve

    host = args.host or config.http.host
    port = args.port if args.port is not None else config.http.port
    sock = bind(host, port)  # before anything below names the address
    port = sock.getsockname()[1]
    starlette = build_http_app(app, host, port)
    serving()
    print(f"mcp-tools: serving streamable HTTP on http://{host}:{port}/mcp", file=sys.stderr)
    record = None
    if config.approvals.page.enabled:
        from mcp_tools.commands import mcp_tools

        shown = f"[{host}]" if ":" in host else host
        record = record_listening(config, "http", f"http://{shown}:{port}/approvals")
        print(
            f"mcp-tools: approvals page on http://{shown}:{port}/approvals "
            f"(sign in with the link from `{mcp_tools('approvals', 'login', '--http')}`)",
            file=sys.stderr,
        )
    try:
        serve(starlette, host, port, config.http, sock)
    finally:
        if record is not None:
            forget_listening(record)
    return 0


def _serve_metrics(app: Any, port: int) -> None:
    try:
        from mcp_tools.metrics import serve_metrics

        serve_metrics(port, {tool.spec.name for tool in app.tools.values()})
    except ImportError:
        raise ConfigError("--metrics-port needs prometheus-client: pip install 'mcp-tools-suite[metrics]'") from None
    except OSError as exc:
        raise ConfigError(f"--metrics-port {port}: cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    print(f"mcp-tools: Prometheus metrics on http://127.0.0.1:{port}/metrics", file=sys.stderr)


INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"  # the version tests/inspector pins; it needs Node 22.19+


def terminal_notice() -> str:
    from mcp_tools.commands import mcp_tools

    return (
        "mcp-tools: waiting for an MCP client on stdio (this is a terminal). Connect one with "
        f"`{mcp_tools('install', 'claude-desktop')}`, or try it in "
        f"`npx {INSPECTOR} {mcp_tools('serve')}`. Ctrl-C quits."
    )


async def _serve_stdio(app: Any) -> None:
    from mcp.server.stdio import stdio_server

    from mcp_tools.mcp_server import build_server

    server = build_server(app, transport="stdio")
    serving()
    stdin = None
    if sys.stdin.isatty():  # a person, not a client: say what this is, and let Ctrl-C end it at once
        print(terminal_notice(), file=sys.stderr, flush=True)
        if os.name == "posix":  # waiting on a console handle is not possible on Windows
            stdin = TerminalLines(sys.stdin.fileno())
    async with app.running(), stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]
        await server.run(read_stream, write_stream, server.create_initialization_options())


class TerminalLines:
    """Lines typed on a terminal, read as the event loop sees them arrive.

    The SDK reads stdin in a worker thread, which holds Ctrl-C until the next Enter; waiting on
    the descriptor instead lets cancellation end the server at once.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def __aiter__(self) -> AsyncIterator[str]:
        import anyio

        pending = b""
        while True:
            await anyio.wait_readable(self.fd)
            chunk = os.read(self.fd, 65536)
            if not chunk:
                if pending:
                    yield pending.decode("utf-8", errors="replace")
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                yield line.decode("utf-8", errors="replace") + "\n"


def cmd_tools(args: argparse.Namespace) -> int:
    from mcp_tools.app import build_app
    from mcp_tools.mcp_server import tool_definition

    if args.budget:  # what definitions cost needs their declarations only, not a configured namespace
        app = build_app(_config(args), _servers(args.servers), _tools(args), diagnose=True)
        app.store.close()
        for _, problem in app.problems:
            if problem.startswith("invalid config"):
                raise ConfigError(problem)
        return print_budget(app, app.visible_tools() + selected_but_not_running(app), args.json)
    app = build_app(_config(args), _servers(args.servers), _tools(args))
    app.store.close()
    served = app.visible_tools()
    rows = []
    for tool in served if not args.all else list(app.tools.values()):
        definition = tool_definition(tool)
        annotations = definition.annotations.model_dump(by_alias=True, exclude_none=True)
        rows.append(
            {
                "name": tool.spec.name,
                "wire_name": tool.wire_name,
                "risk": tool.configured_risk.label,
                "escalates": tool.spec.dynamic_risk is not None,
                "tier": tool.spec.tier,
                "served": tool in served,
                "why": app.why(tool.spec),
                "annotations": annotations,
                "description": tool.spec.description,
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(
        f"selection: {app.selection.describe() if app.selection else 'everything'}; discovery: "
        f"{app.config.server.discovery}"
    )
    for row in rows:
        hints = ",".join(key.removesuffix("Hint") for key, value in row["annotations"].items() if value)
        risk = row["risk"] + ("+" if row["escalates"] else "")
        line = f"{row['name']:<28} {row['wire_name']:<28} {risk:<8} {row['tier']:<9} {hints}"
        print(line if row["served"] else f"{line}\n{'':28} not served: {row['why']}")
    hidden = len(app.tools) - len(served)
    if hidden and not args.all:
        from mcp_tools.commands import mcp_tools

        print(
            f"{hidden} more tools of the running namespaces are not served; `{mcp_tools('tools', '--all')}` says why."
        )
    return 0


def selected_but_not_running(app: Any) -> list[Any]:
    """The selected tools of namespaces that could not start here (no vault, no account), bound to
    no service: their definitions are the same whatever the configuration."""
    from mcp_tools.app import wire_name
    from mcp_tools.policy.gate import BoundTool
    from mcp_tools.servers import CATALOG, load_namespace

    if app.selection is None:
        return []
    separator = app.config.server.wire_separator
    return [
        BoundTool(spec, None, wire_name(spec.name, separator), app.rules.configured_risk(spec))
        for name in CATALOG
        if name not in app.namespaces
        for spec in load_namespace(name).tools
        if spec.name in app.selection.chosen and app.rules.hidden_reason(spec) is None
    ]


def print_budget(app: Any, served: list[Any], as_json: bool) -> int:
    """What the served definitions cost in a model's context (`mcp_tools.budget`)."""
    from mcp_tools import budget

    if app.config.server.discovery == "dynamic":  # each client starts with the meta-tools too
        from mcp_tools.app import wire_name
        from mcp_tools.discovery import META_TOOLS
        from mcp_tools.policy.gate import BoundTool

        separator = app.config.server.wire_separator
        served = [
            BoundTool(spec, None, wire_name(spec.name, separator), app.rules.configured_risk(spec))
            for spec in META_TOOLS
            if app.rules.hidden_reason(spec) is None
        ] + served
    costs = budget.costs_of(served)
    if as_json:
        print(json.dumps({"tools": budget.as_json(costs), "instructions_chars": len(app.instructions())}, indent=2))
        return 0
    print(f"selection: {app.selection.describe() if app.selection else 'everything'}")
    print("visible = name + description + inputSchema; full = the whole definition; ~tokens = chars / 4")
    print()
    print(budget.format_tools(costs))
    print(
        f"\nserver instructions: {len(app.instructions()):,} chars, ~{budget.tokens(len(app.instructions())):,} tokens"
    )
    return 0


class TerminalConfirmation:
    """`mcp-tools call` on a terminal asks the person right there.

    Ctrl-C at the prompt is an answer too: a decline, recorded like any other.
    """

    channel = "terminal"

    async def ask(self, request: Any) -> Any:
        import contextlib
        import signal
        import threading

        import anyio
        import anyio.from_thread
        import anyio.lowlevel

        from mcp_tools.policy.gate import Answer

        reply: list[str] = []
        answered = anyio.Event()
        token = anyio.lowlevel.current_token()

        def read() -> None:  # a daemon thread: a Ctrl-C leaves it waiting on stdin without holding up exit
            reply.append(sys.stdin.readline())
            with contextlib.suppress(RuntimeError):  # the prompt was already answered by Ctrl-C
                anyio.from_thread.run_sync(answered.set, token=token)

        with anyio.open_signal_receiver(signal.SIGINT) as interrupts:  # before the prompt: no Ctrl-C slips by
            print(f"{request.headline()}\n\n{request.details()}\n", file=sys.stderr)
            print("Run it? [y/N] ", end="", file=sys.stderr, flush=True)
            threading.Thread(target=read, daemon=True).start()
            async with anyio.create_task_group() as group:

                async def interrupted() -> None:
                    async for _ in interrupts:
                        print("^C", file=sys.stderr)
                        group.cancel_scope.cancel()
                        return

                group.start_soon(interrupted)
                await answered.wait()
                group.cancel_scope.cancel()
        if reply and reply[0].strip().lower() in ("y", "yes"):
            return Answer.ACCEPT
        return Answer.DECLINE


def local_caller(transport: str) -> Any:
    """The person at this terminal: asked y/N when there is a terminal, else like a client that cannot ask."""
    from mcp_tools.policy.gate import Caller

    asker = TerminalConfirmation() if sys.stdin.isatty() and sys.stderr.isatty() else None
    return Caller(transport=transport, principal="local", asker=asker)


def cmd_call(args: argparse.Namespace) -> int:
    import anyio

    from mcp_tools.app import build_app

    try:
        arguments = json.loads(args.args)
    except json.JSONDecodeError as exc:
        print(f"mcp-tools: --args is not valid JSON: {exc}", file=sys.stderr)
        return 2
    app = build_app(_config(args))
    caller = local_caller("cli")

    async def run() -> Any:
        async with app.running():
            # The person runs any running tool by name; the catalog says why a name has none.
            found = app.catalog.resolve(args.name, arguments, "cli", served_only=False)
            if found.tool is None:
                assert found.failure is not None
                return await app.gate.refuse(found.name, found.failure, caller, arguments)
            return await app.gate.call(found.tool, args.name, arguments, caller)

    outcome = anyio.run(run)
    if outcome.action:  # the person at the terminal reads what was done, not the model's instructions
        print(f"Done: {outcome.action}.", file=sys.stderr)
    if args.json:
        print(json.dumps(outcome.structured, indent=2, ensure_ascii=False))
    else:
        print(terminal_text(outcome))
    return 1 if outcome.is_error else 0


def terminal_text(outcome: Any) -> str:
    """A result as a person at a terminal reads it: errors without the hints written for a model."""
    error = outcome.error
    if error is None:
        return str(outcome.text)
    kind, message = error.get("kind"), error.get("message", "")
    if kind == "declined_by_user":
        return f"Not run ({kind}): {message.replace('the person', 'you')}"  # you are the person
    if kind == "approval_required":
        from mcp_tools.commands import mcp_tools

        approval = str(error.get("approval_id"))
        return (
            f"Not run yet ({kind}): {message}\nApprove it with `{mcp_tools('approvals', 'approve', approval)}` "
            f"(or deny it with `{mcp_tools('approvals', 'deny', approval)}`), then run the same command again."
        )
    return str(outcome.text)


def cmd_call_text(args: argparse.Namespace) -> int:
    import anyio

    from mcp_tools.app import build_app
    from mcp_tools.textcalls import MAX_TEXT_CHARS, render_markdown, run_reply

    limit = 4 * MAX_TEXT_CHARS + 4  # bytes enough for the characters the parser reads; it reports the cut
    if args.stream:
        if args.output or args.json:
            print("mcp-tools: --stream prints one JSON event a line; leave out --output and --json", file=sys.stderr)
            return 2
        return _call_text_streamed(args, limit)
    try:
        if args.file == "-":
            data = sys.stdin.buffer.read(limit)
        else:
            with open(args.file, "rb") as handle:
                data = handle.read(limit)
    except OSError as exc:
        print(f"mcp-tools: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    app = build_app(_config(args))
    caller = local_caller("text")

    async def run() -> Any:
        async with app.running():
            return await run_reply(app, data, caller, args.format)

    report = anyio.run(run)
    results = report.results
    status = 1 if report.failed else 0
    output = args.output or ("json" if args.json else "text")
    if output != "text":
        for result in results:
            if result.outcome.notice and output == "json":
                print(result.outcome.notice, file=sys.stderr)
        if output == "markdown":
            print(render_markdown(results), end="")
        else:
            shaped = {
                "json": lambda: [result.as_dict() for result in results],
                "results": report.as_results,
                "report": report.as_dict,
            }[output]()
            print(json.dumps(shaped, indent=2, ensure_ascii=False))
        return status
    if not results:
        print("No tool calls found.", file=sys.stderr)
    for index, result in enumerate(results):
        shown = (result.name or "?") + (f" (as {result.written_as})" if result.written_as else "")
        print(("\n" if index else "") + f"[{result.call.label}] {shown}: {'error' if result.is_error else 'ok'}")
        if result.outcome.notice:  # in the output, not on stderr: the model must read it to report the action
            print(result.outcome.notice)
        print(result.outcome.text)
    if report.format == "scissors" and report.markdown:
        print(("\n" if results else "") + report.markdown.rstrip("\n"))
    return status


def _call_text_streamed(args: argparse.Namespace, limit: int) -> int:
    """`call-text --stream`: events out (NDJSON) while the reply is still coming in."""
    import anyio

    from mcp_tools.app import build_app
    from mcp_tools.textcalls import stream_reply

    try:
        source = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")  # noqa: SIM115
    except OSError as exc:
        print(f"mcp-tools: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    app = build_app(_config(args))
    caller = local_caller("text")
    failed = False

    async def pieces() -> Any:
        taken = 0
        while taken < limit:
            data = await anyio.to_thread.run_sync(source.read1, min(65536, limit - taken))
            if not data:
                return
            taken += len(data)
            yield data

    async def run() -> None:
        nonlocal failed
        async with app.running():
            async for event in stream_reply(app, pieces(), caller, args.format):
                failed = failed or bool(event.get("failed"))
                print(json.dumps(event, ensure_ascii=False), flush=True)

    try:
        anyio.run(run)
    finally:
        if source is not sys.stdin.buffer:
            source.close()
    return 1 if failed else 0


def _store(args: argparse.Namespace) -> Any:
    from mcp_tools.state import open_state_store

    config = _config(args)
    return open_state_store(config), config


def cmd_approvals_list(args: argparse.Namespace) -> int:
    from mcp_tools.policy.display import json_text, visible

    store, _ = _store(args)
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
    store, config = _store(args)
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
            f"until {decided.as_dict(now)['expires']}."
        )
    return 0


def record_listening(config: Config, which: str, base: str) -> Path:
    """Note where a page really listens (`--port` may differ from the config), for `approvals login`."""
    path = config.state_dir() / f"listening-{which}.json"
    write_atomically(path, json.dumps({"url": base, "pid": os.getpid()}) + "\n")
    return path


def forget_listening(path: Path) -> None:
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass


def listening_base(config: Config, which: str) -> str | None:
    """The address a running page recorded, if its process is still alive."""
    try:
        record = json.loads((config.state_dir() / f"listening-{which}.json").read_text(encoding="utf-8"))
        os.kill(int(record["pid"]), 0)
        return str(record["url"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def login_base(config: Config, for_http: bool) -> str:
    from mcp_tools.approvals import page_url

    if not config.approvals.page.url:
        running = listening_base(config, "http" if for_http else "page")
        if running:
            return running
    if for_http and not config.approvals.page.url:
        host = config.http.host
        return f"http://{f'[{host}]' if ':' in host else host}:{config.http.port}/approvals"
    return page_url(config)


def cmd_approvals_login(args: argparse.Namespace) -> int:
    from mcp_tools.approvals.page import new_login_link

    store, config = _store(args)
    link = new_login_link(store, login_base(config, args.http), config.approvals.page.login_ttl_seconds, args.principal)
    print(link)
    print(f"Open it within {config.approvals.page.login_ttl_seconds // 60} minutes; it works once.", file=sys.stderr)
    return 0


def cmd_approvals_serve(args: argparse.Namespace) -> int:
    from mcp_tools.approvals.page import ApprovalsPage, new_login_link
    from mcp_tools.http import page_security
    from mcp_tools.http_server import bind, serve
    from mcp_tools.net import is_loopback
    from mcp_tools.policy.decisions import Decisions

    store, config = _store(args)
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
    shown = f"[{host}]" if ":" in host else host
    base = settings.url or f"http://{shown}:{port}/approvals"
    print(f"mcp-tools: approvals page on {base}/", file=sys.stderr)
    print(f"Sign in (once, within {settings.login_ttl_seconds // 60} minutes):", file=sys.stderr)
    print(new_login_link(store, base, settings.login_ttl_seconds), flush=True)
    record = record_listening(config, "page", base)
    try:
        serve(page_server(page), host, port, config.http, sock)  # the same connection limits as `serve --http`
    finally:
        forget_listening(record)
    return 0


def page_server(page: Any) -> Any:
    from starlette.applications import Starlette
    from starlette.responses import RedirectResponse
    from starlette.routing import Mount, Route

    async def home(request: Any) -> Any:
        return RedirectResponse("/approvals/", status_code=307)

    return Starlette(routes=[Route("/", home), Mount("/approvals", app=page)])


def cmd_audit(args: argparse.Namespace) -> int:
    store, _ = _store(args)
    for row in store.tail(max(1, args.tail)):
        item = row.as_dict()
        if args.json:
            print(json.dumps(item, ensure_ascii=False))
            continue
        arguments = json.dumps(item["arguments"], ensure_ascii=False)
        if len(arguments) > 80:
            arguments = arguments[:79] + "…"
        approval = f" {item['approval_id']}" if item["approval_id"] else ""
        approval += f" by {item['answered_by']}" if item["answered_by"] else ""
        print(
            f"{item['time']} {item['transport']:<5} {item['principal']:<8} {item['tool']:<22} "
            f"{item['risk'] or '-':<6} {item['decision']}{approval} -> {item['outcome']} "
            f"({item['duration_ms']} ms) {arguments}"
        )
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from mcp_tools.app import build_app
    from mcp_tools.secrets import scrub_text

    config = _config(args)
    print(f"config:    {config.source or 'none found; using embedded defaults'}")
    if config.source is None:
        from mcp_tools.commands import mcp_tools

        print(f"           (looked for {default_config_path()}; `{mcp_tools('config', 'init')}` writes one)")
    app = build_app(config, tools=_tools(args), diagnose=True)
    problems: dict[str, str] = {}
    for where, what in app.problems:
        problems[where] = "; ".join(filter(None, (problems.get(where), scrub_text(what))))
    print(f"state dir: {app.environment.state_dir}")
    if "state" in problems:  # approvals and the audit log cannot be shared until this is fixed
        print("state:     the configured state store cannot be used")
        print(f"           problem: {problems['state']}")
    print(f"data dir:  {app.environment.data_dir}")
    tokens = sorted(config.http_tokens())
    print(f"http:      {config.http.host}:{config.http.port}, tokens: {', '.join(tokens) or 'none configured'}")
    policy = config.policy
    print(
        f"policy:    {len(policy.rules)} own rules, read_only={str(policy.read_only).lower()}, "
        f"on_no_elicitation={policy.on_no_elicitation}, disabled={policy.disabled}"
    )
    selection = app.selection.describe() if app.selection else "everything"
    print(f"tools:     {len(app.visible_tools())} served, selection {selection}, discovery={config.server.discovery}")
    if "tools" in problems:
        print(f"           problem: {problems['tools']}")
    channels = ", ".join(channel.name for channel in app.out_of_band.channels) or "none (approval_required at once)"
    print(f"approvals: channels {channels}; calls wait up to {config.approvals.wait_seconds:g} s")
    if "approvals" in problems:
        print(f"           problem: {problems['approvals']}")
    print("namespaces:")
    for status in app.statuses:
        count = len(app.visible_tools(status.name)) if status.enabled else 0
        noun = "tool" if count == 1 else "tools"
        state = f"on  ({count} {noun})" if status.enabled else f"off: {scrub_text(status.reason or '')}"
        if status.enabled:
            reasons: dict[str, list[str]] = {}
            for tool in app.tools.values():
                if tool.spec.namespace == status.name and tool not in app.visible_tools(status.name):
                    reasons.setdefault(app.why(tool.spec), []).append(tool.spec.method)
            if reasons:
                state += "; not served: " + "; ".join(f"{', '.join(v)} ({k})" for k, v in reasons.items())
        print(f"  {status.name:<9} {state}")
        if status.name in problems and problems[status.name].startswith(f"namespace {status.name} cannot start"):
            print(
                "            problem: it is asked for by name ([server] servers, tools or --tools), so `serve` "
                "stops until the above is fixed"
            )
        elif status.name in problems:
            print(f"            problem: {problems[status.name]}")
        for line in app.status_lines(status.name):
            if line.startswith("missing:"):
                problems.setdefault(status.name, line)
            print(f"            {line}")
    if len(app.visible_tools()) < len(app.tools):
        print("           to serve more, add a namespace ('files'), a tier ('files.extended') or a tool")
        print("           ('files.move') to [server] tools; see docs/toolsets.md")
    if "google" in config.sections:
        from mcp_tools.servers.google.cli import doctor_lines

        for line in doctor_lines(config):
            print(line)
    app.store.close()
    if problems:
        print(f"\n{len(problems)} problem(s) to fix: {', '.join(problems)}", file=sys.stderr)
        return 1
    return 0


def cmd_auth_google(args: argparse.Namespace) -> int:
    from mcp_tools.servers.google.cli import auth_google

    return auth_google(_config(args), args)


def cmd_config_init(args: argparse.Namespace) -> int:
    path = Path(args.config or os.environ.get("MCP_TOOLS_CONFIG") or default_config_path()).expanduser()
    if path.exists() and not args.force:
        print(f"mcp-tools: {path} exists; use --force to replace it", file=sys.stderr)
        return 1
    try:
        write_atomically(path, CONFIG_TEMPLATE)
    except OSError as exc:
        print(
            f"mcp-tools: cannot write {path}: {exc.strerror or exc}; pass --config with a file you can write",
            file=sys.stderr,
        )
        return 1
    print(f"Wrote {path}")
    return 0


def claude_desktop_config_path() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library/Application Support/Claude/claude_desktop_config.json"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", Path.home())) / "Claude/claude_desktop_config.json"
    return Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config")) / "Claude/claude_desktop_config.json"


def claude_desktop_entry(config_path: Path | None) -> dict[str, Any]:
    """The command Claude Desktop spawns (no shell, its own environment): this Python, and the
    config pinned by absolute path, given before the command as the parser reads it first."""
    config = ["--config", str(config_path.expanduser().resolve())] if config_path else []
    return {"command": sys.executable, "args": ["-m", "mcp_tools", *config, "serve"]}


def cmd_install_claude(args: argparse.Namespace) -> int:
    from mcp_tools.config import locate_config

    # The config in use now (--config, $MCP_TOOLS_CONFIG, or the default file when it exists), pinned
    # by absolute path: Claude Desktop starts the server with another working directory and environment.
    config_path, _ = locate_config(args.config, os.environ)
    entry = claude_desktop_entry(config_path)
    path = Path(args.claude_config).expanduser() if args.claude_config else claude_desktop_config_path()
    used = f"config {config_path}" if config_path else "the embedded defaults (no config file found)"
    if not args.write:
        print(json.dumps({"mcpServers": {args.name: entry}}, indent=2))
        print(f"mcp-tools: this entry serves {used}; `--write` merges it into {path}", file=sys.stderr)
        return 0
    current: Any = {}
    if path.exists():
        try:
            current = json.loads(path.read_text(encoding="utf-8-sig") or "{}")  # a BOM, as Windows editors write
        except json.JSONDecodeError as exc:
            print(f"mcp-tools: {path} is not valid JSON ({exc}); not touching it", file=sys.stderr)
            return 1
        except (OSError, UnicodeDecodeError) as exc:
            print(f"mcp-tools: cannot read {path} ({exc}); not touching it", file=sys.stderr)
            return 1
    if not isinstance(current, dict) or not isinstance(current.setdefault("mcpServers", {}), dict):
        print(
            f"mcp-tools: {path} is not a Claude Desktop config (an object with mcpServers); not touching it",
            file=sys.stderr,
        )
        return 1
    current["mcpServers"][args.name] = entry
    try:
        write_atomically(path, json.dumps(current, indent=2) + "\n")
    except OSError as exc:
        print(f"mcp-tools: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"Added {args.name!r} to {path}, serving {used}. Restart Claude Desktop to load it.")
    return 0


def cmd_namespace(args: argparse.Namespace) -> int:
    import anyio

    from mcp_tools.app import build_app

    app = build_app(_config(args), [args.namespace])
    command = next(c for c in app.namespaces[args.namespace].commands if c.name == args.command)
    try:
        return int(anyio.run(command.run, app.services[args.namespace], args) or 0)
    finally:
        app.store.close()


def write_atomically(path: Path, text: str) -> None:
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
