"""Every shell block of README.md, CONTRIBUTING.md and docs/ runs as written, the README's way.

One fresh copy of the checkout is installed by the README's first command (`python3 -m venv
.venv && .venv/bin/python -m pip install -q -e . && .venv/bin/mcp-tools serve`, stdin closed so
the server it starts ends at once); then each block runs in that copy, in bash, after
`source .venv/bin/activate` as the README says, with its own HOME and XDG folders under tmp
(so nothing reaches the real user's config), and must exit 0. A `console` block runs its `$ `
lines. Installs are offline, as in tests/test_first_contact.py: pip gets no index and finds the
libraries it would download in this test environment. Servers listen where the docs say (8765,
8766): the rest of the suite takes free ports the system assigns, never these.

A block that cannot run here says so in an HTML comment on a line before its fence (one comment
a line, several allowed), which the reader does not see and this test reads:

- `<!-- not run: REASON -->`: skipped, with the reason (a Google sign-in, a real Telegram bot).
- `<!-- runs until stopped: TEXT -->`: a server; it must print TEXT, then SIGTERM stops it.
- `<!-- run after asking approval ID for TOOL {ARGUMENTS} -->`: a pending approval with that id
  is put in the block's state first, as the model's call would have asked it (the example's id).
- `<!-- exits N: REASON -->`: it must exit N, not 0 (a reply whose call fails, on purpose).
- `<!-- run after saving the text block above as NAME -->`: the nearest `text` block before it
  is written to NAME first (the example reply a `call-text` command reads).

Any other block that fails, fails the test. The blocks run in one test, in document order, so
the venv is built once whatever the number of workers.
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from tests.test_docs import BLOCKS, ROOT, SHELL, Block, command_lines
from tests.test_first_contact import fresh_copy, offline_env, offline_site

__all__ = ["offline_site"]  # the session fixture, used here by name

MARK = re.compile(r"^\s*<!--\s*(?P<text>.+?)\s*-->\s*$")
NOT_RUN = re.compile(r"^not run: (?P<reason>.+)$")
UNTIL = re.compile(r"^runs until stopped: (?P<text>.+)$")
ASKED = re.compile(r"^run after asking approval (?P<id>apr-\w+) for (?P<tool>[\w.]+) (?P<arguments>\{.*\})$")
EXITS = re.compile(r"^exits (?P<code>\d+): (?P<reason>.+)$")
SAVE = re.compile(r"^run after saving the (?P<lang>\w+) block above as (?P<name>\S+)$")
TIMEOUT = 180  # seconds for one block; a loaded machine is slow, a hung block fails


@dataclass(frozen=True)
class Run:
    """How the test runs one block: its marker, read from the line before the fence."""

    block: Block
    marks: tuple[str, ...]

    def mark(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        return next(filter(None, map(pattern.match, self.marks)), None)

    @property
    def skipped(self) -> str | None:
        found = self.mark(NOT_RUN)
        return found["reason"] if found else None

    @property
    def until(self) -> str | None:
        found = self.mark(UNTIL)
        return found["text"] if found else None

    @property
    def exit_code(self) -> int:
        found = self.mark(EXITS)
        return int(found["code"]) if found else 0


def marks_of(block: Block) -> tuple[str, ...]:
    """The marker comments on the lines just before the block's fence, top to bottom."""
    lines = block.path.read_text(encoding="utf-8").splitlines()
    index = block.line - 2  # block.line is the (1-based) number of the fence line
    marks: list[str] = []
    while index >= 0 and (found := MARK.match(lines[index])):
        marks.insert(0, found["text"])
        index -= 1
    return tuple(marks)


@cache
def runs() -> list[Run]:
    documents = {"README.md", "CONTRIBUTING.md"}
    return [
        Run(block, marks_of(block))
        for block in BLOCKS
        if block.lang in SHELL and (block.path.name in documents or block.path.parent.name == "docs")
    ]


def block_before(run: Run, wanted: str) -> Block:
    """The nearest block of language `wanted` before `run`'s block in the same document."""
    from tests.test_docs import fenced_blocks

    earlier = [block for block in fenced_blocks(run.block.path) if block.line < run.block.line]
    found = [block for block in earlier if block.lang == wanted]
    assert found, f"{run.block.where}: no {wanted} block above it"
    return found[-1]


def script(block: Block) -> str:
    """The block as bash runs it after activating the venv: a script whole, a transcript's `$ ` lines."""
    body = "\n".join(command_lines(block)) if block.lang == "console" else block.text
    return f"set -e\nsource .venv/bin/activate\n{body}\n"


def command(text: str) -> list[str]:
    return ["bash", "-c", text]


@dataclass
class Checkout:
    root: Path
    site: Path
    scratch: Path

    def env(self, name: str) -> dict[str, str]:
        home = self.scratch / name
        folders = {key: home / sub for key, sub in XDG.items()}
        for folder in [home, *folders.values()]:
            folder.mkdir(parents=True, exist_ok=True)
        return offline_env(self.site, HOME=str(home), **{key: str(path) for key, path in folders.items()})


XDG = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
    "XDG_CACHE_HOME": ".cache",
}


