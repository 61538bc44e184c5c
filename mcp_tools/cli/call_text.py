"""`mcp-tools call-text`: the tool calls a model wrote as text, run through the same policy."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from mcp_tools.cli.asking import local_caller, reads_the_terminal
from mcp_tools.cli.common import config_of


def add_commands(commands: Any) -> None:
    call_text = commands.add_parser(
        "call-text", help="run the tool calls a model wrote as text (any of three formats) through the same policy"
    )
    call_text.add_argument("file", nargs="?", default="-", help="the model's reply; - (default) reads stdin")
    call_text.add_argument("--json", action="store_true", help="print a JSON list of the results (--output json)")
    call_text.add_argument(
        "--format",
        choices=("auto", "scissors", "prose"),
        default="auto",
        help="the reply's shape: scissors (calls, then the delimiter, then markdown), prose (JSON in the text), "
        "or auto (default: decided from the reply's start)",
    )
    call_text.add_argument(
        "--output",
        choices=("text", "json", "results", "markdown", "report"),
        help="text (default): a section per call; json: [{call, name, is_error, structured}]; results: "
        "[{id, name, content | error}]; markdown: calls and results as markdown; report: "
        "{format, calls, results, markdown, parse_errors}",
    )
    call_text.add_argument(
        "--stream",
        action="store_true",
        help="read the reply as it arrives and run each call as soon as it is complete; prints one JSON event a line",
    )
    call_text.set_defaults(handler=cmd_call_text)


def cmd_call_text(args: argparse.Namespace) -> int:
    import anyio

    from mcp_tools.composition.app import build_app
    from mcp_tools.textcalls import MAX_TEXT_CHARS, render_markdown, run_reply

    limit = 4 * MAX_TEXT_CHARS + 4  # bytes enough for the characters the parser reads; it reports the cut
    if args.stream:
        if args.output or args.json:
            print("mcp-tools: --stream prints one JSON event a line; leave out --output and --json", file=sys.stderr)
            return 2
        return _call_text_streamed(args, limit)
    try:
        if args.file == "-":
            data = sys.stdin.buffer.read(limit)
        else:
            with open(args.file, "rb") as handle:
                data = handle.read(limit)
    except OSError as exc:
        print(f"mcp-tools: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    app = build_app(config_of(args))
    caller = local_caller("text")

    async def run() -> Any:
        async with app.running():
            return await run_reply(app, data, caller, args.format)

    report = anyio.run(run)
    results = report.results
    status = 1 if report.failed else 0
    output = args.output or ("json" if args.json else "text")
    if output != "text":
        for result in results:
            if result.outcome.notice and output == "json":
                print(result.outcome.notice, file=sys.stderr)
        if output == "markdown":
            print(render_markdown(results), end="")
        else:
            shaped = {
                "json": lambda: [result.as_dict() for result in results],
                "results": report.as_results,
                "report": report.as_dict,
            }[output]()
            print(json.dumps(shaped, indent=2, ensure_ascii=False))
        return status
    if not results:
        print("No tool calls found.", file=sys.stderr)
    for index, result in enumerate(results):
        shown = (result.name or "?") + (f" (as {result.written_as})" if result.written_as else "")
        print(("\n" if index else "") + f"[{result.call.label}] {shown}: {'error' if result.is_error else 'ok'}")
        if result.outcome.notice:  # in the output, not on stderr: the model must read it to report the action
            print(result.outcome.notice)
        print(result.outcome.text)
    if report.format == "scissors" and report.markdown:
        print(("\n" if results else "") + report.markdown.rstrip("\n"))
    return status


def _call_text_streamed(args: argparse.Namespace, limit: int) -> int:
    """`call-text --stream`: events out (NDJSON) while the reply is still coming in."""
    import anyio

    from mcp_tools.composition.app import build_app
    from mcp_tools.textcalls import stream_reply

    try:
        source: Any = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")  # noqa: SIM115
    except OSError as exc:
        print(f"mcp-tools: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    app = build_app(config_of(args))
    # The reply arriving on the terminal itself: a `y` in it could answer a prompt there, so no one is asked there.
    caller = local_caller("text", reply_on_terminal=reads_the_terminal(source.fileno()))
    failed = False

    async def pieces() -> Any:
        taken = 0
        while taken < limit:
            data = await anyio.to_thread.run_sync(source.read1, min(65536, limit - taken))
            if not data:
                return
            taken += len(data)
            yield data

    async def run() -> None:
        nonlocal failed
        async with app.running():
            async for event in stream_reply(app, pieces(), caller, args.format):
                failed = failed or bool(event.get("failed"))
                print(json.dumps(event, ensure_ascii=False), flush=True)

    try:
        anyio.run(run)
    finally:
        if source is not sys.stdin.buffer:
            source.close()
    return 1 if failed else 0
