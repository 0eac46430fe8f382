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

Like `kcm check` it writes a JSON report (`docs/fuzz-schema.json`; default OUT/report.json) and
JUnit XML (one case per invariant checked, one for the implementation's agreement with the model,
one for the model's own steps; a violation that a Finding excuses (`kcm.checker.stateful`) is a
"known Kafka 2.6 behaviour", skipped in JUnit with its Finding, its shortest walk written as
`known_<property>.*`), checked writable before the run starts, and ends
with a short summary (all it prints with `--quiet`). An interruption (Ctrl-C, SIGTERM) reports the
walks so far with the verdict "incomplete" and exits 3.

Exit codes: 0 no failure within the bounds; 1 a failure (violation or disagreement); 2 bad usage;
3 interrupted.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kcm import VERSIONS, config
from kcm.checker.engine import report
from kcm.checker.engine.contract import Always, AlwaysStep
from kcm.checker.engine.errors import EXIT_INCOMPLETE, EXIT_PASS, EXIT_VIOLATION, UsageError
from kcm.checker.engine.result import HELD, INVARIANT, KNOWN, UNREFUTED, VIOLATED, Outcome, count_text
from kcm.checker.stateful import (
    DEFAULT_EXAMPLES,
    DEFAULT_STEPS,
    MODEL_ERROR,
    REFINEMENT,
    VARIANT_EXAMPLES,
    VARIANT_STEPS,
    FuzzResult,
    FuzzStats,
    default_bounds,
    default_invariants,
    fuzz,
    program_preamble,
    write_failure,
    write_known,
)
from kcm.exploration import (
    QUIET_HELP,
    VARIANT_HELP,
    check_outputs,
    load_config,
    print_summary,
    quiet_console,
    summary_lines,
    write_reports,
)
from kcm.impl.model_alignment import ModelAlignment
from kcm.model.checking.kafka_model import KafkaModel
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
@click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The JSON report (default: OUT/report.json).")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JUnit XML (default: OUT/junit.xml).")
@click.option("--quiet", is_flag=True, help=QUIET_HELP)
def command(preset, config_file, variant, examples, steps, seed, as_kafka, out, shortest, json_file, junit_file,
            quiet) -> int:
    """Drive the model and the implementation with random action sequences; check both after each step.

    Exit codes: 0 no failure within the bounds; 1 a failure; 2 bad usage; 3 interrupted."""
    console = quiet_console(quiet)
    name, label, cfg = load_config(preset, config_file, variant)
    if cfg.variant in SYNTHETIC_VARIANTS:
        raise UsageError(f"variant {cfg.variant} is synthetic (a livelock in the model only, for "
                         "`kcm explore --liveness`); the implementation does not have it")
    if cfg.variant and not ALL_VARIANTS[cfg.variant].impl:
        raise UsageError(f"variant {cfg.variant} is in the model only (the implementation does not have it), "
                         "so lock-step fuzzing cannot compare them; explore it with `kcm explore`")
    check_outputs(out, json_file, junit_file, page=False)
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
    result: FuzzResult | None = None
    reason = ""
    try:
        with _progress(examples, quiet) as (progress, task):
            stats.on_change = _progress_updater(progress, task, examples)
            result = fuzz(cfg, examples=examples, steps=steps, seed=seed, alignment=alignment, stats=stats)
    except KeyboardInterrupt:
        reason = "interrupted"
    finally:
        stats.on_change = None
    elapsed = time.perf_counter() - started
    rate = stats.steps / elapsed if elapsed > 0 else 0.0
    counts = (f"{stats.examples:,} examples, {stats.steps:,} steps ({stats.stutters:,} stuttering) "
              f"in {elapsed:.1f} s, {rate:,.0f} steps/s")
    failure = result.failure if result is not None else None
    paths: dict[str, Path] = {}
    if result is None:
        console.print(f"Interrupted: {counts}.")
    elif failure is None:
        console.print(f"No failure: {counts}.")
    else:
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
    known_files: dict[str, Path] = {}
    if result is not None and result.known:
        try:
            known_files = write_known(result, out, preset=name)
        except OSError as exc:
            raise UsageError(f"cannot write the trace under --out {out}: {exc.strerror or exc}") from None
    outcomes = fuzz_outcomes(cfg, checks, failure, complete=result is not None,
                             known={n: len(t) - 1 for n, t in result.known.items()} if result is not None else {})
    doc = fuzz_report(outcomes, failure, paths, known_files, preset=name, variant=cfg.variant, seed=seed,
                      bounds=(examples, steps), as_kafka=as_kafka, stats=stats, duration_s=elapsed, reason=reason)
    junit = ET.Element("testsuites", name=f"kcm fuzz {name}")
    report.suite(junit, "fuzz", [report.junit_case(o) for o in outcomes])
    json_path, junit_path = write_reports(doc, None, [], name=name, out=out, json_file=json_file,
                                          junit_file=junit_file, junit_xml=junit)
    print_summary(summary_lines(doc, "fuzz", label, [json_path, junit_path], extra=(counts,)), quiet=quiet)
    return {"pass": EXIT_PASS, "violation": EXIT_VIOLATION}.get(doc["verdict"], EXIT_INCOMPLETE)


