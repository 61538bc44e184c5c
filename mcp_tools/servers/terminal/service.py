"""The terminal service: the folder commands run in, the isolation, and which program a name means."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.terminal.config import TerminalConfig
from mcp_tools.servers.terminal.isolation import Isolation
from mcp_tools.util.sandbox import Sandbox

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


class TerminalService:
    def __init__(self, config: TerminalConfig, root: Path, isolation: Isolation, env: Mapping[str, str]) -> None:
        self.config = config
        self.sandbox = Sandbox(root)
        self.isolation = isolation
        self.child_env = {name: env[name] for name in config.env if name in env}
        self.child_env.setdefault("PATH", DEFAULT_PATH)
        self.search_path = [entry for entry in self.child_env["PATH"].split(os.pathsep) if entry.startswith("/")]

    def which(self, name: str) -> str | None:
        for folder in self.search_path:
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
        return None

    def program(self, name: str, *, shell: bool = False) -> str:
        """The absolute path to run, if the allowlist permits it and the deny list does not forbid it.

        A shell command line needs no allowlist entry for /bin/sh: `shell = true` is the permission.
        """
        if os.path.basename(name) in self.config.deny or name in self.config.deny:
            raise ToolFailure("denied_by_policy", f"{name} is on the terminal deny list")
        if "/" in name and not name.startswith("/"):
            raise ToolFailure(
                "invalid_arguments", f"argv[0] {name!r} is a relative path", "give a program name or an absolute path"
            )
        path = name if name.startswith("/") else self.which(name)
        if path is None or not os.path.isfile(path) or not os.access(path, os.X_OK):
            raise ToolFailure("not_found", f"program {name!r} was not found", "check the name; PATH is the config's")
        real = os.path.realpath(path)
        names = {os.path.basename(name), os.path.basename(path), os.path.basename(real)}
        denied = [entry for entry in self.config.deny if entry in names or entry in (path, real)]
        if denied:
            raise ToolFailure("denied_by_policy", f"{name} is on the terminal deny list")
        allowed = shell or any(
            (entry.startswith("/") and entry in (path, real))
            or (not entry.startswith("/") and name == entry)
            or (not entry.startswith("/") and self.which(entry) in (path,))
            for entry in self.config.allow
        )
        if not allowed:
            allowed_list = ", ".join(self.config.allow) or "none"
            raise ToolFailure(
                "denied_by_policy",
                f"{name} is not an allowed program (allowed: {allowed_list})",
                "ask the person to add it to [terminal] allow",
            )
        return path
