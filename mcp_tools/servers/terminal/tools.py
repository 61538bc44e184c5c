"""`terminal.execute`: program and directory checks, running with a hard timeout, capped output."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_tools.core.tooling import CallContext, Risk, ToolAlias, ToolFailure, ToolSpec, alias_error
from mcp_tools.servers.terminal.models import ExecuteArgs, ExecuteResult
from mcp_tools.servers.terminal.service import TerminalService

LOG_FOLDER = ".terminal"
KEPT_LOGS = 40  # files in LOG_FOLDER (two per run at most)


# --- the tool -------------------------------------------------------------------------------------


def shown_argument(arg: str) -> str:
    """Quoted like a shell would take it, control characters made visible so nothing hides in the prompt."""
    if arg.isprintable():
        return shlex.quote(arg)
    return "$" + repr(arg).replace("\\'", "'")


def command_line(args: ExecuteArgs) -> list[str]:
    return ["/bin/sh", "-c", args.shell] if args.shell else list(args.argv)


@dataclass
class ExecuteFacts:
    """What the precheck resolved: the program's real path, the folder, how the command is isolated."""

    program: str = ""
    directory: Path | None = None
    isolation: str = ""


async def execute_precheck(service: TerminalService, args: ExecuteArgs, facts: ExecuteFacts) -> None:
    """Refused before the person is asked: the program, the shell setting, the folder, the timeout."""
    if args.shell and not service.config.shell:
        raise ToolFailure(
            "denied_by_policy",
            "shell command lines are off",
            "pass argv as a list instead; the person can set [terminal] shell = true",
        )
    argv = command_line(args)
    facts.program = service.program(argv[0], shell=bool(args.shell))
    directory = service.sandbox.resolve(args.cwd, field="cwd", allow_empty=True)
    if not directory.is_dir():
        raise ToolFailure("not_found", f"cwd {args.cwd!r} is not a folder under the files root")
    hidden = service.isolation.hiding(directory, service.sandbox.root)
    if hidden is not None:
        raise ToolFailure("denied_by_policy", f"cwd {args.cwd!r} is inside a folder hidden from commands")
    if args.timeout_seconds > service.config.max_timeout_seconds:
        raise ToolFailure("invalid_arguments", f"timeout_seconds is above {service.config.max_timeout_seconds:g}")
    facts.directory = directory
    facts.isolation = service.isolation.describe()


async def always_high(service: TerminalService, args: ExecuteArgs, facts: ExecuteFacts) -> Risk:
    """No rule lowers it: a command line is never routine."""
    return Risk.HIGH


def describe_execute(args: ExecuteArgs, facts: ExecuteFacts) -> str:
    shown = " ".join(shown_argument(arg) for arg in command_line(args))
    where = args.cwd or "the files root"
    isolation = facts.isolation or "isolation unknown"
    return f"Run `{shown}` in {where} ({isolation})"


