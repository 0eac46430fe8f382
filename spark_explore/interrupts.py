"""Ctrl-C during a Spark job, without breaking py4j.

The driver spends its time blocked in py4j calls: the level's `count`, but also the calls that
build the next level's RDDs (`partitionBy` creates a `SimplePythonFunction` in the JVM). A
`KeyboardInterrupt` raised inside any of them leaves the gateway connection half-read; the next
py4j call (cancelling the job group, unpersisting) then fails with `Py4JNetworkError`, and the user
sees a traceback instead of "incomplete". PySpark's own handler has the same flaw.

So while an exploration runs, the first SIGINT (and SIGTERM, which `kcm.cli` routes through the
SIGINT handler) raises nothing: it sets a flag and cancels the running job group from another
thread, on another py4j connection. The blocked call returns (a cancelled job fails with a
`Py4JJavaError`), and the explorer, which checks the flag between its Spark calls, stops there
with the levels it completed. A second Ctrl-C raises `KeyboardInterrupt` at once, for a driver
that does not come back.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator


class Interrupted(Exception):
    """Raised by `DeferredInterrupt.check` once an interrupt was requested."""


class DeferredInterrupt:
    """The flag a SIGINT handler sets, and what it cancels."""

    def __init__(self, cancel: Callable[[], None]) -> None:
        self._cancel = cancel
        self.requested = threading.Event()

    def request(self) -> None:
        """The first call cancels (on a daemon thread: a signal handler must not block on py4j)."""
        if self.requested.is_set():
            raise KeyboardInterrupt
        self.requested.set()
        threading.Thread(target=self._cancel_quietly, name="kcm-cancel", daemon=True).start()

    def _cancel_quietly(self) -> None:
        with contextlib.suppress(Exception):  # the context may be stopping already; the flag is what counts
            self._cancel()

    def check(self) -> None:
        if self.requested.is_set():
            raise Interrupted

    @contextlib.contextmanager
    def installed(self) -> Iterator[DeferredInterrupt]:
        """SIGINT calls `request` while the block runs (main thread only; elsewhere the caller's
        own handling stands)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return

        def handler(signum, frame) -> None:
            self.request()

        # kcm.cli's SIGTERM handler reads this: a SIGTERM routed through a deferring handler must not raise
        handler.defers = True  # type: ignore[attr-defined]
        previous = signal.signal(signal.SIGINT, handler)
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, previous)