@pytest.fixture(scope="session")
def checkout(tmp_path_factory: pytest.TempPathFactory, offline_site: Path) -> Checkout:
    """A fresh copy of the checkout, installed as the README's first command installs it."""
    base = tmp_path_factory.mktemp("docs-run")
    found = Checkout(fresh_copy(base / "my projects" / "mcp-tools"), offline_site, base / "homes")
    first = next(run.block for run in runs() if run.block.path.name == "README.md")
    assert "python3 -m venv .venv" in first.text and first.text.strip().endswith("mcp-tools serve")
    done = subprocess.run(
        command(first.text),
        stdin=subprocess.DEVNULL,  # the server it ends with reads stdin: closed, it stops at once
        capture_output=True,
        text=True,
        cwd=found.root,
        env=found.env("install"),
        timeout=900,
    )
    assert done.returncode == 0, f"{first.where}: {done.stderr[-3000:]}"
    return found


@contextlib.contextmanager
def started(run: Run, checkout: Checkout, name: str) -> Iterator[None]:
    """A block that serves until stopped: started, awaited until it prints its line, then stopped."""
    assert run.until is not None
    process = subprocess.Popen(
        command(script(run.block)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=checkout.root,
        env=checkout.env(name),
        start_new_session=True,
    )
    assert process.stdout is not None
    output = b""
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + TIMEOUT
            while run.until.encode() not in output:
                left = deadline - time.monotonic()
                assert left > 0 and selector.select(left), f"{run.block.where}: never printed {run.until!r}"
                chunk = os.read(process.stdout.fileno(), 65536)
                assert chunk, f"{run.block.where}: ended before printing {run.until!r}:\n{output.decode()[-3000:]}"
                output += chunk
        # Keep reading what it prints while the other blocks run: a full pipe would block the
        # server on a write, and it could then not stop when asked.
        drain = threading.Thread(target=lambda: process.stdout.read() if process.stdout else None, daemon=True)
        drain.start()
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise AssertionError(f"{run.block.where}: did not stop on SIGTERM") from None
        process.stdout.close()


def ask_approval(state_dir: Path, asked: re.Match[str]) -> None:
    """A pending approval with the example's id, as the gate asks it for a stdio client's call."""
    import hashlib
    import json
    from unittest import mock

    from mcp_tools.state import approvals, sqlite

    arguments = json.loads(asked["arguments"])
    state_dir.mkdir(parents=True, exist_ok=True)
    opened = sqlite.PolicyStore(state_dir / "policy.sqlite3")
    try:
        with mock.patch.object(approvals, "new_approval_id", lambda: asked["id"]):
            approval = opened.request_approval(
                tool=asked["tool"],
                args_sha256=hashlib.sha256(json.dumps(arguments, sort_keys=True).encode()).hexdigest(),
                args_display=arguments,
                summary=f"{asked['tool']} {asked['arguments']}",
                risk="high",
                principal="local",
                ttl_seconds=600,
            )
        assert approval.id == asked["id"]
    finally:
        opened.close()


def run_block(run: Run, checkout: Checkout, index: int) -> str | None:
    """Run one block as the docs write it; None when it ran, else what went wrong."""
    name = f"block-{index}"
    saved = run.mark(SAVE)
    if saved:
        (checkout.root / saved["name"]).write_text(block_before(run, saved["lang"]).text + "\n", encoding="utf-8")
    asked = run.mark(ASKED)
    if asked:
        ask_approval(Path(checkout.env(name)["XDG_STATE_HOME"]) / "mcp-tools", asked)
    if run.until is not None:
        with started(run, checkout, name):
            return None
    process = subprocess.Popen(
        command(script(run.block)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=checkout.root,
        env=checkout.env(name),
        start_new_session=True,  # so a block that hangs is stopped with all it started
    )
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return f"{run.block.where}: still running after {TIMEOUT} s"
    if process.returncode != run.exit_code:
        output = (stdout + stderr).decode(errors="replace")
        return f"{run.block.where}: exit {process.returncode}\n{output[-3000:]}"
    return None


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_every_shell_block_runs_as_written(checkout: Checkout) -> None:
    failures = []
    for index, run in enumerate(runs()):
        if run.skipped or run.block == next(r.block for r in runs()):
            continue  # the first one installed the checkout
        problem = run_block(run, checkout, index)
        if problem:
            failures.append(problem)
    assert not failures, "\n\n".join(failures)


# --- the checks themselves -------------------------------------------------------------------


def test_every_skipped_block_says_why_and_marks_are_known() -> None:
    known = (NOT_RUN, UNTIL, SAVE, EXITS, ASKED)
    marks = [(run, mark) for run in runs() for mark in run.marks]
    assert marks, "no block is marked"
    for run, mark in marks:
        assert any(pattern.match(mark) for pattern in known), f"{run.block.where}: unknown marker {mark!r}"
    assert sum(1 for run in runs() if not run.skipped) >= 12, "a floor: markers do not spread unnoticed"


def test_a_failing_block_is_reported(tmp_path: Path) -> None:
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text("Text.\n\n```bash\ntrue\nfalse\n```\n", encoding="utf-8")
    block = Block(page, 3, "bash", "true\nfalse")
    assert marks_of(block) == ()
    done = subprocess.run(command(script(block)), cwd=ROOT, capture_output=True, timeout=60)
    assert done.returncode != 0  # `set -e`: a failing line fails the block, not just the last one
    page.write_text("Text.\n<!-- not run: needs a real bot -->\n```bash\nfalse\n```\n", encoding="utf-8")
    assert Run(block, marks_of(block)).skipped == "needs a real bot"
