"""The errors the command line turns into exit codes, one clear line each (DESIGN.md §4, §7).

Exit codes: 0 all hold; 1 a violation; 2 bad usage, config or input; 3 incomplete (a bound, a
timeout or an interruption).
"""

from __future__ import annotations

import os
from pathlib import Path

EXIT_PASS = 0
EXIT_VIOLATION = 1
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3


class KcmError(Exception):
    """An error the user can fix; the CLI prints its message on one line and exits with `exit_code`."""

    exit_code = EXIT_USAGE


class UsageError(KcmError):
    """A bad option, preset, config file or input file."""


class Incomplete(KcmError):
    """The work stopped before it was done (a bound, a timeout, an interruption)."""

    exit_code = EXIT_INCOMPLETE


def check_writable_dir(out: Path, option: str = "--out") -> None:
    """A folder that cannot be written is a usage error before a run, not a traceback after it:
    the nearest existing ancestor of `out` must be a writable directory."""
    probe = Path(out).absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise UsageError(f"{option} {out}: {probe} is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {out}: {probe} is not writable")
