"""`kcm fuzz`: lock-step stateful testing of the implementation against the model, with Hypothesis.

Random action sequences (faults and admin operations within the config's bounds) drive the model
and the stepped implementation together (`kcm.checker.stateful`); after every step the model's
invariants are checked and the implementation's abstraction is compared with the model state. A
failure is shrunk by Hypothesis, printed as a runnable program and written as an ITF trace (with
text, diagram and replay script) under `--out`.

With `--variant` (or a variant preset) only the invariant the variant must break is checked, so
the run ends with the expected violation; without a preset, `--variant Vn` uses the variant's own
preset (`kcm variants`), and the bounds default to `VARIANT_EXAMPLES` × `VARIANT_STEPS`, within
which every variant is found from seed 0. `--as-kafka` runs the implementation as Kafka 2.6 (every
`ModelAlignment` switch off), so that the fuzzer reports where the model still differs from Kafka.
`--shortest` runs the explorer after a violated invariant and prints its shortest counterexample's
length beside the shrunk one.

Exit codes: 0 no failure within the bounds; 1 a failure (violation or disagreement); 2 bad usage.
"""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kcm import config
from kcm.checker.engine.errors import EXIT_PASS, EXIT_VIOLATION, UsageError, check_writable_dir
from kcm.checker.stateful import (
    DEFAULT_EXAMPLES,
    DEFAULT_STEPS,
    VARIANT_EXAMPLES,
    VARIANT_STEPS,
    FuzzStats,
    default_bounds,
    default_invariants,
    fuzz,
    program_preamble,
    write_failure,
)
from kcm.exploration import VARIANT_HELP, load_config
from kcm.impl.model_alignment import ModelAlignment
from kcm.model.variants import ALL_VARIANTS, SYNTHETIC_VARIANTS


@click.command(name="fuzz")
@click.option("--preset", default=None, help=f"Preset name (default: {config.DEFAULT_PRESET}, or the variant's).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML config file instead of a preset.")
@click.option("--variant", default=None, metavar="NAME", help=VARIANT_HELP)
@click.option("--examples", type=click.IntRange(min=1), default=None,
              help=f"Random action sequences to try (Hypothesis max_examples) [default: {DEFAULT_EXAMPLES}; "
                   f"{VARIANT_EXAMPLES} with a variant].")
@click.option("--steps", type=click.IntRange(min=1), default=None,
              help=f"Actions per sequence at most (Hypothesis stateful_step_count) [default: {DEFAULT_STEPS}; "
                   f"{VARIANT_STEPS} with a variant].")
@click.option("--seed", type=int, default=0, show_default=True, help="The seed: one seed, one run.")
@click.option("--as-kafka", is_flag=True,
              help="Run the implementation as Kafka 2.6 (every ModelAlignment switch off): report the model's "
                   "remaining disagreements.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("kcm-out"), show_default=True,
              help="Where the failing trace goes.")
@click.option("--shortest", is_flag=True,
              help="On a violated invariant, also run the explorer on the same config (to the shrunk trace's "
                   "depth) and print its shortest counterexample's length beside the shrunk one.")
