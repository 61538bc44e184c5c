"""`mcp-tools install claude-desktop`: the entry Claude Desktop spawns, printed or merged into its config."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp_tools.cli.common import write_through


def add_commands(commands: Any) -> None:
    install = commands.add_parser("install", help="register mcp-tools with a client")
    install_sub = install.add_subparsers(metavar="CLIENT")
    claude = install_sub.add_parser("claude-desktop", help="print (or --write) the Claude Desktop entry")
    claude.add_argument("--write", action="store_true", help="merge the entry into Claude Desktop's config")
    claude.add_argument("--claude-config", help="path of claude_desktop_config.json (default: the platform's)")
    claude.add_argument("--name", default="mcp-tools", help="server name in Claude Desktop")
    claude.set_defaults(handler=cmd_install_claude)


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
    from mcp_tools.core.config import locate_config

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
    if path.exists() and path.is_file():  # anything else is refused by the write, with the reason
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
    servers = current["mcpServers"]
    before = servers.get(args.name)
    if isinstance(before, dict):
        # Only command and args are ours: the env (a Telegram token, say) and any other key stay.
        servers[args.name] = {**before, **entry}
        kept = sorted(set(before) - set(entry))
        verb = "Updated" if servers[args.name] != before else "Rewrote the unchanged"
        done = f"{verb} {args.name!r} in {path}" + (f" (kept its {', '.join(kept)})" if kept else "")
    elif before is not None:
        servers[args.name] = entry
        done = f"Replaced {args.name!r} in {path} (it was not an object)"
    else:
        servers[args.name] = entry
        done = f"Added {args.name!r} to {path}"
    try:
        saved = write_through(path, json.dumps(current, indent=2) + "\n", backup=True)
    except OSError as exc:
        print(f"mcp-tools: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"{done}, serving {used}. Restart Claude Desktop to load it.")
    if saved is not None:
        print(f"The previous file is kept as {saved}.")
    return 0
