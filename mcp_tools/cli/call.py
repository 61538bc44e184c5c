"""`mcp-tools call`: one tool, through the same policy as a client."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from mcp_tools.cli.asking import local_caller
from mcp_tools.cli.common import config_of as _config


def add_commands(commands: Any) -> None:
    call = commands.add_parser("call", help="call one tool through the same policy as a client")
    call.add_argument("name", help="canonical (files.read) or wire (files_read) name")
    call.add_argument("--args", default="{}", help="arguments as a JSON object")
    call.add_argument("--json", action="store_true", help="print the structured result")
    call.set_defaults(handler=cmd_call)


def cmd_call(args: argparse.Namespace) -> int:
    import anyio

    from mcp_tools.composition.app import build_app

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
        from mcp_tools.util.commands import mcp_tools

        approval = str(error.get("approval_id"))
        return (
            f"Not run yet ({kind}): {message}\nApprove it with `{mcp_tools('approvals', 'approve', approval)}` "
            f"(or deny it with `{mcp_tools('approvals', 'deny', approval)}`), then run the same command again."
        )
    return str(outcome.text)
