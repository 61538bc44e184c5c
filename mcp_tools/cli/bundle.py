"""`mcp-tools bundle`: an MCP Bundle (`.mcpb`) that Claude Desktop installs in one click.

The bundle is a zip: `manifest.json` (MCPB manifest 0.3, a `python` server), `server/main.py`,
and `server/lib/` holding this package and every library it needs, copied from the environment
the command runs in. A python bundle runs on the host's Python with the libraries it ships
(MANIFEST.md, "Python": everything bundled under `server/lib`). Some of those libraries have
compiled parts (pydantic-core, watchfiles), built for one Python version and platform: the
bundle therefore says which in `compatibility`, and its entry refuses another Python with the
reason (`mcp_tools.cli.bundled.check_python`). Build it with the Python the host will run.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from mcp_tools import __version__

# Where the host puts each setting (mcp_tools.cli.bundled reads them).
FILES_ENV = "MCP_TOOLS_BUNDLE_FILES"
VAULT_ENV = "MCP_TOOLS_BUNDLE_VAULT"
TOOLS_ENV = "MCP_TOOLS_BUNDLE_TOOLS"
CHAT_ENV = "MCP_TOOLS_BUNDLE_TELEGRAM_CHAT_ID"
API_ENV = "MCP_TOOLS_BUNDLE_TELEGRAM_API"  # another Bot API root (a proxy); not in the dialog
BUILT_FOR_ENV = "MCP_TOOLS_BUNDLE_PYTHON"  # "3.11 linux": the Python the bundled libraries were built for
DEFAULT_EXTRAS = ("notes",)  # what the dialog offers beyond the files: a notes vault
ENTRY = '''"""mcp-tools, started by the host from this bundle (see manifest.json)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))

from mcp_tools.cli.bundled import main  # noqa: E402

