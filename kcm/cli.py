"""The command line: a thin shell over the model, the checkers and the implementation.

Each command lives in its own module under `kcm.commands` and is registered in `COMMANDS`; only
commands that work are listed. Errors are one line on stderr and an exit code (`kcm.checker.engine.errors`):
never a traceback.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
from typing import NoReturn

import click

from kcm import __version__, compiled
from kcm.checker.engine.errors import EXIT_INCOMPLETE, EXIT_USAGE, KcmError
from kcm.commands import check, diagram, explore, fuzz, mutate, prove, serve, simulate, sweep, trace, variants
from kcm.commands import list as list_command

COMMANDS = (check.command, explore.command, prove.command, variants.command, list_command.command, trace.command,
            diagram.command, simulate.command, fuzz.command, mutate.command, serve.command, sweep.command)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="kcm")
def cli() -> None:
    """kcm: a formal model, a reference implementation and a model checker of the Kafka 2.6
    ZooKeeper-era controller.

    Exit codes: 0 all properties hold; 1 a violation was found; 2 bad usage, config or input;
    3 incomplete (a bound, a timeout or an interruption).
    """


for _command in COMMANDS:
    cli.add_command(_command)


def _fail(message: str, code: int) -> int:
    click.echo(f"kcm: error: {message}", err=True)
    return code


def _missing_command(ctx: click.Context | None) -> str:
    """The line for a group called without its subcommand: what it takes, and where the help is."""
    group = ctx.command if ctx is not None else cli
    names = group.list_commands(ctx) if ctx is not None and isinstance(group, click.Group) else []
    path = ctx.command_path if ctx is not None else "kcm"
    choices = f"; choose one of {', '.join(names)}" if names else ""
    return f"missing command{choices} (see '{path} --help')"


def _terminate_like_interrupt(signum, frame) -> None:
    """SIGTERM (what a CI timeout sends) ends a run as Ctrl-C does: through the SIGINT handler in
    force (PySpark's cancels the running jobs first), so the run stops with verdict "incomplete",
    writes its reports and exits 3."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    if getattr(handler, "defers", False):  # a Spark exploration stops between its py4j calls
        return                             # (kcm.spark_explore.interrupts)
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns (and, as a console script, exits with) the exit code."""
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate_like_interrupt) if main_thread else None
    try:
        return _main(argv)
    finally:
        if main_thread:   # as it was: main() also runs inside other programs (the tests)
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _main(argv: list[str] | None) -> int:
    try:
        result = cli.main(args=argv, prog_name="kcm", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:  # `kcm`, `kcm trace` alone: a usage error like any other
        return _fail(_missing_command(exc.ctx), EXIT_USAGE)
    except click.UsageError as exc:
        hint = (f" (see 'kcm {exc.ctx.command_path.partition(' ')[2]} --help')".replace("kcm  ", "kcm ")
                if exc.ctx else "")
        return _fail(f"{exc.format_message()}{hint}", EXIT_USAGE)
    except click.ClickException as exc:
        return _fail(exc.format_message(), EXIT_USAGE)
    except click.exceptions.Abort:
        return _fail("interrupted", EXIT_INCOMPLETE)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INCOMPLETE)
    except KcmError as exc:
        return _fail(str(exc), exc.exit_code)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    return result if isinstance(result, int) else 0


def entry() -> None:
    if sys.argv[1:2] == ["mutate"] and compiled.compiled_among(list(sys.modules)):
        # Mutation testing traces the model's source lines (kcm/compiled.py): start again from source.
        os.execve(sys.executable, [sys.executable, "-m", "kcm.cli", *sys.argv[1:]],
                  {**os.environ, compiled.PURE_ENV: "1"})
    exit_without_teardown(main())


def exit_without_teardown(code: int) -> NoReturn:
    """End the process with `code` as `sys.exit` would, without tearing the interpreter down.

    After a large exploration the heap holds millions of objects (the visited set, the model's
    fingerprint, renaming and codec caches). Finalizing the interpreter frees them one by one and
    runs a last collection over them, which takes seconds (docs/benchmarks.md, "Leaving the
    process"), for memory the OS takes back at once anyway.
    Once `main` has returned, every report is written (each through `with` or `Path.write_text`),
    so what a normal exit still does that matters is done here: the exit handlers run (PySpark's
    stop the JVM; logging flushes) and the standard streams are flushed; then `os._exit` ends the
    process. A non-daemon thread still running is one a normal exit would wait for: then the exit
    is the normal one."""
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)
    atexit._run_exitfuncs()  # what Py_Finalize would call first; CPython's, stable since 3.0
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe (`kcm ... | head`): nothing left to say
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    entry()