class Capture:
    """Keeps the first `limit` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.total = 0

    async def drain(self, stream: Any) -> None:
        import anyio

        try:
            async for chunk in stream:
                self.total += len(chunk)
                room = self.limit - len(self.data)
                if room > 0:
                    self.data += chunk[:room]
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _cost(char: str) -> int:
    """What one character costs a model: once in the text block, once JSON-escaped in the
    structured content (a newline is 2 there, a control character 6)."""
    return 1 + len(json.dumps(char, ensure_ascii=False)) - 2


def _chars_within(text: str, budget: int) -> int:
    """How many characters from the start of `text` cost at most `budget`."""
    used = 0
    for count, char in enumerate(text):
        used += _cost(char)
        if used > budget:
            return count
    return len(text)


def _window(data: bytes, limit: int) -> tuple[str, bool]:
    """At most `limit` plain characters' worth: the first two thirds and the last third, where
    escaped characters (newlines, control bytes) count for what they cost, so a stream of control
    bytes cannot blow the result budget."""
    text = data.decode("utf-8", errors="replace")
    budget = 2 * limit  # a plain character costs 2
    if len(text) <= limit and sum(_cost(char) for char in text) <= budget:
        return text, False
    head = _chars_within(text, budget * 2 // 3)
    tail = _chars_within(text[head:][::-1], budget - budget * 2 // 3)
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted} characters omitted ...]\n{text[len(text) - tail :]}", True


def _keep_output(service: TerminalService, run_id: str, stdout: Capture, stderr: Capture) -> str:
    """Full captured output into the store, for paging with files.read; old runs are pruned."""
    key = f"{LOG_FOLDER}/{run_id}.log"
    body = b"=== stdout ===\n" + bytes(stdout.data) + b"\n=== stderr ===\n" + bytes(stderr.data)
    service.sandbox.write_bytes(key, body, create_parents=True)
    folder = service.sandbox.resolve(LOG_FOLDER)
    logs = sorted(folder.glob("*.log"), key=lambda path: path.stat().st_mtime)
    for old in logs[:-KEPT_LOGS]:
        service.sandbox.unlink(f"{LOG_FOLDER}/{old.name}")
    return key


async def execute(service: TerminalService, args: ExecuteArgs, ctx: CallContext, facts: ExecuteFacts) -> ExecuteResult:
    import anyio

    if facts.directory is None:
        await execute_precheck(service, args, facts)
    assert facts.directory is not None
    argv = command_line(args)
    argv[0] = facts.program
    full = service.isolation.command(argv, facts.directory, service.sandbox.root)
    timeout = args.timeout_seconds or service.config.timeout_seconds
    stdout, stderr = Capture(service.config.max_output_bytes), Capture(service.config.max_output_bytes)
    started = time.monotonic()
    await ctx.report_progress(0, None, f"running {os.path.basename(argv[0])}")
    try:
        process = await anyio.open_process(
            full,
            stdin=subprocess.DEVNULL,  # never the server's own stdin (the MCP stream on stdio)
            cwd=facts.directory,
            env=dict(service.child_env),
            start_new_session=True,  # its own process group, so a timeout kills every child too
        )
    except OSError as error:
        raise ToolFailure("internal_error", f"could not start {argv[0]}: {error.strerror or error}") from None
    finished = (anyio.Event(), anyio.Event())

    async def drain(capture: Capture, stream: Any, done: anyio.Event) -> None:
        await capture.drain(stream)
        done.set()

    try:
        async with process, anyio.create_task_group() as group:
            group.start_soon(drain, stdout, process.stdout, finished[0])
            group.start_soon(drain, stderr, process.stderr, finished[1])
            with anyio.move_on_after(timeout) as deadline:
                await process.wait()
            timed_out = deadline.cancelled_caught
            _kill_group(process.pid)  # nothing the command started outlives the call
            with anyio.move_on_after(5):
                await process.wait()
            with anyio.move_on_after(1):  # a child that left the group could hold the pipes open
                for done in finished:
                    await done.wait()
            group.cancel_scope.cancel()
    finally:
        _kill_group(process.pid)  # also when the client cancels the call
    code = process.returncode
    killed = signal.Signals(-code).name if code is not None and code < 0 else None
    out_text, out_cut = _window(bytes(stdout.data), service.config.output_chars)
    err_text, err_cut = _window(bytes(stderr.data), service.config.output_chars)
    truncated = out_cut or err_cut or stdout.total > len(stdout.data) or stderr.total > len(stderr.data)
    run_id = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
    output_path = await anyio.to_thread.run_sync(_keep_output, service, run_id, stdout, stderr) if truncated else None
    return ExecuteResult(
        exit_code=None if killed or timed_out else code,
        signal="SIGKILL (timeout)" if timed_out else killed,
        timed_out=timed_out,
        duration_ms=int((time.monotonic() - started) * 1000),
        stdout=out_text,
        stderr=err_text,
        stdout_bytes=stdout.total,
        stderr_bytes=stderr.total,
        truncated=truncated,
        output_path=output_path,
        isolation=service.isolation.describe(),
    )


def render_execute(result: ExecuteResult) -> str:
    if result.timed_out:
        head = f"Killed after the timeout ({result.duration_ms} ms), with everything it started."
    elif result.signal:
        head = f"Killed by {result.signal} after {result.duration_ms} ms."
    else:
        head = f"Exit code {result.exit_code} after {result.duration_ms} ms."
    lines = [head + f" Isolation: {result.isolation}."]
    streams = (("stdout", result.stdout, result.stdout_bytes), ("stderr", result.stderr, result.stderr_bytes))
    for name, text, total in streams:
        if total:
            lines += [f"--- {name} ({total} bytes) ---", text]
    if result.output_path:
        lines.append(f"Output was cut; what was kept is in {result.output_path} (read it with files.read).")
    return "\n".join(lines)


def _command_line_alias(arguments: dict[str, Any]) -> dict[str, Any]:
    """A `command` string is split into argv as a shell would (no shell runs it); a list is argv."""
    import shlex

    out = dict(arguments)
    command = out.pop("command", None)
    if isinstance(command, list):
        out.setdefault("argv", command)
    elif isinstance(command, str):
        try:
            out.setdefault("argv", shlex.split(command))
        except ValueError as exc:
            raise alias_error(f"terminal_execute: command cannot be split into arguments ({exc})") from None
    return out


TOOLS: list[ToolSpec[TerminalService, Any, Any]] = [
    ToolSpec(
        name="terminal.execute",
        aliases=(
            ToolAlias(
                "terminal_execute",
                {"cmd": "command", "working_directory": "cwd", "workdir": "cwd", "timeout": "timeout_seconds"},
                _command_line_alias,
            ),
        ),
        title="Run a command",
        description=("Run an allowed program in a file-store folder; long output is kept for files.read."),
        input_model=ExecuteArgs,
        output_model=ExecuteResult,
        handler=execute,
        risk=Risk.HIGH,
        describe=describe_execute,
        dynamic_risk=always_high,
        precheck=execute_precheck,
        facts=ExecuteFacts,
        open_world=True,
        tier="core",
        render_text=render_execute,
    ),
]
