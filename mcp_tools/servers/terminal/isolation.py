"""Bubblewrap: the system read-only, only the working directory writable, no network unless allowed.

Our own state (approvals, tokens, config), the other namespaces' data and the usual credential
folders in the home directory are hidden behind empty folders, so an allowed program cannot read
them either. Without bwrap the namespace does not start unless the config accepts `isolation = "none"`.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from mcp_tools.tooling import NotConfigured

# Credentials commonly kept in a home directory; hidden inside the sandbox.
HOME_SECRETS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".config/gcloud",
    ".config/gh",
    ".config/mcp-tools",
)
PROBE_TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class Isolation:
    kind: str  # "bwrap" or "none"
    bwrap: str | None = None
    network: bool = False
    hidden: tuple[Path, ...] = ()

    def describe(self) -> str:
        if self.kind == "none":
            return "no isolation: commands run as this user, with its files and network"
        network = "network on" if self.network else "no network"
        return f"bubblewrap: system read-only, only the working folder writable, {network}"

    def command(self, argv: list[str], cwd: Path, root: Path) -> list[str]:
        """The full command line: argv itself, or argv inside a bwrap sandbox."""
        if self.kind == "none" or self.bwrap is None:
            return argv
        args = [self.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        for path in self.hidden:
            real = path.resolve()  # a symlinked folder is hidden where it really is
            if real.is_dir():
                args += ["--tmpfs", str(real)]
            elif real.exists():
                args += ["--ro-bind", "/dev/null", str(real)]
        args += ["--ro-bind", str(root), str(root), "--bind", str(cwd), str(cwd), "--chdir", str(cwd)]
        args += ["--unshare-all", *(["--share-net"] if self.network else [])]
        args += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--setenv", "TMPDIR", "/tmp", "--"]
        return args + argv


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
    kind: str, bwrap_path: Path | None, network: bool, hidden: list[Path], home: Path | None
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
    secrets = [home / name for name in HOME_SECRETS] if home else []
    return Isolation("bwrap", bwrap, network, tuple(dict.fromkeys([*hidden, *secrets])))
