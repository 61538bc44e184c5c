"""The person at this terminal, as the caller of `mcp-tools call` and `call-text`: asked y/N when they can be."""

from __future__ import annotations

import sys
from typing import Any


class TerminalConfirmation:
    """`mcp-tools call` on a terminal asks the person right there.

    Ctrl-C at the prompt is an answer too: a decline, recorded like any other.
    """

    channel = "terminal"

    async def ask(self, request: Any) -> Any:
        import contextlib
        import signal
        import threading

        import anyio
        import anyio.from_thread
        import anyio.lowlevel

        from mcp_tools.policy.gate import Answer

        reply: list[str] = []
        answered = anyio.Event()
        token = anyio.lowlevel.current_token()

        def read() -> None:  # a daemon thread: a Ctrl-C leaves it waiting on stdin without holding up exit
            reply.append(sys.stdin.readline())
            with contextlib.suppress(RuntimeError):  # the prompt was already answered by Ctrl-C
                anyio.from_thread.run_sync(answered.set, token=token)

        with anyio.open_signal_receiver(signal.SIGINT) as interrupts:  # before the prompt: no Ctrl-C slips by
            print(f"{request.headline()}\n\n{request.details()}\n", file=sys.stderr)
            print("Run it? [y/N] ", end="", file=sys.stderr, flush=True)
            threading.Thread(target=read, daemon=True).start()
            async with anyio.create_task_group() as group:

                async def interrupted() -> None:
                    async for _ in interrupts:
                        print("^C", file=sys.stderr)
                        group.cancel_scope.cancel()
                        return

                group.start_soon(interrupted)
                await answered.wait()
                group.cancel_scope.cancel()
        if reply and reply[0].strip().lower() in ("y", "yes"):
            return Answer.ACCEPT
        return Answer.DECLINE


def local_caller(transport: str) -> Any:
    """The person at this terminal: asked y/N when there is a terminal, else like a client that cannot ask."""
    from mcp_tools.policy.gate import Caller

    asker = TerminalConfirmation() if sys.stdin.isatty() and sys.stderr.isatty() else None
    return Caller(transport=transport, principal="local", asker=asker)
