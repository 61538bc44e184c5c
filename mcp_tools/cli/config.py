"""`mcp-tools doctor` and `mcp-tools config init`: check a config, write a commented one."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from mcp_tools.cli.common import config_of, tools_of, write_through
from mcp_tools.core.config import default_config_path, folder_given_as_config
from mcp_tools.util.wording import plural


def add_commands(commands: Any) -> None:
    doctor = commands.add_parser("doctor", help="check the config, the state dir and each namespace")
    doctor.add_argument("--tools", help="a selection to check instead of [server] tools")
    doctor.set_defaults(handler=cmd_doctor)

    config = commands.add_parser("config", help="config helpers")
    config_sub = config.add_subparsers(metavar="ACTION")
    init = config_sub.add_parser("init", help="write a commented config file")
    init.add_argument("--force", action="store_true", help="replace an existing file")
    init.set_defaults(handler=cmd_config_init)


def cmd_doctor(args: argparse.Namespace) -> int:
    from mcp_tools.composition.app import build_app
    from mcp_tools.util.secrets import scrub_text

    config = config_of(args)
    print(f"config:    {config.source or 'none found; using embedded defaults'}")
    if config.source is None:
        from mcp_tools.util.commands import mcp_tools

        print(f"           (looked for {default_config_path()}; `{mcp_tools('config', 'init')}` writes one)")
    app = build_app(config, tools=tools_of(args), diagnose=True)
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
    from mcp_tools.util.net import wildcard_without_names

    unnamed = wildcard_without_names(config.http.host, config.http.allowed_hosts)
    if unnamed is not None:
        print(f"           warning: {unnamed}")
    from mcp_tools.transports.http_limits import exposure_warnings

    for warning in exposure_warnings(config.http):
        print(f"           warning: {warning}")
    weak = config.weak_http_tokens()
    if weak:
        from mcp_tools.core.config import MAKE_TOKEN, describe_weak_tokens
        from mcp_tools.util.net import is_loopback

        what = describe_weak_tokens(weak, verb=False)
        if is_loopback(config.http.host):
            print(f"           warning: {what}; `serve --http` beyond loopback refuses them. Make one: {MAKE_TOKEN}")
        else:
            problems["http"] = f"{what}: `serve --http` refuses them on {config.http.host}; make one with: {MAKE_TOKEN}"
            print(f"           problem: {problems['http']}")
    policy = config.policy
    rules = plural(len(policy.rules), "rule")
    print(
        f"policy:    {len(policy.rules)} own {rules}, read_only={str(policy.read_only).lower()}, "
        f"on_no_elicitation={policy.on_no_elicitation}, disabled={policy.disabled}"
    )
    selection = app.selection.describe() if app.selection else "everything"
    served = app.visible_tools()
    print(f"tools:     {len(served)} served, selection {selection}, discovery={config.server.discovery}")
    if not served and "tools" not in problems:  # a server a client connects to and finds empty
        problems["tools"] = "no tool is served: check [server] namespaces, tools or --tools and the namespaces below"
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
                "            problem: it is asked for by name ([server] namespaces, tools or --tools), so `serve` "
                "stops until the above is fixed"
            )
        elif status.name in problems:
            print(f"            problem: {problems[status.name]}")
        for line in app.status_lines(status.name):
            if line.startswith("missing:"):
                problems.setdefault(status.name, line)
            print(f"            {line}")
    hidden = [tool.spec for tool in app.tools.values() if tool not in served]
    if hidden:  # examples from what is really left out, so none names a namespace that is off
        serving = {tool.spec.namespace for tool in served}
        idle = list(dict.fromkeys(spec.namespace for spec in hidden if spec.namespace not in serving))
        ways = [f"a namespace ({idle[0]!r})"] if idle else []
        ways += [f"a tier ({f'{hidden[0].namespace}.{hidden[0].tier}'!r})", f"a tool ({hidden[0].name!r})"]
        noun = "tool is" if len(hidden) == 1 else "tools are"
        print(f"not served: {len(hidden)} {noun} available but not selected; to serve more, add")
        print(f"            {', '.join(ways[:-1])} or {ways[-1]} to [server] tools; see docs/toolsets.md")
    if "google" in config.sections:
        from mcp_tools.cli.google import doctor_lines

        for line in doctor_lines(config):
            print(line)
    app.store.close()
    if problems:
        print(f"\n{len(problems)} problem(s) to fix: {', '.join(problems)}", file=sys.stderr)
        return 1
    return 0


def cmd_config_init(args: argparse.Namespace) -> int:
    from mcp_tools.composition.config_template import config_template

    path = Path(args.config or os.environ.get("MCP_TOOLS_CONFIG") or default_config_path()).expanduser()
    if path.is_dir():
        print(f"mcp-tools: {folder_given_as_config(path)}", file=sys.stderr)
        return 1
    if path.exists() and not args.force:
        print(f"mcp-tools: {path} exists; use --force to replace it", file=sys.stderr)
        return 1
    try:
        saved = write_through(path, config_template(), backup=True)
    except OSError as exc:
        print(
            f"mcp-tools: cannot write {path}: {exc.strerror or exc}; pass --config with a file you can write",
            file=sys.stderr,
        )
        return 1
    print(f"Wrote {path}" + (f" (the previous file is kept as {saved})" if saved else ""))
    return 0
