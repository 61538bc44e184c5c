"""Helpers every command group shares: the config of a run, its namespace and tool selection,
atomic writes, and where a running page listens."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import sys
from pathlib import Path

from mcp_tools.core.config import Config, ConfigError, load_config


def config_of(args: argparse.Namespace) -> Config:
    """The config this run reads (`--config`, $MCP_TOOLS_CONFIG or the default file), or the one
    `main` was handed (a bundle's settings)."""
    given: Config | None = getattr(args, "given_config", None)
    return given if given is not None else load_config(args.config)


def add_namespaces_option(parser: argparse.ArgumentParser, help: str) -> None:
    """`--namespaces a,b`, and `--servers`, its old spelling, still accepted."""
    parser.add_argument("--namespaces", metavar="A,B", help=help)
    parser.add_argument("--servers", metavar="A,B", help=argparse.SUPPRESS)


def namespaces_of(args: argparse.Namespace) -> list[str] | None:
    """`--namespaces a,b`: known namespaces only, so a typo stops the server instead of serving nothing.

    `--servers` is the old spelling: it still works, with a note on stderr; both at once is an error.
    """
    new, old = getattr(args, "namespaces", None), getattr(args, "servers", None)
    if new is not None and old is not None:
        raise ConfigError("--namespaces and --servers name the same thing (--servers is the old spelling); give one")
    option = "--namespaces"
    if old is not None:
        option = "--servers"
        print("mcp-tools: --servers is deprecated; use --namespaces (the same list)", file=sys.stderr)
    value = new if new is not None else old
    if not value:
        return None
    from mcp_tools.servers import CATALOG
    from mcp_tools.util.suggest import closest

    names = [part.strip() for part in value.split(",") if part.strip()]
    for name in names:
        if name not in CATALOG:
            close = closest(name, CATALOG)
            guess = f"; did you mean {close[0]!r}?" if close else f"; expected some of {', '.join(sorted(CATALOG))}"
            raise ConfigError(f"{option}: unknown namespace {name!r}{guess}")
    return names


def tools_of(args: argparse.Namespace) -> list[str] | None:
    """`--tools a,b.core,-c.d`: the selection this run serves instead of `[server] tools`."""
    value = getattr(args, "tools", None)
    return None if value is None else [part.strip() for part in value.split(",") if part.strip()]


def tcp_port(text: str) -> int:
    """A port number, refused by the parser when out of range (0 picks a free one)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0 to 65535)")
    return port


def count_of_rows(text: str) -> int:
    """How many rows to show: 0 or more, refused by the parser otherwise."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if count < 0:
        raise argparse.ArgumentTypeError(f"{count} is negative; give 0 or more rows")
    return count


def quiet_broken_pipe() -> int:
    """The reader went away (`mcp-tools call ... | head`): stop quietly, as a shell tool would."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # so flushing stdout at exit cannot raise again
    os.close(devnull)
    return 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader left


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


def write_through(path: Path, text: str, *, backup: bool = False) -> Path | None:
    """Replace a config file the person may have linked elsewhere: a symlink's target is written
    (the link stays), anything but a regular file (a device, a folder) is refused, and with
    `backup` the old content is kept as `<file>.bak` first. Returns the backup's path, if made."""
    import stat
    import tempfile

    target = Path(os.path.realpath(path))
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a device or other special file"
        raise OSError(errno.EINVAL, f"it is {kind}, not a regular file; give the path of a file")
    saved = None
    if backup and mode is not None:
        saved = target.with_name(target.name + ".bak")
        data = target.read_bytes()
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{saved.name}.")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temp, saved)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    write_atomically(target, text)
    return saved


def record_listening(config: Config, which: str, base: str) -> Path:
    """Note where a page really listens (`--port` may differ from the config), for `approvals login`.

    One record per process, so servers sharing a state dir never remove each other's."""
    path = config.state_dir() / f"listening-{which}.{os.getpid()}.json"
    write_atomically(path, json.dumps({"url": base, "pid": os.getpid()}) + "\n")
    return path


def forget_listening(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def listening_base(config: Config, which: str) -> str | None:
    """The address the newest running page recorded; records of processes gone are removed."""
    found: list[tuple[float, str]] = []
    for path in config.state_dir().glob(f"listening-{which}*.json"):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            alive = process_alive(int(record["pid"]))
            if alive:
                found.append((path.stat().st_mtime, str(record["url"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not alive:
            with contextlib.suppress(OSError):
                path.unlink()
    return max(found)[1] if found else None


def process_alive(pid: int) -> bool:
    if pid <= 0:  # 0 and negative numbers name process groups
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:  # another user's: alive
        return True
    except (OSError, OverflowError):
        return False
    return True
