"""The `[terminal]` section: which programs, where, how isolated, and the limits of one run."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

KIB = 1024
MIB = 1024 * KIB
DEFAULT_DENY = ["sudo", "su", "doas", "pkexec", "bwrap", "unshare", "nsenter", "chroot", "setsid", "nohup"]
# Variables that carry our own or other services' secrets never reach a command, even when listed.
SECRET_NAME = re.compile(
    r"^(MCP_TOOLS_.*|AWS_.*|TAVILY_.*|GOOGLE_.*|.*(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_?KEY|PRIVATE_?KEY).*)$",
    re.IGNORECASE,
)


class TerminalConfig(BaseModel):
    """The `[terminal]` section."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=False, description="Nothing of the namespace exists until this is true.")
    allow: list[str] = Field(default_factory=list, description="Programs: names looked up on PATH, or absolute paths.")
    deny: list[str] = Field(default_factory=lambda: list(DEFAULT_DENY), description="Wins over allow.")
    shell: bool = Field(default=False, description="Accept /bin/sh command lines; the allowlist then sees only sh.")
    root: Path | None = Field(default=None, description="Working folders live below it; default <data_dir>/files.")
    isolation: Literal["bwrap", "none"] = Field(
        default="bwrap", description="'none': no sandbox, commands run with your own rights."
    )
    bwrap_path: Path | None = Field(default=None, description="Where bwrap is; default: found on PATH.")
    network: bool = Field(default=False, description="Let sandboxed commands use the network.")
    env: list[str] = Field(
        default_factory=lambda: ["PATH", "LANG", "LC_ALL", "TZ"],
        description="Variables passed from the server's environment.",
    )
    hide: list[Path] = Field(default_factory=list, description="More paths to hide inside the sandbox.")
    timeout_seconds: float = Field(default=60.0, gt=0, le=3600, description="When a call names none.")
    max_timeout_seconds: float = Field(default=600.0, gt=0, le=24 * 3600, description="The most a call may ask for.")
    max_output_bytes: int = Field(default=1 * MIB, ge=1 * KIB, le=64 * MIB, description="Kept per stream.")
    output_chars: int = Field(default=8_000, ge=500, le=15_000, description="Returned per stream.")

    @field_validator("env")
    @classmethod
    def _no_secrets(cls, names: list[str]) -> list[str]:
        for name in names:
            if SECRET_NAME.match(name):
                raise ValueError(f"{name} looks like a secret; secrets are never passed to commands")
        return names

    @field_validator("allow", "deny")
    @classmethod
    def _programs(cls, names: list[str]) -> list[str]:
        for name in names:
            if not name or ("/" in name and not name.startswith("/")):
                raise ValueError(f"{name!r}: give a program name ('git') or an absolute path ('/usr/bin/git')")
        return names
