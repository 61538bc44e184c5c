"""The parser and `main`: each command group adds its own commands (`add_commands`)."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence

from mcp_tools import __version__
from mcp_tools.cli import approvals, bundle, call, call_text, claude_desktop, config, serve, tools
from mcp_tools.cli import namespaces as namespaces_group
from mcp_tools.cli.common import quiet_broken_pipe
from mcp_tools.core.config import Config, ConfigError


def main(argv: Sequence[str] | None = None, config: Config | None = None) -> int:
    """The command line; `config`, when given, is used instead of reading one (a bundle's settings)."""
    gc.disable()  # start-up imports allocate much and free little; `serve.serving()` or the end turns it back on
    try:
        return _main(argv, config)
    finally:
        gc.enable()


def _main(argv: Sequence[str] | None, config: Config | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(namespaces_wanted(argv))
    args = parser.parse_args(argv)
    args.given_config = config
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    from mcp_tools.util.logs import configure_logging
    from mcp_tools.util.private import keep_private
    from mcp_tools.util.secrets import known_secrets, scrub_text

    keep_private()  # the state, the config `config init` writes, and what libraries create beside them

    known_secrets.add_from_environ(os.environ)
    configure_logging()
    from mcp_tools.util.commands import use_config

    use_config(args.config)  # commands printed from here on reach the same config and state
    try:
        return int(args.handler(args) or 0)
    except ConfigError as exc:
        print(f"mcp-tools: {scrub_text(str(exc))}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        from mcp_tools.state.store import StateStoreError

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
    for group in (serve, tools, call, call_text, approvals, config, claude_desktop, bundle, namespaces_group):
        group.add_commands(commands)
    namespaces_group.add_namespace_commands(commands, namespaces)
    accept_config_anywhere(parser)
    return parser


def accept_config_anywhere(parser: argparse.ArgumentParser) -> None:
    """`--config PATH` after the command too (`mcp-tools serve --config x.toml`), as people and
    client configs write it; given before the command, it is not overridden."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in {id(sub): sub for sub in action.choices.values()}.values():
                if "--config" not in sub._option_string_actions:
                    sub.add_argument("--config", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
                accept_config_anywhere(sub)
