"""The HTTP shell of `kcm serve`: the standard library's threading server, on loopback only.

Routes: `/` the starting points, `/state?start=...&path=...` a state (`kcm.serve.paths`),
anything else 404. An address that names no state is a page of one line with status 404 (400 when
malformed), never a traceback. The model's caches (its last expanded state, the judge's last
answers) are shared by every request, so pages are computed one at a time under one lock; the
threads only keep a slow client from holding up the others.

Only a loopback address is served (`check_host`): the page exposes no data beyond the model, but
it is a local tool, and nothing on the machine's other interfaces should reach it.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from kcm.checker.engine.errors import UsageError
from kcm.serve.origins import Origins
from kcm.serve.pages import index_page, message_page, state_page
from kcm.serve.paths import BadAddress, parse, walk


def check_host(host: str) -> None:
    """`host` must be a loopback address (127.0.0.0/8, ::1) or `localhost`; else one `UsageError` line."""
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise UsageError(f"--host {host}: kcm serve listens on a loopback address only (127.0.0.1, ::1 or localhost)")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], origins: Origins) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)
        self.origins = origins
        self.lock = threading.Lock()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "kcm-serve"

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        url = urlsplit(self.path)
        try:
            with self.server.lock:
                if url.path == "/":
                    status, text = HTTPStatus.OK, index_page(self.server.origins)
                elif url.path == "/state":
                    origins = self.server.origins
                    steps = walk(origins.model, origins.inits, origins.trace, parse(url.query))
                    status, text = HTTPStatus.OK, state_page(origins, steps)
                else:
                    status, text = HTTPStatus.NOT_FOUND, message_page(404, f"no page at {url.path}")
        except BadAddress as exc:
            status, text = HTTPStatus(exc.status), message_page(exc.status, str(exc))
        except Exception as exc:  # a bug must not end the server: one line for the reader and the log
            print(f"kcm serve: {self.path}: {exc.__class__.__name__}: {exc}", file=sys.stderr)
            status, text = HTTPStatus.INTERNAL_SERVER_ERROR, message_page(500, f"{exc.__class__.__name__}: {exc}")
        body = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
        """Requests are not logged: stdout carries the URL line only."""


def make_server(host: str, port: int, origins: Origins) -> _Server:
    """A server bound to `host:port` (0: a free port); a port in use is one `UsageError` line."""
    check_host(host)
    try:
        return _Server((host, port), origins)
    except OSError as exc:
        raise UsageError(f"--port {port}: cannot listen on {host}:{port} ({exc.strerror or exc})") from None


def url_of(server: _Server) -> str:
    host, port = server.socket.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"
