"""Commands that belong to namespaces: `mcp-tools auth google`, and `mcp-tools NAMESPACE COMMAND`
for the commands a namespace declares (`inbox ingest`, ...)."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp_tools.cli.common import config_of


def add_commands(commands: Any) -> None:
    auth = commands.add_parser("auth", help="sign in to an account that namespaces use")
    auth_sub = auth.add_subparsers(metavar="ACCOUNT")
    google = auth_sub.add_parser("google", help="sign in to Google (gmail and the other Google namespaces)")
    google.add_argument("--no-browser", action="store_true", help="print the address; paste back where it ends")
    google.add_argument(
        "--account", metavar="LABEL", help="sign in (or import) the account under this label (default: default)"
    )
    google.add_argument(
        "--import",
        dest="import_file",
        metavar="FILE",
        type=Path,
        help="store an authorized-user JSON file made elsewhere (a headless server)",
    )
    google.add_argument("--list", action="store_true", help="each account: address, scopes, refresh token working")
    google.add_argument("--remove", metavar="LABEL", help="revoke an account's access and forget it")
    google.set_defaults(handler=cmd_auth_google)


def cmd_auth_google(args: argparse.Namespace) -> int:
    from mcp_tools.cli.google import auth_google

    return auth_google(config_of(args), args)


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


def cmd_namespace(args: argparse.Namespace) -> int:
    import anyio

    from mcp_tools.composition.app import build_app

    app = build_app(config_of(args), [args.namespace])
    command = next(c for c in app.namespaces[args.namespace].commands if c.name == args.command)
    try:
        return int(anyio.run(command.run, app.services[args.namespace], args) or 0)
    finally:
        app.store.close()
