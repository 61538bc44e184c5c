"""`mcp-tools serve`: MCP over stdio (a client spawned us) or streamable HTTP."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

from mcp_tools.cli.common import (
    add_namespaces_option,
    config_of,
    forget_listening,
    namespaces_of,
    quiet_broken_pipe,
    record_listening,
    tcp_port,
    tools_of,
)
from mcp_tools.config import ConfigError


def add_commands(commands: Any) -> None:
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
    add_namespaces_option(serve, "comma-separated namespaces to run, e.g. files,notes")
    serve.add_argument("--tools", help="what to serve this run, e.g. files,notes.core; --tools=-files.move excludes")
    serve.set_defaults(handler=cmd_serve)


def serving() -> None:
    """Start-up is over: what it built lives as long as the server, so the collector leaves it be.

    Collection is off while the SDK, pydantic and the namespaces are imported (about a tenth
    of start-up), and frozen objects are not traversed by later full collections.
    """
    gc.freeze()
    gc.enable()


def cmd_serve(args: argparse.Namespace) -> int:
    import anyio

    from mcp_tools.app import build_app

    config = config_of(args)
    from mcp_tools.logs import configure_logging

    configure_logging(config.server.log_level)
    app = build_app(config, namespaces_of(args), tools_of(args))
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
