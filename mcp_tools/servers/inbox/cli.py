"""`mcp-tools inbox smtp` and `mcp-tools inbox ingest`: the other two ways mail gets in."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import TYPE_CHECKING, BinaryIO

from mcp_tools.core.tooling import CliCommand, install_hint, missing_modules
from mcp_tools.util.net import is_loopback

if TYPE_CHECKING:
    from mcp_tools.servers.inbox.service import InboxService

# sysexits.h codes, which mail delivery agents understand
EX_DATAERR = 65
EX_NOINPUT = 66
EX_TEMPFAIL = 75
EX_CONFIG = 78


def _smtp_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--listen", metavar="HOST:PORT", help="address to serve on (default: [inbox] listen)")


async def run_smtp(service: InboxService, args: argparse.Namespace) -> int:
    from mcp_tools.servers.inbox.config import parse_listen
    from mcp_tools.servers.inbox.smtp import start_smtp_server

    if not service.config.addresses:
        print('inbox: set [inbox] addresses = ["you@example.org"] before receiving mail', file=sys.stderr)
        return EX_CONFIG
    if missing_modules(("aiosmtpd",)):
        print(f"inbox: the SMTP receiver cannot start: {install_hint('inbox', 'aiosmtpd')}", file=sys.stderr)
        return EX_CONFIG
    try:
        host, port = parse_listen(args.listen or service.config.listen)
    except ValueError as error:
        print(f"inbox: {error}", file=sys.stderr)
        return EX_CONFIG
    try:
        server = await start_smtp_server(service, host, port)
    except OSError as error:
        print(f"inbox: cannot listen on {host}:{port}: {error.strerror or error}", file=sys.stderr)
        return EX_CONFIG
    if service.config.notify == "log":
        _log_to_stderr()
    if not is_loopback(host):
        print(
            f"inbox: warning: {host} is reachable from other machines; this receiver has no TLS and no "
            "authentication, so anyone who can connect can add mail to the inbox",
            file=sys.stderr,
        )
    bound = server.sockets[0].getsockname() if server.sockets else (host, port)
    print(
        f"inbox: receiving SMTP on {bound[0]}:{bound[1]} for {', '.join(service.config.addresses)}",
        file=sys.stderr,
        flush=True,
    )
    async with server:
        await server.serve_forever()
    return 0


def _log_to_stderr() -> None:
    """A long-running receiver reports each stored message unless logging is already set up."""
    logger = logging.getLogger("mcp_tools.inbox")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)
    if not logger.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        logger.addHandler(handler)


def _ingest_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE.eml", help="raw MIME message to store, or - for standard input")


def _read_limited(stream: BinaryIO, limit: int) -> bytes:
    return stream.read(limit + 1)


async def run_ingest(service: InboxService, args: argparse.Namespace) -> int:
    import anyio

    from mcp_tools.servers.inbox.service import EmptyMessage, MessageTooLarge

    limit = service.config.max_message_bytes
    try:
        if args.file == "-":
            raw = await anyio.to_thread.run_sync(_read_limited, sys.stdin.buffer, limit)
        else:
            with open(args.file, "rb") as handle:
                raw = await anyio.to_thread.run_sync(_read_limited, handle, limit)
    except OSError as error:
        print(f"inbox: cannot read {args.file}: {error.strerror or error}", file=sys.stderr)
        return EX_NOINPUT
    try:
        result = await service.ingest(raw, via="cli")
    except (EmptyMessage, MessageTooLarge) as error:
        print(f"inbox: {error}", file=sys.stderr)
        return EX_DATAERR
    except Exception as error:
        print(f"inbox: could not store the message ({type(error).__name__})", file=sys.stderr)
        return EX_TEMPFAIL
    print(json.dumps({"id": result.id, "duplicate": result.duplicate, "warnings": result.warnings}))
    return 0


COMMANDS: list[CliCommand[InboxService]] = [
    CliCommand(
        name="smtp",
        help="receive forwarded mail over SMTP for the configured addresses",
        add_arguments=_smtp_arguments,
        run=run_smtp,
    ),
    CliCommand(
        name="ingest",
        help="store one raw email from a file or standard input (for mail rules and fetchmail)",
        add_arguments=_ingest_arguments,
        run=run_ingest,
    ),
]
