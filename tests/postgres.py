"""Debian's PostgreSQL server in a temporary data directory on 127.0.0.1, for the state store's tests.

Started once per test session (as the `postgres` user when the tests run as root, since the
server refuses to run as root); every test gets a database of its own, dropped when the test ends.
The data directory is in memory (/dev/shm) where there is one: a database is thousands of small
files, and creating and deleting hundreds of them on a busy disk cost a session tens of seconds.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from tests.system_packages import apt_install

USER = "mcp"


def postgres_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return found[-1].parent if found else None


def memory_folder() -> str | None:
    """A tmpfs to keep the data directory in, or None for the default temporary folder."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK) else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class PostgresServer:
    """One server, its superuser `mcp` with a random password, stoppable and startable again."""

    def __init__(self) -> None:
        problem = apt_install("postgresql", "/usr/lib/postgresql")
        found = postgres_bin() if problem is None else None
        if found is None:
            raise RuntimeError(problem or "Debian's postgresql installed no initdb under /usr/lib/postgresql")
        self.bin = found
        self.root = Path(tempfile.mkdtemp(prefix="mcp-tools-pg-", dir=memory_folder()))
        self.data = self.root / "data"
        self.password = secrets.token_urlsafe(18)
        self.port = free_port()
        self._as_postgres = os.geteuid() == 0
        pwfile = self.root / "pw"
        pwfile.write_text(self.password)
        if self._as_postgres:
            owner = pwd.getpwnam("postgres")
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
            os.chown(pwfile, owner.pw_uid, owner.pw_gid)
        self._run(
            "initdb", "-D", str(self.data), "-U", USER, f"--pwfile={pwfile}", "--auth=scram-sha-256", "-E", "UTF8"
        )
        pwfile.unlink()

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bin / tool), *args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=self.root)
        if result.returncode != 0:
            raise RuntimeError(f"{tool} failed: {result.stdout[-500:]} {result.stderr[-500:]}")

    def start(self) -> None:
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c fsync=off"
        self._run(
            "pg_ctl", "start", "-w", "-t", "60", "-D", str(self.data), "-l", str(self.root / "log"), "-o", options
        )

    def stop(self) -> None:
        self._run("pg_ctl", "stop", "-w", "-m", "fast", "-D", str(self.data))

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}:{self.password}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A fresh, empty database; its URL."""
        import psycopg

        name = "t_" + secrets.token_hex(6)
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Drop a database `create_database` made, with any connection still open to it; a server
        a test left stopped keeps it until the session's data directory goes."""
        import psycopg

        name = url.rsplit("/", 1)[1]
        with contextlib.suppress(psycopg.Error), psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def close(self) -> None:
        with contextlib.suppress(RuntimeError):
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)
