"""`kcm fuzz`: lock-step stateful testing of the implementation against the model, with Hypothesis.

Random action sequences (faults and admin operations within the config's bounds) drive the model
and the stepped implementation together (`kcm.checker.stateful`); after every step the model's
invariants are checked and the implementation's abstraction is compared with the model state. A
failure is shrunk by Hypothesis, printed as a runnable program and written as an ITF trace (with
text, diagram and replay script) under `--out`.

With `--variant` (or a variant preset) only the invariant the variant must break is checked, so
the run ends with the expected violation; without a preset, `--variant Vn` uses the variant's own
preset (`kcm variants`). `--as-kafka` runs the implementation as Kafka 2.6 (every
`ModelAlignment` switch off), so that the fuzzer reports where the model still differs from Kafka.

Exit codes: 0 no failure within the bounds; 1 a failure (violation or disagreement); 2 bad usage.
"""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kcm import config
from kcm.checker.stateful import FuzzStats, default_invariants, fuzz, program_preamble, write_failure
from kcm.errors import EXIT_PASS, EXIT_VIOLATION, UsageError
from kcm.exploration import with_variant
from kcm.impl.model_alignment import ModelAlignment
from kcm.model.variants import VARIANTS


@click.command(name="fuzz")
@click.option("--preset", default=None, help=f"Preset name (default: {config.DEFAULT_PRESET}, or the variant's).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML config file instead of a preset.")
@click.option("--variant", default=None, metavar="NAME", help="A historical bug to put back (see `kcm variants`).")
@click.option("--examples", type=click.IntRange(min=1), default=100, show_default=True,
              help="Random action sequences to try (Hypothesis max_examples).")
@click.option("--steps", type=click.IntRange(min=1), default=50, show_default=True,
              help="Actions per sequence at most (Hypothesis stateful_step_count).")
@click.option("--seed", type=int, default=0, show_default=True, help="The seed: one seed, one run.")
@click.option("--as-kafka", is_flag=True,
              help="Run the implementation as Kafka 2.6 (every ModelAlignment switch off): report the model's "
                   "remaining disagreements.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("kcm-out"), show_default=True,
              help="Where the failing trace goes.")
def command(preset, config_file, variant, examples, steps, seed, as_kafka, out) -> int:
    """Drive the model and the implementation with random action sequences; check both after each step.

    Exit codes: 0 no failure within the bounds; 1 a failure; 2 bad usage."""
    console = Console(highlight=False, soft_wrap=True)
    if variant and not preset and not config_file:
        preset = _variant_preset(variant)
    name, cfg = config.load(preset, config_file)
    cfg = with_variant(cfg, variant)
    checks = default_invariants(cfg)
    alignment = ModelAlignment() if as_kafka else None
    console.print(f"kcm fuzz · preset {name}{' · variant ' + cfg.variant if cfg.variant else ''} · "
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
    counts = (f"{stats.examples} examples, {stats.steps} steps ({stats.stutters} stuttering) "
              f"in {elapsed:.1f} s, {rate:,.0f} steps/s")
    if result.ok:
        console.print(f"No failure: {counts}.")
        return EXIT_PASS
    failure = result.failure
    console.print(f"[bold red]Failure[/]: {_what(failure)} after {failure.length} steps "
                  f"(first failing run: {stats.first} steps; shrunk by Hypothesis); {counts}.")
    console.print("\nHypothesis's failing program (runnable as is):\n")
    console.print("\n".join(program_preamble(result) + result.program), markup=False)
    console.print("\nThe steps and what failed:\n")
    console.print(str(failure), markup=False)
    paths = write_failure(result, out, preset=name)
    console.print(f"\nTrace: {paths['itf']} (kcm trace show {paths['itf']}), text {paths['text']}, "
                  f"diagram {paths['dot']}, replay {paths['replay']}, program {paths['program']}")
    return EXIT_VIOLATION


def _variant_preset(variant: str) -> str:
    by_jira = {v.jira: v.name for v in VARIANTS.values()}
    key = by_jira.get(variant.upper(), variant.upper())
    if key not in VARIANTS:
        raise UsageError(f"unknown variant '{variant}'; choose one of {', '.join(VARIANTS)} (see 'kcm variants')")
    return VARIANTS[key].preset


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
