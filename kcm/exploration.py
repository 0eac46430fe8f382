"""Exploring a config from the command line: the shared part of `kcm explore` and `kcm check`.

It builds the model, runs the explorer with a progress display, writes every counterexample
(readable text, ITF, sequence diagram, replay script) and the reports, and prints TLC's summary
with the coverage. The printing goes through one rich console; progress goes to stderr so that
stdout stays a clean log.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from rich.console import Console

from kcm.checker import report
from kcm.checker.bfs import explore
from kcm.checker.result import CheckResult
from kcm.checker.traces import write_counterexample
from kcm.errors import UsageError
from kcm.model.config import ConfigError, ModelConfig
from kcm.model.spec import KafkaModel, config_fields
from kcm.model.variants import VARIANTS

MODEL_FACTORY = "kcm.model.spec:model_for"


def with_variant(cfg: ModelConfig, variant: str | None) -> ModelConfig:
    """`cfg` with `variant` (a name from `kcm variants`, or its JIRA key) switched on."""
    if not variant:
        return cfg
    name = variant.upper()
    by_jira = {v.jira: v.name for v in VARIANTS.values()}
    name = by_jira.get(name, name)
    if name not in VARIANTS:
        raise UsageError(f"unknown variant '{variant}'; choose one of {', '.join(VARIANTS)} (see 'kcm variants')")
    try:
        return ModelConfig.from_mapping({**config_fields(cfg), "variant": name}, where="--variant")
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def run_exploration(console: Console, name: str, cfg: ModelConfig, *, symmetry: bool = True,
                    invariants: tuple[str, ...] = (), max_depth: int | None = None,
                    out: Path | None = None, progress_every: float = 5.0) -> tuple[CheckResult, dict[str, str]]:
    """Explore `cfg`; returns the result and {violated property: ITF file written}."""
    model = KafkaModel(cfg, symmetry=symmetry)
    err = Console(stderr=True, highlight=False, soft_wrap=True)

    def progress(p) -> None:
        err.print(p.line())

    started = time.perf_counter()
    result = explore(model, symmetry=symmetry, max_depth=max_depth, properties=list(invariants) or None,
                     progress=progress, progress_interval=progress_every)
    files: dict[str, str] = {}
    for line in result.summary_lines():
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
                                         source=f"kcm explore {name}")
            files[v.name] = str(paths["itf"])
            console.print(f"  counterexample for {v.name}: {paths['text']} ({v.trace_length} steps), "
                          f"ITF {paths['itf']}, diagram {paths['dot']}, replay {paths.get('replay')}")
    console.print(f"Explored in {time.perf_counter() - started:.1f} s.")
    return result, files


def config_with(cfg: ModelConfig, **changes) -> ModelConfig:
    return dataclasses.replace(cfg, **changes)
