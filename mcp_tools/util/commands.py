"""The commands we print for a person to run, spelled so they work as printed.

`mcp-tools` may not be on PATH (a venv that is not activated, Claude Desktop's own environment),
the server may run on a config file the default lookup would not find, and the package index
holds an unrelated `mcp-tools` (and, until the project is published, nothing of ours): every hint
goes through here so it names this installation's executable, this process's config file, and
what this installation was installed from.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

DISTRIBUTION = "mcp-tools-suite"  # the distribution (its name on a package index); the command stays `mcp-tools`
COMMAND = "mcp-tools"

# The config file this process was started with, pinned by cli.main, so printed commands reach
# the same state (approvals, audit) as the server that printed them.
_config_path: Path | None = None


def use_config(path: str | os.PathLike[str] | None) -> None:
    """Remember the config file the running command was given (None: the default lookup)."""
    global _config_path
    _config_path = Path(path).expanduser().resolve() if path else None


def quote(word: str | os.PathLike[str]) -> str:
    return shlex.quote(str(word))


def executable() -> str:
    """How to start `mcp-tools` from a shell: the bare name when PATH finds this installation,
    else the absolute path of this environment's script, else this Python with `-m mcp_tools`."""
    script = Path(sys.executable).parent / ("mcp-tools.exe" if os.name == "nt" else COMMAND)
    found = shutil.which(COMMAND)
    if found and script.exists() and _same_file(found, script):
        return COMMAND
    if script.exists():
        return quote(script)
    return f"{quote(sys.executable)} -m mcp_tools"


def _same_file(first: str | Path, second: str | Path) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False


def mcp_tools(*words: str) -> str:
    """`mcp-tools [--config PATH] WORDS...` as a person can paste it into a shell."""
    config = f" --config {quote(_config_path)}" if _config_path else ""
    return executable() + config + "".join(f" {quote(word)}" for word in words)


def source_checkout() -> Path | None:
    """The project checkout this package runs from (an editable install), or None for an installed wheel."""
    root = Path(__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    return root if f'name = "{DISTRIBUTION}"' in text else None


def pip_install(extra: str) -> str:
    """The command that installs `extra` into this environment from what this installation came
    from, never someone else's package: the checkout (`-e` when editable), the wheel or the URL
    pip recorded (PEP 610 `direct_url.json`), and the distribution's own name only when it came
    from a package index."""
    pip = _pip()
    checkout = source_checkout()
    origin = installed_from()
    if checkout is not None and (origin is None or origin[1]):  # run from the checkout, or installed editable
        return f"{pip} install -e {quote(f'{checkout}[{extra}]')}"
    if origin is None:
        return f"{pip} install {quote(f'{DISTRIBUTION}[{extra}]')}"
    where, editable = origin
    if "://" in where:  # a remote wheel or a repository: a direct reference keeps the extra
        return f"{pip} install {quote(f'{DISTRIBUTION}[{extra}] @ {where}')}"
    return f"{pip} install {'-e ' if editable else ''}{quote(f'{where}[{extra}]')}"


def installed_from() -> tuple[str, bool] | None:
    """Where pip installed this distribution from, as pip records it in `direct_url.json`: a local
    path (a checkout or a wheel file) or a URL, and whether the install is editable. None when it
    came from a package index (nothing recorded) or is not installed at all."""
    import json
    from importlib import metadata
    from urllib.parse import urlsplit
    from urllib.request import url2pathname

    try:
        recorded = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
        direct = json.loads(recorded) if recorded else None
    except (metadata.PackageNotFoundError, ValueError):
        return None
    if not isinstance(direct, dict) or not isinstance(direct.get("url"), str):
        return None
    url: str = direct["url"]
    editable = bool((direct.get("dir_info") or {}).get("editable"))
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs"):
        commit = vcs.get("commit_id")
        return f"{vcs['vcs']}+{url}" + (f"@{commit}" if commit else ""), False
    parts = urlsplit(url)
    if parts.scheme == "file" and parts.netloc in ("", "localhost"):
        return url2pathname(parts.path), editable
    return url, False


def _pip() -> str:
    """`pip` when PATH's pip installs into this Python, else this Python's `-m pip`."""
    found = shutil.which("pip")
    if found and _same_file(Path(found).parent, Path(sys.executable).parent):
        return "pip"
    return f"{quote(sys.executable)} -m pip"
