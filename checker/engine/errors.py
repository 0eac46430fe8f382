"""The errors the command line turns into exit codes, one clear line each.

Exit codes: 0 all hold; 1 a violation; 2 bad usage, config or input; 3 incomplete (a bound, a
timeout or an interruption).
"""

from __future__ import annotations

import os
import tempfile
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
    """A folder that cannot be written is a usage error before a run, not a traceback after it.

    The nearest existing ancestor of `out` must be a directory; then the folder is created and a
    file is written and removed in it: permission bits do not tell (root may write anywhere by
    them, yet not under /proc; a read-only mount says nothing in its bits)."""
    probe = Path(out).absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise UsageError(f"{option} {out}: {probe} is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {out}: {probe} is not writable")
    try:
        Path(out).mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".kcm-probe-"):
            pass
    except OSError as exc:
        raise UsageError(f"{option} {out}: cannot write there ({exc.strerror or exc.__class__.__name__})") from None


def check_writable_file(path: Path | None, option: str) -> None:
    """`check_writable_dir` for the folder of an output file given on the command line, and the
    file itself must not be a folder."""
    if path is None:
        return
    if Path(path).is_dir():
        raise UsageError(f"{option} {path}: is a directory")
    try:
        check_writable_dir(Path(path).absolute().parent, option)
    except UsageError as exc:  # name the file the user gave, not its folder
        folder = f"{option} {Path(path).absolute().parent}:"
        raise UsageError(str(exc).replace(folder, f"{option} {path}:", 1)) from None


def write_or_fail(write, path: Path, option: str):
    """Call `write()`, turning an OSError (a disk that filled up, a folder removed under the run)
    into one line naming the option and the file."""
    try:
        return write()
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write ({exc.strerror or exc.__class__.__name__})") from None
