"""Exploring a config from the command line: the shared part of `kcm explore` and `kcm check`.

It builds the model, runs the explorer with a progress display, writes every counterexample
(readable text, ITF, sequence diagram, replay script) and the reports, and prints TLC's summary
with the coverage. The printing goes through one rich console; progress goes to stderr so that
stdout stays a clean log.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from kcm.checker.bfs import explore
from kcm.checker.liveness import LIVENESS_PROPERTIES, check_liveness
from kcm.checker.result import VIOLATION, CheckResult
from kcm.checker.traces import write_counterexample
from kcm.errors import EXIT_PASS, EXIT_VIOLATION, UsageError
from kcm.model.config import ConfigError, ModelConfig
from kcm.model.spec import KafkaModel, config_fields
from kcm.model.variants import ALL_VARIANTS

MODEL_FACTORY = "kcm.model.spec:model_for"


def with_variant(cfg: ModelConfig, variant: str | None) -> ModelConfig:
    """`cfg` with `variant` (a name from `kcm variants`, or its JIRA key) switched on."""
    if not variant:
        return cfg
    name = variant.upper()
    by_jira = {v.jira: v.name for v in ALL_VARIANTS.values() if v.jira != "synthetic"}
    name = by_jira.get(name, name)
    if name not in ALL_VARIANTS:
        raise UsageError(f"unknown variant '{variant}'; choose one of {', '.join(ALL_VARIANTS)} (see 'kcm variants')")
    try:
        return ModelConfig.from_mapping({**config_fields(cfg), "variant": name}, where="--variant")
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


ENGINES = ("local", "spark")


def run_exploration(console: Console, name: str, cfg: ModelConfig, *, symmetry: bool = True,
                    invariants: tuple[str, ...] = (), max_depth: int | None = None,
                    out: Path | None = None, progress_every: float = 5.0, engine: str = "local",
                    master: str | None = None, checkpoint: Path | None = None,
                    resume: Path | None = None, liveness: bool = False) -> tuple[CheckResult, dict[str, str]]:
    """Explore `cfg` with the sequential explorer (`local`) or on Spark; returns the result and
    {violated property: ITF file written}.

    With `liveness` the sequential explorer keeps the explored graph, with symmetry off and
    without stopping at a safety violation (it needs the whole graph), and `kcm.checker.liveness`
    checks it: its violations (lassos) join the result's, its summary is `result.extra["liveness"]`
    and the graph `result.extra["graph"]`."""
    if liveness and engine == "spark":
        raise UsageError("--liveness runs on the sequential explorer only; drop --engine spark")
    if liveness:
        symmetry = False
    model = KafkaModel(cfg, symmetry=symmetry)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    last = [0.0]

    def progress(p) -> None:
        now = time.monotonic()
        if now - last[0] >= progress_every:  # TLC prints at most every interval
            last[0] = now
            err.print(p.line())

    started = time.perf_counter()
    safety = [n for n in invariants if n not in LIVENESS_PROPERTIES]
    options = dict(symmetry=symmetry, max_depth=max_depth,
                   properties=safety if safety or invariants else None,
                   progress=progress, progress_interval=progress_every)
    if liveness:
        options.update(keep_graph=True, stop_on_violation=False)
    if engine == "spark":
        result = _explore_on_spark(console, cfg, symmetry, options, master, checkpoint, resume)
    else:
        if checkpoint or resume:
            raise UsageError("--checkpoint and --resume need --engine spark")
        result = explore(model, **options)
    live = None
    if liveness:
        live = check_liveness(model, result.extra.get("graph"))
        result = replace(result, violations=result.violations + live.violations,
                         verdict=VIOLATION if live.violations else result.verdict,
                         checked=result.checked + LIVENESS_PROPERTIES, extra={**result.extra, "liveness": live})
    files: dict[str, str] = {}
    for line in result.summary_lines():
        console.print(line)
    if live is not None:
        for line in live.summary_lines():
            console.print(line)
    cov = result.coverage
    taken = len([e for e in cov.edges_taken if e not in cov.outside_universe])
    console.print(f"Table coverage: {taken} of {cov.edges_total} edges taken"
                  + (f"; untaken: {', '.join(' '.join(map(str, e)) for e in cov.untaken)}" if cov.untaken else ""))
    if cov.outside_universe:
        console.print("Invalid transitions requested (logged and skipped, as Kafka 2.6 does): "
                      + ", ".join(" ".join(map(str, e)) for e in cov.outside_universe))
    if out is not None:
        for v in result.violations:
            if v.trace is None:
                continue
            paths = write_counterexample(model, v.trace, out, invariant=v.name, kind=v.kind,
                                         config={"preset": name, **config_fields(cfg)},
                                         model_factory=MODEL_FACTORY,
                                         model_args={"symmetry": symmetry, **config_fields(cfg)},
                                         source=f"kcm explore {name}", loop=v.loop)
            files[v.name] = str(paths["itf"])
            shape = (f"{v.trace_length} steps" if v.loop is None else
                     f"lasso: {v.loop} steps, then a cycle of {v.trace_length - v.loop} back to state {v.loop}")
            console.print(f"  counterexample for {v.name}: {paths['text']} ({shape}), "
                          f"ITF {paths['itf']}, diagram {paths['dot']}, replay {paths.get('replay')}")
        for v in result.known_violations:
            # Kafka 2.6's own behaviour (kcm.model.findings): written beside the others so that a
            # reviewer can read and replay it; it does not fail the verdict.
            if v.trace is None:
                continue
            paths = write_counterexample(model, v.trace, out, invariant=v.name, kind=v.kind, stem=f"known_{v.name}",
                                         config={"preset": name, **config_fields(cfg)},
                                         model_factory=MODEL_FACTORY,
                                         model_args={"symmetry": symmetry, **config_fields(cfg)},
                                         source=f"kcm explore {name}",
                                         description=f"known Kafka 2.6 behaviour ({result.known_reasons.get(v.name, '')})")
            files[f"known {v.name}"] = str(paths["itf"])
            console.print(f"  known 2.6 behaviour {v.name}: {paths['text']} ({v.trace_length} steps)")
        for k in live.known if live is not None else ():
            paths = write_counterexample(model, k.trace, out, invariant=f"known {k.known}", kind="liveness",
                                         stem=f"known_{k.known}", config={"preset": name, **config_fields(cfg)},
                                         model_factory=MODEL_FACTORY,
                                         model_args={"symmetry": symmetry, **config_fields(cfg)},
                                         source=f"kcm explore --liveness {name}", loop=k.loop,
                                         description=f"known Kafka 2.6 loop {k.known} ({k.finding})")
            files[f"known {k.known}"] = str(paths["itf"])
            console.print(f"  known loop {k.known} ({k.finding}): {paths['text']}")
    console.print(f"Explored in {time.perf_counter() - started:.1f} s.")
    return result, files


def start_spark(master: str | None, checkpoint: Path | None = None):
    """A quiet Spark session; a master that cannot be reached is one clear line (exit 2)."""
    from kcm.spark_explore import spark_session

    try:
        return spark_session(master, checkpoint_dir=str(checkpoint) if checkpoint else None)
    except Exception as exc:  # py4j/JVM errors have no common base class worth naming here
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"cannot start Spark with master '{master or 'local[*]'}': {first}") from None


def _explore_on_spark(console: Console, cfg: ModelConfig, symmetry: bool, options: dict, master: str | None,
                      checkpoint: Path | None, resume: Path | None) -> CheckResult:
    from kcm.spark_explore import ModelSpec, SparkOptions, explore_spark

    if resume is not None and not Path(resume).is_dir():
        raise UsageError(f"--resume: '{resume}' is not a checkpoint folder")
    spark = start_spark(master, checkpoint)
    try:
        console.print(f"Spark {spark.version} · master {spark.sparkContext.master} · "
                      f"parallelism {spark.sparkContext.defaultParallelism}")
        opts = SparkOptions(**options, checkpoint_dir=str(checkpoint) if checkpoint else None,
                            resume_from=str(resume) if resume else None)
        result = explore_spark(spark, ModelSpec.kafka(cfg, symmetry=symmetry), opts)
    finally:
        spark.stop()
    levels = result.extra.get("spark", {}).get("levels", [])
    if levels:
        shuffled = sum(x["shuffle_write_bytes"] for x in levels)
        slowest = max(levels, key=lambda x: x["seconds"])
        console.print(f"Spark: {len(levels)} levels, {shuffled / 2**20:.1f} MiB shuffled, "
                      f"{sum(x['seconds'] for x in levels) / len(levels):.2f} s per level on average "
                      f"(slowest: level {slowest['level']}, {slowest['seconds']:.1f} s)")
    return result


def run_simulation(console: Console, name: str, cfg: ModelConfig, *, runs: int, depth: int, seed: int,
                   master: str | None, invariants: tuple[str, ...], out: Path) -> int:
    """`kcm explore --simulate`: random walks in Spark executors; the first violation as ITF."""
    from kcm.spark_explore import ModelSpec, simulate_spark

    spark = start_spark(master)
    try:
        result = simulate_spark(spark, ModelSpec.kafka(cfg), runs, depth, seed,
                                properties=list(invariants) or None)
    finally:
        spark.stop()
    for line in result.summary_lines():
        console.print(line)
    cov = result.coverage
    taken = len([e for e in cov.edges_taken if e not in cov.outside_universe])
    console.print(f"Table coverage: {taken} of {cov.edges_total} edges taken")
    if result.violation is None:
        return EXIT_PASS
    v = result.violation
    model = KafkaModel(cfg)
    paths = write_counterexample(model, v.trace, out, invariant=v.name, kind=v.kind,
                                 config={"preset": name, **config_fields(cfg)}, model_factory=MODEL_FACTORY,
                                 model_args={"symmetry": True, **config_fields(cfg)},
                                 source=f"kcm explore --simulate {name}")
    console.print(f"  counterexample: {paths['text']} ({v.trace_length} steps), ITF {paths['itf']}")
    return EXIT_VIOLATION
