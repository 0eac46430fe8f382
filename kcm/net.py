"""Whether a server answers at all: a TCP connection, before a client library's own retries
(Spark's for a minute, kazoo's forever) hide the cause behind a timeout."""

from __future__ import annotations

import socket


def refusal(host: str, port: int, timeout_s: float) -> str | None:
    """None if `host:port` accepts a TCP connection within `timeout_s`, else why not, in a few words."""
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
        return None
    except OSError as exc:
        return exc.strerror or exc.__class__.__name__
