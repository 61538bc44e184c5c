"""The person at this terminal, as the caller of `mcp-tools call` and `call-text`: asked y/N when they can be.

The question is asked on the controlling terminal (`/dev/tty`), never on standard input: for
`call-text` standard input carries the model's reply, and a reply holding a line `y` after its
call would otherwise answer its own prompt.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

CONTROLLING_TERMINAL = "/dev/tty"


def open_terminal() -> int | None:
    """A descriptor for the controlling terminal, or None when the process has none."""
    try:
        return os.open(CONTROLLING_TERMINAL, os.O_RDWR | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None


def has_terminal() -> bool:
    fd = open_terminal()
    if fd is None:
        return False
    os.close(fd)
    return True


def reads_the_terminal(fd: int) -> bool:
    """Whether `fd` is the controlling terminal itself, so what it carries and what the person types
    there are one stream. A terminal that cannot be told apart from it counts as it."""
    if not os.isatty(fd):
        return False
    controlling = _controlling_device()
    return controlling is None or controlling == os.fstat(fd).st_rdev


def _controlling_device() -> int | None:
    """The controlling terminal's device number (Linux: field 7 of /proc/self/stat), if known."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/self/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return int(fields[4])
    return None


class TerminalConfirmation:
    """`mcp-tools call` on a terminal asks the person right there, on the controlling terminal.

    Ctrl-C at the prompt is an answer too: a decline, recorded like any other.
    """

    channel = "terminal"

    async def ask(self, request: Any) -> Any:
        import signal
        import threading

        import anyio
        import anyio.from_thread
        import anyio.lowlevel

        from mcp_tools.policy.gate import Answer

        terminal = open_terminal()
        if terminal is None:  # the terminal went away since the call began: not a yes
            return Answer.CANCEL
        reply: list[bytes] = []
        answered = anyio.Event()
        token = anyio.lowlevel.current_token()

        def read() -> None:  # a daemon thread: a Ctrl-C leaves it waiting on the terminal without holding up exit
            line = b""
            with contextlib.suppress(OSError):
                while not line.endswith(b"\n"):
                    chunk = os.read(terminal, 1)
                    if not chunk:
                        break
                    line += chunk
            reply.append(line)
            os.close(terminal)  # here, once read: a thread left waiting by Ctrl-C keeps its descriptor
            with contextlib.suppress(RuntimeError):  # the prompt was already answered by Ctrl-C
                anyio.from_thread.run_sync(answered.set, token=token)

        def say(text: str) -> None:
            with contextlib.suppress(OSError):  # before the reader closes it
                os.write(terminal, text.encode("utf-8", "replace"))

        with anyio.open_signal_receiver(signal.SIGINT) as interrupts:  # before the prompt: no Ctrl-C slips by
            with contextlib.suppress(OSError, ImportError):  # what was typed before the question is no answer to it
                import termios

                termios.tcflush(terminal, termios.TCIFLUSH)
            say(f"{request.headline()}\n\n{request.details()}\n\nRun it? [y/N] ")
            threading.Thread(target=read, daemon=True).start()
            async with anyio.create_task_group() as group:

                async def interrupted() -> None:
                    async for _ in interrupts:
                        say("^C\n")
                        group.cancel_scope.cancel()
                        return

                group.start_soon(interrupted)
                await answered.wait()
                group.cancel_scope.cancel()
        if reply and reply[0].decode("utf-8", "replace").strip().lower() in ("y", "yes"):
            return Answer.ACCEPT
        return Answer.DECLINE


def local_caller(transport: str, reply_on_terminal: bool = False) -> Any:
    """The person at this terminal: asked y/N when there is a controlling terminal, else like a client
    that cannot ask. `reply_on_terminal`: the model's words arrive on that terminal while calls
    run, so an answer typed there could be theirs: no one is asked there."""
    from mcp_tools.policy.gate import Caller

    asker = TerminalConfirmation() if has_terminal() and not reply_on_terminal else None
    return Caller(transport=transport, principal="local", asker=asker)
