"""Debian's nginx in front of server replicas on 127.0.0.1, as docs/deploy.md configures it
(tests/state/test_deploy_doc.py runs the page's own nginx block)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2

from tests.processes import free_port
from tests.system_packages import apt_install

NGINX = "/usr/sbin/nginx"


def nginx_config(root: Path, port: int, upstreams: list[str]) -> str:
    servers = "\n".join(f"        server {address} max_fails=1 fail_timeout=2s;" for address in upstreams)
    user = "user root;\n" if os.geteuid() == 0 else ""
    return f"""{user}worker_processes 1;
daemon off;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    log_format upstreams '$upstream_addr $status $request_uri';
    access_log {root}/access.log upstreams;
    client_body_temp_path {root}/body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    upstream mcp_tools {{
        hash $http_mcp_session_id consistent;
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://mcp_tools;
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_read_timeout 3600s;
            proxy_next_upstream error timeout http_503;
        }}
    }}
}}
"""


def main_config(root: Path, site: str) -> Path:
    """An nginx.conf under `root` that includes `site` in its `http` block, as Debian's includes
    /etc/nginx/conf.d/*.conf; every file nginx writes stays under `root`."""
    (root / "conf.d").mkdir(parents=True, exist_ok=True)
    (root / "conf.d" / "mcp-tools.conf").write_text(site)
    user = "user root;\n" if os.geteuid() == 0 else ""
    conf = root / "nginx.conf"
    conf.write_text(
        f"""{user}worker_processes 1;
daemon off;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    client_body_temp_path {root}/body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    include {root}/conf.d/*.conf;
}}
"""
    )
    return conf


@contextlib.contextmanager
def nginx(root: Path, upstreams: list[str]) -> Iterator[str]:
    """nginx round-robining over `upstreams` (host:port); yields its base URL once it answers."""
    problem = apt_install("nginx", NGINX)
    if problem:
        raise RuntimeError(problem)
    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    (root / "nginx.conf").write_text(nginx_config(root, port, upstreams))
    with serve_nginx(root / "nginx.conf", f"http://127.0.0.1:{port}") as base:
        yield base


@contextlib.contextmanager
def serve_nginx(conf: Path, base: str, verify: str | bool = True) -> Iterator[str]:
    """nginx on `conf` (its prefix the file's folder); yields `base` once `/healthz` answers through it."""
    process = subprocess.Popen(
        [NGINX, "-c", str(conf), "-p", str(conf.parent)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"nginx exited: {process.stderr.read().decode() if process.stderr else ''}")
            with contextlib.suppress(httpx2.HTTPError):
                httpx2.get(base + "/healthz", timeout=1, verify=verify)
                break
            if time.monotonic() > deadline:
                raise TimeoutError("nginx did not start")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)


def upstreams_used(root: Path) -> list[str]:
    """The replica each proxied request went to, in order (from nginx's access log)."""
    log = root / "access.log"
    return [line.split()[0] for line in log.read_text().splitlines()] if log.exists() else []