def command(preset, config_file, variant, examples, steps, seed, as_kafka, out, shortest) -> int:
    """Drive the model and the implementation with random action sequences; check both after each step.

    Exit codes: 0 no failure within the bounds; 1 a failure; 2 bad usage."""
    console = Console(highlight=False, soft_wrap=True)
    name, label, cfg = load_config(preset, config_file, variant)
    if cfg.variant in SYNTHETIC_VARIANTS:
        raise UsageError(f"variant {cfg.variant} is synthetic (a livelock in the model only, for "
                         "`kcm explore --liveness`); the implementation does not have it")
    if cfg.variant and not ALL_VARIANTS[cfg.variant].impl:
        raise UsageError(f"variant {cfg.variant} is in the model only (the implementation does not have it), "
                         "so lock-step fuzzing cannot compare them; explore it with `kcm explore`")
    check_writable_dir(out)
    bound_examples, bound_steps = default_bounds(cfg)
    examples = bound_examples if examples is None else examples
    steps = bound_steps if steps is None else steps
    checks = default_invariants(cfg)
    alignment = ModelAlignment() if as_kafka else None
    console.print(f"kcm fuzz · {label}{' · variant ' + cfg.variant if cfg.variant else ''} · "
                  f"checks {', '.join(checks) if checks else 'every invariant'} and the implementation"
                  f"{' (as Kafka 2.6)' if as_kafka else ''} · seed {seed} · {examples} examples × {steps} steps")
    stats = FuzzStats()
    started = time.perf_counter()
    with _progress(examples) as (progress, task):
        stats.on_change = _progress_updater(progress, task, examples)
        result = fuzz(cfg, examples=examples, steps=steps, seed=seed, alignment=alignment, stats=stats)
        stats.on_change = None
    elapsed = time.perf_counter() - started
    rate = stats.steps / elapsed if elapsed > 0 else 0.0
    counts = (f"{stats.examples:,} examples, {stats.steps:,} steps ({stats.stutters:,} stuttering) "
              f"in {elapsed:.1f} s, {rate:,.0f} steps/s")
    if result.ok:
        console.print(f"No failure: {counts}.")
        return EXIT_PASS
    failure = result.failure
    console.print(f"[bold red]Failure[/]: {_what(failure)} after {failure.length} steps, shrunk by Hypothesis "
                  f"from the first failing walk (example {stats.first_example:,} of {examples:,}, "
                  f"{stats.first} steps); {counts} (shrinking runs included).")
    console.print("\nHypothesis's failing program (runnable as is):\n")
    console.print("\n".join(program_preamble(result) + result.program), markup=False)
    console.print("\nThe steps and what failed:\n")
    console.print(str(failure), markup=False)
    try:
        paths = write_failure(result, out, preset=name)
    except OSError as exc:
        raise UsageError(f"cannot write the trace under --out {out}: {exc.strerror or exc}") from None
    console.print(f"\nTrace: {paths['itf']} (kcm trace show {paths['itf']}), text {paths['text']}, "
                  f"diagram {paths['dot']}, replay {paths['replay']}, program {paths['program']}")
    if shortest:  # last: on a large config it takes as long as exploring it to that depth
        console.print(_beside_the_explorer(cfg, failure))
    return EXIT_VIOLATION


def _beside_the_explorer(cfg, failure) -> str:
    """The explorer's shortest counterexample for the failed invariant, beside the shrunk length.
    Breadth-first to the shrunk trace's depth: the shortest is no longer, so that bound suffices."""
    from kcm.checker.engine.bfs import explore
    from kcm.model.checking.kafka_model import KafkaModel

    if failure.kind in ("refinement", "error"):
        return ("\nThe explorer checks the model alone: it has no counterexample for "
                f"{failure.prop} to compare with.")
    started = time.perf_counter()
    try:
        result = explore(KafkaModel(cfg), properties=[failure.prop], max_depth=failure.length)
    except KeyboardInterrupt:  # the failure stands, and its files are written: exit 1 all the same
        return f"\nThe explorer was interrupted after {time.perf_counter() - started:.1f} s."
    found = result.violation(failure.prop)
    took = time.perf_counter() - started
    if (found is None or found.trace_length is None) and result.reason == "interrupted":
        return f"\nThe explorer was interrupted after {took:.1f} s."
    if found is None or found.trace_length is None:
        return (f"\nThe explorer found no violation of {failure.prop} within {failure.length} steps "
                f"({took:.1f} s): the fuzzer's trace and the explorer disagree; please report it.")
    return (f"\nShrunk by Hypothesis: {failure.length} steps; the explorer's shortest: {found.trace_length} steps "
            f"({result.stats.distinct:,} distinct states, {took:.1f} s).")


def _what(failure) -> str:
    if failure.kind == "refinement":
        return "the implementation differs from the model"
    if failure.kind == "error":
        return "the model raised an exception"
    return f"{failure.kind} invariant {failure.prop} is violated"


class _progress:
    """A rich progress bar on stderr: examples run out of `--examples`, steps, and the phase."""

    def __init__(self, total: int) -> None:
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("examples · {task.fields[steps]:,} steps"), TimeElapsedColumn(),
                                 console=Console(stderr=True), transient=True)
        self.total = total

    def __enter__(self):
        self.progress.start()
        task = self.progress.add_task("generating", total=self.total, steps=0)
        return self.progress, task

    def __exit__(self, *exc) -> None:
        self.progress.stop()


def _progress_updater(progress: Progress, task, total: int):
    """`FuzzStats.on_change`, throttled: redrawing on every step would cost more than the step."""
    last = [0.0]

    def update(stats: FuzzStats) -> None:
        now = time.monotonic()
        if now - last[0] < 0.1:
            return
        last[0] = now
        if stats.failures:
            # Hypothesis stops generating at the first failure and shrinks it: every further
            # example is a shrinking attempt, so the bar is full and the phase says so.
            progress.update(task, completed=total, steps=stats.steps,
                            description=f"shrinking (shortest so far: {stats.shortest} steps)")
        else:
            progress.update(task, completed=min(stats.examples, total), steps=stats.steps)

    return update
