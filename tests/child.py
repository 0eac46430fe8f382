"""Helpers for tests that run `kcm` as a child process."""

from __future__ import annotations

import signal


def sigint_default() -> None:
    """`preexec_fn`: the child takes Ctrl-C as a terminal delivers it. A test runner started in the
    background (`cmd &` without job control) inherits SIGINT ignored, and Python keeps an ignored
    SIGINT, so the child would never see the signal the test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