sys.exit(main())
'''
SKIPPED = ("__pycache__", ".pyc")


def add_commands(commands: Any) -> None:
    bundle = commands.add_parser("bundle", help="build an MCP Bundle (.mcpb) for Claude Desktop from this environment")
    bundle.add_argument("--out", default="dist", help="folder to write mcp-tools-<version>.mcpb into (default: dist)")
    bundle.add_argument(
        "--extras",
        default=",".join(DEFAULT_EXTRAS),
        help=f"extras whose libraries to bundle, comma-separated (default: {','.join(DEFAULT_EXTRAS)}; '' for none)",
    )
    bundle.set_defaults(handler=cmd_bundle)


def cmd_bundle(args: argparse.Namespace) -> int:
    from mcp_tools.core.config import ConfigError
    from mcp_tools.util.commands import DISTRIBUTION

    extras = [extra.strip() for extra in args.extras.split(",") if extra.strip()]
    try:
        libraries = sorted(requirement_closure(DISTRIBUTION, extras), key=str.lower)
    except LookupError as exc:
        raise ConfigError(str(exc)) from None
    out = Path(args.out).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"mcp-tools-{__version__}.mcpb"
    files = write_bundle(target, libraries)
    size = target.stat().st_size
    running = f"Python {sys.version_info.major}.{sys.version_info.minor} on {sys.platform}"
    print(f"Wrote {target} ({size / 1e6:.1f} MB, {files} files; {len(libraries)} libraries for {running}).")
    print("Open it with Claude Desktop (double-click, or Settings > Extensions > Install Extension).")
    return 0


def manifest(python: tuple[int, int] | None = None, platform: str | None = None) -> dict[str, Any]:
    """The bundle's manifest.json: how a host starts the server, and the settings it asks for."""
    from mcp_tools.core.config import TELEGRAM_TOKEN_ENV

    major, minor = python or sys.version_info[:2]
    platform = platform or sys.platform
    env = {
        FILES_ENV: "${user_config.files_folder}",
        VAULT_ENV: "${user_config.notes_vault}",
        TOOLS_ENV: "${user_config.tools}",
        TELEGRAM_TOKEN_ENV: "${user_config.telegram_bot_token}",
        CHAT_ENV: "${user_config.telegram_chat_id}",
        BUILT_FOR_ENV: f"{major}.{minor} {platform}",
        "PYTHONIOENCODING": "utf-8",
    }
    return {
        "manifest_version": "0.3",
        "name": "mcp-tools",
        "display_name": "mcp-tools",
        "version": __version__,
        "description": "Your files, notes and inbox as MCP tools, behind one policy layer that asks you first.",
        "long_description": (
            "One set of MCP tools over a files folder, an Obsidian-style notes vault and a local inbox, with "
            "web search. Every call passes a policy layer: low-risk tools run, medium-risk ones say what they "
            "did, and high-risk ones (deleting, sending) wait for your approval, in Telegram when you set a bot."
        ),
        "author": {"name": "mcp-tools contributors"},
        "license": "MIT",
        "keywords": ["files", "notes", "obsidian", "inbox", "policy", "approvals"],
        "server": {
            "type": "python",
            "entry_point": "server/main.py",
            "mcp_config": {
                "command": "python3",
                "args": ["${__dirname}/server/main.py"],
                "env": env,
                "platform_overrides": {"win32": {"command": "python"}},
            },
        },
        "tools_generated": True,  # which tools depends on the settings
        "compatibility": {
            "platforms": [platform],
            "runtimes": {"python": f">={major}.{minor}.0 <{major}.{minor + 1}.0"},
        },
        "user_config": {
            "files_folder": {
                "type": "directory",
                "title": "Files folder",
                "description": "The folder the files tools read and write; nothing outside it is reachable.",
                "required": True,
            },
            "notes_vault": {
                "type": "directory",
                "title": "Notes vault",
                "description": "A folder of Markdown notes (an Obsidian vault). Leave empty to serve no notes tools.",
            },
            "tools": {
                "type": "string",
                "title": "Tools to serve",
                "description": "Comma-separated: namespace, namespace.tier (core | extended) or a tool, "
                "e.g. files,notes.core; a leading - excludes. Empty: the core tier of each.",
                "default": "*.core",
            },
            "telegram_bot_token": {
                "type": "string",
                "title": "Telegram bot token",
                "description": "Approvals of high-risk calls as Telegram messages (from @BotFather). Optional.",
                "sensitive": True,
            },
            "telegram_chat_id": {
                "type": "number",
                "title": "Telegram chat id",
                "description": "The chat the bot writes approvals to (with the token above).",
            },
        },
    }


def requirement_closure(distribution: str, extras: Iterable[str]) -> set[str]:
    """The installed distributions `distribution[extras]` needs, itself included (names as installed).

    Raises LookupError naming a requirement that is not installed here.
    """
    from importlib import metadata

    try:
        from packaging.requirements import Requirement
    except ImportError:
        from mcp_tools.util.commands import pip_install

        raise LookupError(f"building a bundle reads requirements with packaging: {pip_install('bundle')}") from None
    seen: dict[str, str] = {}
    pending: list[tuple[str, frozenset[str]]] = [(distribution, frozenset(extras))]
    while pending:
        name, wanted = pending.pop()
        key = _normal(name)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise LookupError(f"{name} is not installed here; install it, then build the bundle again") from None
        if key in seen and not wanted:
            continue
        seen[key] = dist.metadata["Name"]
        for line in dist.requires or ():
            requirement = Requirement(line)
            for extra in wanted or {""}:
                if requirement.marker is None or requirement.marker.evaluate({"extra": extra}):
                    pending.append((requirement.name, frozenset(requirement.extras)))
                    break
    return set(seen.values())


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def bundle_files(libraries: Iterable[str]) -> Iterator[tuple[str, Path]]:
    """(name in the zip, file here) of everything the bundle holds besides manifest and entry."""
    from importlib import metadata

    from mcp_tools.util.commands import DISTRIBUTION

    for name in libraries:
        if _normal(name) == _normal(DISTRIBUTION):
            yield from _this_package()
            continue
        dist = metadata.distribution(name)
        for file in dist.files or ():
            if file.parts[0] == ".." or any(part.endswith(SKIPPED) for part in file.parts):
                continue  # scripts in bin/, byte code: the host's Python compiles its own
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                yield f"server/lib/{file.as_posix()}", path


def _this_package() -> Iterator[tuple[str, Path]]:
    """mcp_tools from wherever it runs (a wheel or a checkout), with the policy defaults it ships."""
    import mcp_tools

    package = Path(mcp_tools.__file__).resolve().parent
    for path in sorted(package.rglob("*")):
        if path.is_file() and not any(part.endswith(SKIPPED) for part in path.relative_to(package).parts):
            yield f"server/lib/mcp_tools/{path.relative_to(package).as_posix()}", path
    configs = package.parent / "configs"
    if not (package / "_configs").is_dir() and configs.is_dir():  # a checkout: the wheel puts them here
        for path in sorted(configs.glob("*.toml")):
            yield f"server/lib/mcp_tools/_configs/{path.name}", path


def write_bundle(target: Path, libraries: Iterable[str]) -> int:
    """Write the .mcpb at `target`; returns how many files it holds."""
    import json
    import zipfile

    partial = target.with_name(target.name + ".partial")
    count = 0
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        archive.writestr("manifest.json", json.dumps(manifest(), indent=2) + "\n")
        archive.writestr("server/main.py", ENTRY)
        count = 2
        written: set[str] = set()
        for name, path in bundle_files(libraries):
            if name not in written:
                written.add(name)
                archive.write(path, name)
                count += 1
    partial.replace(target)
    return count
