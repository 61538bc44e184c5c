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
from mcp_tools.core.config import ConfigError


def add_commands(commands: Any) -> None:
    serve = commands.add_parser("serve", help="serve MCP over stdio (default) or streamable HTTP")
    serve.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    serve.add_argument("--host", help="HTTP address (default from [http] host: 127.0.0.1)")
    serve.add_argument("--port", type=tcp_port, help="HTTP port (default from [http] port: 8765)")
    serve.add_argument(
        "--metrics-port",
        type=tcp_port,
        metavar="N",
        help="serve Prometheus metrics on 127.0.0.1:N (needs the [metrics] extra)",
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

    from mcp_tools.composition.app import build_app

    config = config_of(args)
    from mcp_tools.util.logs import configure_logging

    configure_logging(config.server.log_level)
    app = build_app(config, namespaces_of(args), tools_of(args))
    if args.metrics_port is not None:
        from mcp_tools.util.secrets import known_secrets

        known_secrets.add(config.metrics_token())
        _serve_metrics(app, args.metrics_port)
    if not args.http:
        try:
            client_left = anyio.run(_serve_stdio, app)
        except BaseExceptionGroup as group:  # the client closed our stdout: it is gone, end quietly
            if group.split(BrokenPipeError)[1] is not None:
                raise
            return quiet_broken_pipe()
        return quiet_broken_pipe() if client_left else 0
    from mcp_tools.transports.http import build_http_app
    from mcp_tools.transports.http_server import bind, serve

    host = args.host or config.http.host
    port = args.port if args.port is not None else config.http.port
    sock = bind(host, port)  # before anything below names the address
    port = sock.getsockname()[1]
    starlette = build_http_app(app, host, port)
    serving()
    print(f"mcp-tools: serving streamable HTTP on http://{host}:{port}/mcp", file=sys.stderr)
    record = None
    if config.approvals.page.enabled:
        from mcp_tools.util.commands import mcp_tools
        from mcp_tools.util.net import url_host

        shown = url_host(host)
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
        from mcp_tools.util.metrics import serve_metrics

        serve_metrics(port, {tool.spec.name for tool in app.tools.values()}, app.config.metrics_token())
    except ImportError:
        from mcp_tools.util.commands import pip_install

        raise ConfigError(f"--metrics-port needs prometheus-client: {pip_install('metrics')}") from None
    except OSError as exc:
        raise ConfigError(f"--metrics-port {port}: cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    print(f"mcp-tools: Prometheus metrics on http://127.0.0.1:{port}/metrics", file=sys.stderr)


INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"  # the version tests/inspector pins; it needs Node 22.19+


def terminal_notice() -> str:
    from mcp_tools.util.commands import mcp_tools

    return (
        "mcp-tools: waiting for an MCP client on stdio (this is a terminal). Connect one with "
        f"`{mcp_tools('install', 'claude-desktop')}`, or try it in "
        f"`npx {INSPECTOR} {mcp_tools('serve')}`. Ctrl-C quits."
    )


async def _serve_stdio(app: Any) -> bool:
    """Serve until stdin ends; True when the client left instead (nobody reads our stdout)."""
    import anyio
    from mcp.server.stdio import stdio_server

    from mcp_tools.transports.mcp_server import build_server
    from mcp_tools.transports.stdio_wire import answering_every_request

    server = build_server(app, transport="stdio")
    serving()
    stdin: WireLines | None = None
    wire_in = None
    if sys.stdin.isatty():  # a person, not a client: say what this is, and let Ctrl-C end it at once
        print(terminal_notice(), file=sys.stderr, flush=True)
        if os.name == "posix":  # waiting on a console handle is not possible on Windows
            stdin = WireLines(sys.stdin.fileno())
    elif os.name == "posix" and _is_pipe(0):
        wire_in = _take_stdin()
        stdin = WireLines(wire_in)
    reader_of_stdout = _stdout_to_watch()
    client_left = False
    try:
        async with app.running(), anyio.create_task_group() as serving_group:
            if reader_of_stdout is not None:

                async def end_when_the_reader_leaves(fd: int) -> None:
                    nonlocal client_left
                    await anyio.wait_readable(fd)  # the write end of a pipe: only its reader closing wakes it
                    client_left = True
                    serving_group.cancel_scope.cancel()

                serving_group.start_soon(end_when_the_reader_leaves, reader_of_stdout)
            if os.name == "posix":
                serving_group.start_soon(end_on_sigterm, serving_group.cancel_scope)
            async with (
                stdio_server(stdin=stdin) as (wire_stream, wire_out),  # type: ignore[arg-type]
                answering_every_request(wire_stream, wire_out) as (read_stream, write_stream),
            ):
                await server.run(read_stream, write_stream, server.create_initialization_options())
            serving_group.cancel_scope.cancel()
    finally:
        if reader_of_stdout is not None:
            os.close(reader_of_stdout)
        if wire_in is not None:
            os.dup2(wire_in, 0)
            os.close(wire_in)
    return client_left


async def end_on_sigterm(scope: Any) -> None:
    """SIGTERM (a client stopping its server, systemd) ends serving cleanly, with exit 0."""
    import signal

    import anyio

    with anyio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            scope.cancel()
            return


def _is_pipe(fd: int) -> bool:
    import stat

    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _take_stdin() -> int:
    """The client's end of stdin on a private descriptor; fd 0 reads the null device meanwhile,
    so programs the tools start never read the client's messages."""
    import fcntl

    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return wire


def _stdout_to_watch() -> int | None:
    """A descriptor of stdout to learn from when the client stops reading it (Linux: the write
    end of a pipe turns readable, as an error, only once its reader has closed), else None."""
    import stat

    if sys.platform != "linux":
        return None
    try:
        if not stat.S_ISFIFO(os.fstat(1).st_mode):  # not a socket: it turns readable whenever the client writes
            return None
    except OSError:
        return None
    import fcntl

    return fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)


class WireLines:
    """Lines from stdin (a client's pipe, or a person's terminal), read as the event loop sees
    them arrive.

    The SDK reads stdin in a worker thread, which cannot be cancelled: Ctrl-C would wait for the
    next Enter, and a client that stops reading our answers but keeps stdin open would keep the
    server alive. Waiting on the descriptor instead lets cancellation end the server at once.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def __aiter__(self) -> AsyncIterator[str]:
        import anyio

        pieces: list[bytes] = []  # of the line not yet ended; a long line is joined once
        while True:
            await anyio.wait_readable(self.fd)
            chunk = os.read(self.fd, 65536)
            if not chunk:
                if pieces:
                    yield b"".join(pieces).decode("utf-8", errors="replace")
                return
            if b"\n" not in chunk:
                pieces.append(chunk)
                continue
            first, *lines, rest = chunk.split(b"\n")
            yield (b"".join(pieces) + first).decode("utf-8", errors="replace") + "\n"
            for line in lines:
                yield line.decode("utf-8", errors="replace") + "\n"
            pieces = [rest] if rest else []
