"""Bubblewrap: the system read-only, only the working directory writable, no network unless allowed.

What a command must not reach is hidden: our own state (approvals, audit, tokens), the other
namespaces' data, the config file and every file it names (client secrets, service-account keys,
token files, TLS keys), the MCP client's config folder and the usual credential folders of the
home directory are replaced by empty folders or an empty file, *after* the working folders are
bound, so a bind never shows them again. `/run`, `/var/run` and `$XDG_RUNTIME_DIR` are empty, so
no Unix socket there (D-Bus, the ssh and gpg agents, the container runtime) can be reached. A root
or working folder that holds any of the protected folders is refused. Without bwrap the namespace
does not start unless the config accepts `isolation = "none"`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp_tools.core.tooling import NotConfigured
from mcp_tools.util.sandbox import contains, home_secrets

# Where the sockets of a desktop session live: D-Bus, ssh-agent, gpg-agent, systemd, containers.
RUNTIME_DIRS = ("/run", "/var/run")
PROBE_TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class Isolation:
    kind: str  # "bwrap" or "none"
    bwrap: str | None = None
    network: bool = False
    hidden: tuple[Path, ...] = ()  # folders (or files) replaced by empty ones
    named_files: tuple[Path, ...] = ()  # files the config names: hidden when they are data, not programs
    runtime: tuple[Path, ...] = ()  # replaced by empty, private tmpfs

    def describe(self) -> str:
        if self.kind == "none":
            return "no isolation: commands run as this user, with its files and network"
        network = "network on" if self.network else "no network"
        return f"bubblewrap: system read-only, only the working folder writable, {network}"

    def hiding(self, cwd: Path, root: Path) -> Path | None:
        """The hidden folder a working folder lies in (the root's own parents excepted): a command
        there would see its files again, so the call is refused."""
        for path in self.hidden:
            if contains(path, cwd) and not contains(path, root):
                return path
        return None

    def command(self, argv: list[str], cwd: Path, root: Path) -> list[str]:
        """The full command line: argv itself, or argv inside a bwrap sandbox."""
        if self.kind == "none" or self.bwrap is None:
            return argv
        args = [self.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        emptied = [Path("/tmp")]
        for folder in self.runtime:
            real = folder.resolve()  # /var/run is usually a link to /run
            if real.is_dir() and not any(contains(done, real) for done in emptied):
                args += ["--tmpfs", str(real)]
                emptied.append(real)
        resolv = Path("/etc/resolv.conf").resolve()
        if self.network and resolv.is_file() and any(contains(done, resolv) for done in emptied[1:]):
            args += ["--ro-bind", str(resolv), str(resolv)]  # systemd-resolved keeps it under /run
        masks = self._masks()
        # Parents of the root are hidden first and the root bound back on top; everything else is
        # hidden after the binds, so no bind can show it again.
        args += _mask_args(path for path in masks if contains(path, root))
        args += ["--ro-bind", str(root), str(root), "--bind", str(cwd), str(cwd), "--chdir", str(cwd)]
        args += _mask_args(path for path in masks if not contains(path, root))
        args += ["--unshare-all", *(["--share-net"] if self.network else [])]
        args += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--setenv", "TMPDIR", "/tmp", "--"]
        return args + argv

    def _masks(self) -> list[Path]:
        """Real paths to hide now: every hidden path that exists, and the named files that are data."""
        found = [path.resolve() for path in self.hidden]  # a symlinked folder is hidden where it really is
        for path in self.named_files:
            real = path.resolve()
            if real.is_file() and not os.access(real, os.X_OK):  # `allow = ["/usr/bin/git"]` stays a program
                found.append(real)
        return [path for path in dict.fromkeys(found) if path.exists() and path != Path("/")]


def _mask_args(paths: Iterable[Path]) -> list[str]:
    args: list[str] = []
    for path in paths:
        if path.is_dir():
            args += ["--tmpfs", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    return args


def probe(bwrap: str) -> str | None:
    """None when bwrap can build a sandbox here; else the reason (user namespaces off, a seccomp filter...)."""
    try:
        result = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--unshare-all", "--", "true"],
            capture_output=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bwrap could not be run ({type(error).__name__})"
    if result.returncode == 0:
        return None
    detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
    return detail[0][:200] if detail else f"bwrap exited with status {result.returncode}"


def choose(
    kind: str,
    bwrap_path: Path | None,
    network: bool,
    hidden: Sequence[Path],
    home: Path | None,
    named_files: Sequence[Path] = (),
    environ: dict[str, str] | None = None,
) -> Isolation:
    if kind == "none":
        return Isolation("none")
    bwrap = str(bwrap_path) if bwrap_path else shutil.which("bwrap")
    accept = 'or accept running commands without isolation: [terminal] isolation = "none"'
    if not bwrap:
        raise NotConfigured(
            f"bubblewrap (bwrap) is not installed: install it (Debian, Ubuntu: apt install bubblewrap), {accept}"
        )
    failure = probe(bwrap)
    if failure is not None:
        raise NotConfigured(
            f"bubblewrap cannot create a sandbox on this machine ({failure}); user namespaces may be disabled "
            f"(sysctl kernel.unprivileged_userns_clone, AppArmor's restrict_unprivileged_userns) {accept}"
        )
    environ = environ or {}
    secrets = home_secrets(home, environ)
    runtime = [Path(folder) for folder in RUNTIME_DIRS]
    if environ.get("XDG_RUNTIME_DIR", "").startswith("/"):
        runtime.append(Path(environ["XDG_RUNTIME_DIR"]))
    return Isolation(
        "bwrap", bwrap, network, tuple(dict.fromkeys([*hidden, *secrets])), tuple(named_files), tuple(runtime)
    )
