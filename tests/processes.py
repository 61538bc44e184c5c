"""Real server processes for transport tests: `mcp-tools serve` over stdio and over HTTP."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
DEMO_ENTRY = str(ROOT / "tests" / "serve_demo.py")
# How often a fake's `serve_forever` looks for `shutdown()`: the stop waits for that look, and
# fakes stop at the end of most tests.
STOP_POLL_SECONDS = 0.005


def write_config(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def demo_config(tmp_path: Path, extra: str = "", servers: str = '["demo"]') -> Path:
    """A config serving the demo namespace with state under tmp_path."""
    return write_config(
        tmp_path / "config.toml",
        f'[server]\nnamespaces = {servers}\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n'
        + extra,
    )


def child_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("MCP_TOOLS_")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def stdio_params(config: Path, *args: str, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[DEMO_ENTRY, "--config", str(config), "serve", *args],
        env=child_env(**env),
        cwd=str(ROOT),
    )


def run_cli(config: Path, *args: str, input_text: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, DEMO_ENTRY, "--config", str(config), *args],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=str(ROOT),
        input=input_text,
        timeout=60,
        start_new_session=True,  # no controlling terminal: a test run in one is never asked there
    )


def cli_in_process(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`mcp-tools --config CONFIG ARGS...` run by `main` in this process, for a test that only
    reads or sets state through the CLI (an audit, an approval, a sign-in link) while what it tests
    is elsewhere: no interpreter to start and no modules to import again. Tests of the command
    itself use `run_cli`. `main` runs on a thread of its own, so an async test may call this too.
    """
    import contextlib
    import io
    import logging
    import threading

    from mcp_tools.cli import main
    from mcp_tools.servers import CATALOG

    argv = ["--config", str(config), *args]
    out, err = io.StringIO(), io.StringIO()
    codes: list[int] = []
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    added = "demo" not in CATALOG
    CATALOG.setdefault("demo", "tests.demo_namespace")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            thread = threading.Thread(target=lambda: codes.append(main(argv)))
            thread.start()
            thread.join(60)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        if added:
            del CATALOG["demo"]
    assert codes, f"mcp-tools {' '.join(args)} did not end: {err.getvalue()}"
    return subprocess.CompletedProcess(argv, codes[0], out.getvalue(), err.getvalue())


def answer_on_terminal(config: Path, *args: str, answer: bytes | signal.Signals) -> tuple[bytes, str, int]:
    """Run the CLI with a terminal on stdin and stderr (its controlling terminal), answer its [y/N]
    prompt: typed bytes, or a signal such as SIGINT (what Ctrl-C at the terminal sends).

    Returns what the prompt showed, what was printed on stdout, and the exit code.
    """
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, DEMO_ENTRY, "--config", str(config), *args],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=follower,
        env=child_env(),
        cwd=str(ROOT),
        preexec_fn=controlled_by_stderr,
    )
    os.close(follower)
    try:
        prompt = b""
        while b"[y/N]" not in prompt:
            prompt += os.read(leader, 1024)
        if isinstance(answer, signal.Signals):
            process.send_signal(answer)
        else:
            os.write(leader, answer)
        out, _ = process.communicate(timeout=60)
    finally:
        process.kill()
        os.close(leader)
    return prompt, out.decode(), process.returncode


def controlled_by_stderr() -> None:
    """In a child about to run: a session of its own whose controlling terminal is its stderr (a pty's
    follower), as for a program started in that terminal."""
    import fcntl
    import termios

    os.setsid()
    fcntl.ioctl(2, termios.TIOCSCTTY, 0)


def stream_on_terminal(
    config: Path, *args: str, words: bytes, typed: bytes, words_on_terminal: bool
) -> tuple[bytes, str, int]:
    """Run the CLI in a terminal of its own (its controlling terminal, and stderr) and feed it a model's
    `words`: typed on that terminal as stdin when `words_on_terminal`, else through a pipe. Once the
    first line of output is printed or a [y/N] prompt shows (whichever comes first), `typed` is
    typed on the terminal, then the words end.

    Returns all the terminal showed, what was printed on stdout, and the exit code.
    """
    import pty
    import select

    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, DEMO_ENTRY, "--config", str(config), *args],
        stdin=follower if words_on_terminal else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=follower,
        env=child_env(),
        cwd=str(ROOT),
        preexec_fn=controlled_by_stderr,
    )
    os.close(follower)
    assert process.stdout is not None
    shown, out = b"", b""
    try:
        if words_on_terminal:
            os.write(leader, words)
        else:
            assert process.stdin is not None
            process.stdin.write(words)
            process.stdin.flush()
        deadline = time.monotonic() + 60
        while b"[y/N]" not in shown and b"\n" not in out:
            assert time.monotonic() < deadline, f"neither a prompt nor a result: {shown!r} {out!r}"
            ready, _, _ = select.select([leader, process.stdout], [], [], 1)
            if leader in ready:
                shown += os.read(leader, 4096)
            if process.stdout in ready:
                out += os.read(process.stdout.fileno(), 4096)
        os.write(leader, typed)
        if words_on_terminal:
            os.write(leader, b"\x04")  # Ctrl-D: the end of what the terminal carries
        else:
            assert process.stdin is not None
            process.stdin.close()
        ended = False
        while not ended:  # until stdout ends, what the terminal shows is kept too
            assert time.monotonic() < deadline, f"the command did not end: {shown!r} {out!r}"
            ready, _, _ = select.select([leader, process.stdout], [], [], 1)
            if leader in ready:
                with contextlib.suppress(OSError):  # EIO once the child has gone
                    shown += os.read(leader, 4096)
            if process.stdout in ready:
                piece = os.read(process.stdout.fileno(), 4096)
                out += piece
                ended = not piece
        process.wait(timeout=60)
    finally:
        process.kill()
        os.close(leader)
    return shown, out.decode(), process.returncode


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def http_server(
    config: Path,
    *args: str,
    log: Path | None = None,
    port: int | None = None,
    open_files: int | None = None,
    entry: str = DEMO_ENTRY,
    startup: float = 30,
    **env: str,
) -> Iterator[str]:
    """`mcp-tools serve --http` on a free loopback port (or `port`); yields the base URL once healthy.

    With `log`, the server's stderr goes to that file (for tests of what it logs); with
    `open_files`, the server runs with that descriptor limit (RLIMIT_NOFILE); `entry` is the script
    that runs the command, and `startup` how long it may take to answer /healthz.
    """
    port = port or free_port()
    log_file = open(log, "wb") if log is not None else None  # noqa: SIM115 - closed in finally
    process = subprocess.Popen(
        [sys.executable, entry, "--config", str(config), "serve", "--http", "--port", str(port), *args],
        env=child_env(**env),
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=log_file or subprocess.PIPE,
        preexec_fn=None if open_files is None else lambda: limit_open_files(open_files),
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup
        while True:
            if process.poll() is not None:
                shown = process.stderr.read().decode() if process.stderr else log.read_text() if log else ""
                raise RuntimeError(f"server exited: {shown}")
            try:
                if httpx2.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("HTTP server did not become healthy")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        if log_file is not None:
            log_file.close()


def limit_open_files(count: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))


def bearer(token: str, **headers: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **headers}
