"""The `mcp-tools` command. Heavy modules are imported inside the commands that need them."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp_tools import __version__
from mcp_tools.config import Config, ConfigError, default_config_path, load_config

CONFIG_TEMPLATE = """\
# mcp-tools configuration. Every setting is optional; what is shown is the default.
# Secrets may also come from the environment (see the README), which keeps them out of this file.

[server]
# Namespaces to serve. Unset: every namespace that is configured (files and inbox need nothing).
# servers = ["files", "notes", "calendar", "web", "inbox"]
# Wire names are namespace_method; "." gives namespace.method (some clients reject dots).
wire_separator = "_"
# state_dir = "..."   # approvals, audit log, indexes (default: the platform's state dir)
# data_dir = "..."    # the file store and the inbox's blobs (default: the platform's data dir)
log_level = "warning"

[policy]
# Ask before nothing? Ask before everything? Rules are globs over canonical names, checked in
# order, before the shipped defaults. Risks: low | medium | high | deny.
# [[policy.rules]]
# match = "files.write"
# risk = "high"
disabled = []              # globs of tools to hide, e.g. ["files.delete"]
read_only = false          # true hides and refuses every tool that changes anything
on_no_elicitation = "approve_out_of_band"   # or "deny"
approval_ttl_seconds = 600
elicitation_timeout_seconds = 300

[http]
host = "127.0.0.1"
port = 8765
# Named bearer tokens; the name is recorded in the audit log. Or MCP_TOOLS_HTTP_TOKEN(_NAME).
# [http.tokens]
# laptop = "a-long-random-string"
allowed_hosts = []         # extra Host values allowed besides loopback
allowed_origins = []       # extra browser Origins allowed

[files]
# root = "~/mcp-files"     # default: <data_dir>/files

# [notes]
# vault = "~/Obsidian/Research"

# [calendar]
# url = "https://caldav.icloud.com/"
# username = "you@icloud.com"
# calendar = "AI Assistant Shared"
# timezone = "Europe/Berlin"
# password: set MCP_TOOLS_CALDAV_PASSWORD

# [web]
# api key: set TAVILY_API_KEY