def fuzz_outcomes(cfg, checks: tuple[str, ...] | None, failure, *, complete: bool,
                  known: Mapping[str, int] | None = None) -> tuple[Outcome, ...]:
    """One outcome per check of the run: each invariant checked, then the implementation's agreement
    with the model and the model's own steps. `known`: the properties whose violations a Finding
    excused in the walks (`FuzzResult.known`), each with its shortest walk's length: "known Kafka
    2.6 behaviour", with the Finding, unless the property also failed. A check a walk did not fail
    "held" within the run's bounds ("not violated (incomplete)" if it was interrupted)."""
    model = KafkaModel(cfg, symmetry=False)
    invariants = [p for p in model.properties() if isinstance(p, (Always, AlwaysStep))]
    listed = model.known_violations()
    known = known or {}
    names = [p.name for p in invariants if (checks is None or p.name in checks)]
    kinds = {p.name: getattr(p, "kind", "safety") for p in invariants} | {REFINEMENT: "refinement",
                                                                           MODEL_ERROR: "error"}
    out = []
    for n in [*names, REFINEMENT, MODEL_ERROR]:
        if failure is not None and failure.prop == n:
            out.append(Outcome(n, INVARIANT, kinds[n], VIOLATED, failure.length))
        elif n in known:
            out.append(Outcome(n, INVARIANT, kinds[n], KNOWN, known[n], finding=listed[n].reason,
                               known_as=model.known_as))
        else:
            out.append(Outcome(n, INVARIANT, kinds[n], HELD if complete else UNREFUTED))
    return tuple(out)


def fuzz_report(outcomes: tuple[Outcome, ...], failure, paths: dict[str, Path], known_files: Mapping[str, Path],
                *, preset: str, variant: str,
                seed: int, bounds: tuple[int, int], as_kafka: bool, stats: FuzzStats, duration_s: float,
                reason: str) -> dict[str, Any]:
    """The JSON report of `kcm fuzz` (`docs/fuzz-schema.json`)."""
    verdict = "violation" if failure is not None else "incomplete" if reason else "pass"
    trace = str(paths["itf"]) if paths else None
    return {
        "schema_version": report.SCHEMA_VERSION, **VERSIONS, "command": "fuzz", "verdict": verdict,
        "reason": reason, "preset": preset, "variant": variant, "seed": seed,
        "examples": bounds[0], "steps": bounds[1], "as_kafka": as_kafka,
        "run": {"examples": stats.examples, "steps": stats.steps, "stutters": stats.stutters,
                "duration_s": round(duration_s, 3)},
        "failure": None if failure is None else {
            "property": failure.prop, "kind": failure.kind, "length": failure.length,
            "first_example": stats.first_example, "first_length": stats.first, "details": list(failure.details),
            "trace_file": trace, "program_file": str(paths["program"]) if paths else None},
        "outcomes": [report.outcome_entry(o, ({failure.prop: trace} if failure is not None and trace else {})
                                          | {f"known {n}": str(p) for n, p in known_files.items()})
                     for o in outcomes],
        "summary": count_text(outcomes),
    }


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

    def __init__(self, total: int, quiet: bool = False) -> None:
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("examples · {task.fields[steps]:,} steps"), TimeElapsedColumn(),
                                 console=Console(stderr=True), transient=True, disable=quiet)
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