# [inbox]
# addresses = ["assistant@example.com"]
"""


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(namespaces_wanted(argv))
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    logging.basicConfig(
        stream=sys.stderr,
        level=os.environ.get("MCP_TOOLS_LOG_LEVEL", "WARNING").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.handler(args) or 0)
    except ConfigError as exc:
        print(f"mcp-tools: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


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
    serve.add_argument("--port", type=int, help="HTTP port (default from [http] port: 8765)")
    serve.add_argument("--servers", help="comma-separated namespaces to serve, e.g. files,notes")
    serve.set_defaults(handler=cmd_serve)

    tools = commands.add_parser("tools", help="list the tools with their wire names, risks and annotations")
    tools.add_argument("--json", action="store_true")
    tools.add_argument("--servers")
    tools.set_defaults(handler=cmd_tools)

    call = commands.add_parser("call", help="call one tool through the same policy as a client")
    call.add_argument("name", help="canonical (files.read) or wire (files_read) name")
    call.add_argument("--args", default="{}", help="arguments as a JSON object")
    call.add_argument("--json", action="store_true", help="print the structured result")
    call.set_defaults(handler=cmd_call)

    call_text = commands.add_parser(
        "call-text", help="run the tool calls a model wrote as text (JSON blocks) through the same policy"
    )
    call_text.add_argument("file", nargs="?", default="-", help="the model's reply; - (default) reads stdin")
    call_text.add_argument("--json", action="store_true", help="print a JSON list of the results")
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
    approvals.set_defaults(handler=cmd_approvals_list, all=False, json=False)

    audit = commands.add_parser("audit", help="the audit log of every call")
    audit.add_argument("--tail", type=int, default=20, help="how many of the latest rows (default 20)")
    audit.add_argument("--json", action="store_true", help="one JSON object per line")
    audit.set_defaults(handler=cmd_audit)

    doctor = commands.add_parser("doctor", help="check the config, the state dir and each namespace")
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

    add_namespace_commands(commands, namespaces)
    return parser


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
    return [part.strip() for part in value.split(",") if part.strip()] if value else None


def cmd_serve(args: argparse.Namespace) -> int:
    import anyio

    from mcp_tools.app import build_app

    config = _config(args)
    logging.getLogger().setLevel(os.environ.get("MCP_TOOLS_LOG_LEVEL", config.server.log_level).upper())
    app = build_app(config, _servers(args.servers))
    if not args.http:
        anyio.run(_serve_stdio, app)
        return 0
    import uvicorn

    from mcp_tools.http import build_http_app

    host = args.host or config.http.host
    port = args.port if args.port is not None else config.http.port
    starlette = build_http_app(app, host)
    print(f"mcp-tools: serving streamable HTTP on http://{host}:{port}/mcp", file=sys.stderr)
    uvicorn.run(starlette, host=host, port=port, log_level="warning", lifespan="on")
    return 0


async def _serve_stdio(app: Any) -> None:
    from mcp.server.stdio import stdio_server

    from mcp_tools.mcp_server import build_server

    server = build_server(app, transport="stdio")
    async with app.running(), stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def cmd_tools(args: argparse.Namespace) -> int:
    from mcp_tools.app import build_app
    from mcp_tools.mcp_server import tool_definition

    app = build_app(_config(args), _servers(args.servers))
    rows = []
    for tool in app.visible_tools():
        definition = tool_definition(tool)
        annotations = definition.annotations.model_dump(by_alias=True, exclude_none=True)
        rows.append(
            {
                "name": tool.spec.name,
                "wire_name": tool.wire_name,
                "risk": tool.configured_risk.label,
                "escalates": tool.spec.dynamic_risk is not None,
                "annotations": annotations,
                "description": tool.spec.description,
            }
        )
    app.store.close()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        hints = ",".join(key.removesuffix("Hint") for key, value in row["annotations"].items() if value)
        risk = row["risk"] + ("+" if row["escalates"] else "")
        print(f"{row['name']:<28} {row['wire_name']:<28} {risk:<8} {hints}")
    return 0


class TerminalConfirmation:
    """`mcp-tools call` on a terminal asks the person right there."""

    async def ask(self, request: Any) -> Any:
        import anyio

        from mcp_tools.policy.gate import Answer

        def prompt() -> str:
            print(request.message(), file=sys.stderr)
            print("Run it? [y/N] ", end="", file=sys.stderr, flush=True)
            return sys.stdin.readline()

        reply = await anyio.to_thread.run_sync(prompt)
        return Answer.ACCEPT if reply.strip().lower() in ("y", "yes") else Answer.DECLINE


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
            return await app.gate.call(app.find_tool(args.name), args.name, arguments, caller)

    outcome = anyio.run(run)
    if outcome.notice:
        print(outcome.notice, file=sys.stderr)
    if args.json:
        print(json.dumps(outcome.structured, indent=2, ensure_ascii=False))
    else:
        print(outcome.text)
    return 1 if outcome.is_error else 0


def cmd_call_text(args: argparse.Namespace) -> int:
    import anyio

    from mcp_tools.app import build_app
    from mcp_tools.textcalls import ALIASES, MAX_TEXT_CHARS, ParsedCall, run_text_calls

    limit = 4 * MAX_TEXT_CHARS + 4  # bytes enough for the characters the parser reads; it reports the cut
    try:
        if args.file == "-":
            data = sys.stdin.buffer.read(limit)
        else:
            with open(args.file, "rb") as handle:
                data = handle.read(limit)
    except OSError as exc:
        print(f"mcp-tools: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    text = data.decode("utf-8", errors="replace")
    app = build_app(_config(args))
    caller = local_caller("text")

    async def run() -> Any:
        async with app.running():
            return await run_text_calls(app, text, caller)

    results = anyio.run(run)
    failed = any(result.is_error for result in results)
    if args.json:
        for result in results:
            if result.outcome.notice:
                print(result.outcome.notice, file=sys.stderr)
        print(json.dumps([result.as_dict() for result in results], indent=2, ensure_ascii=False))
        return 1 if failed else 0
    if not results:
        print("No tool calls found.", file=sys.stderr)
    for index, result in enumerate(results):
        shown = result.name or "?"
        if isinstance(result.call, ParsedCall) and result.call.name in ALIASES:
            shown += f" (as {result.call.name})"
        print(("\n" if index else "") + f"[{result.call.label}] {shown}: {'error' if result.is_error else 'ok'}")
        if result.outcome.notice:  # in the output, not on stderr: the model must read it to report the action
            print(result.outcome.notice)
        print(result.outcome.text)
    return 1 if failed else 0


def _store(args: argparse.Namespace) -> Any:
    from mcp_tools.policy.store import PolicyStore

    config = _config(args)
    return PolicyStore(config.state_dir() / "policy.sqlite3"), config


def cmd_approvals_list(args: argparse.Namespace) -> int:
    store, _ = _store(args)
    now = time.time()
    approvals = [approval.as_dict(now) for approval in store.list_approvals(include_done=args.all)]
    if args.json:
        print(json.dumps(approvals, indent=2, ensure_ascii=False))
    elif not approvals:
        print("No approvals waiting.")
    for item in [] if args.json else approvals:
        print(f"{item['id']}  {item['status']:<9} {item['tool']:<24} expires {item['expires']}  {item['summary']}")
    return 0


def cmd_approvals_item(args: argparse.Namespace) -> int:
    store, config = _store(args)
    now = time.time()
    if args.action == "show":
        approval = store.get_approval(args.id)
        if approval is None:
            print(f"mcp-tools: no approval with id {args.id}", file=sys.stderr)
            return 1
        print(json.dumps(approval.as_dict(now), indent=2, ensure_ascii=False))
        return 0
    try:
        decided = store.decide_approval(args.id, args.action == "approve", config.policy.approval_ttl_seconds)
    except (LookupError, ValueError) as exc:
        print(f"mcp-tools: {exc}", file=sys.stderr)
        return 1
    verb = "Approved" if decided.status == "approved" else "Denied"
    print(f"{verb} {decided.id}: {decided.summary}")
    if decided.status == "approved":
        print(f"The same call with the same arguments may now run once, until {decided.as_dict(now)['expires']}.")
    return 0


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
        print(
            f"{item['time']} {item['transport']:<5} {item['principal']:<8} {item['tool']:<22} "
            f"{item['risk'] or '-':<6} {item['decision']}{approval} -> {item['outcome']} "
            f"({item['duration_ms']} ms) {arguments}"
        )
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from mcp_tools.app import build_app

    config = _config(args)
    print(f"config:    {config.source or 'none found; using embedded defaults'}")
    if config.source is None:
        print(f"           (looked for {default_config_path()}; `mcp-tools config init` writes one)")
    app = build_app(config)
    print(f"state dir: {app.environment.state_dir}")
    print(f"data dir:  {app.environment.data_dir}")
    tokens = sorted(config.http_tokens())
    print(f"http:      {config.http.host}:{config.http.port}, tokens: {', '.join(tokens) or 'none configured'}")
    policy = config.policy
    print(
        f"policy:    {len(policy.rules)} own rules, read_only={str(policy.read_only).lower()}, "
        f"on_no_elicitation={policy.on_no_elicitation}, disabled={policy.disabled}"
    )
    print("namespaces:")
    for status in app.statuses:
        count = sum(1 for tool in app.visible_tools(status.name)) if status.enabled else 0
        state = f"on  ({count} tools)" if status.enabled else f"off: {status.reason}"
        print(f"  {status.name:<9} {state}")
        namespace = app.namespaces.get(status.name)
        if status.enabled and namespace is not None and namespace.doctor is not None:
            try:
                details = list(namespace.doctor(app.services[status.name]))
            except Exception as exc:  # a check that fails must not hide the rest of the report
                details = [f"(could not check: {type(exc).__name__})"]
            for line in details:
                print(f"            {line}")
    app.store.close()
    return 0


def cmd_config_init(args: argparse.Namespace) -> int:
    path = Path(args.config or os.environ.get("MCP_TOOLS_CONFIG") or default_config_path()).expanduser()
    if path.exists() and not args.force:
        print(f"mcp-tools: {path} exists; use --force to replace it", file=sys.stderr)
        return 1
    write_atomically(path, CONFIG_TEMPLATE)
    print(f"Wrote {path}")
    return 0


def claude_desktop_config_path() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library/Application Support/Claude/claude_desktop_config.json"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", Path.home())) / "Claude/claude_desktop_config.json"
    return Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config")) / "Claude/claude_desktop_config.json"


def claude_desktop_entry(config_path: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": sys.executable, "args": ["-m", "mcp_tools", "serve"]}
    if config_path:
        entry["args"] += ["--config", str(Path(config_path).expanduser().resolve())]
    return entry


def cmd_install_claude(args: argparse.Namespace) -> int:
    entry = claude_desktop_entry(args.config)
    if not args.write:
        print(json.dumps({"mcpServers": {args.name: entry}}, indent=2))
        return 0
    path = Path(args.claude_config).expanduser() if args.claude_config else claude_desktop_config_path()
    current: dict[str, Any] = {}
    if path.exists():
        try:
            current = json.loads(path.read_text(encoding="utf-8") or "{}")
        except json.JSONDecodeError as exc:
            print(f"mcp-tools: {path} is not valid JSON ({exc}); not touching it", file=sys.stderr)
            return 1
    current.setdefault("mcpServers", {})[args.name] = entry
    write_atomically(path, json.dumps(current, indent=2) + "\n")
    print(f"Added {args.name!r} to {path}. Restart Claude Desktop to load it.")
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
