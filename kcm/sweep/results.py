"""The results folder of a sweep: one small JSON per finished scope, and the traces it found.

Layout of `--out` (default `kcm-out/sweep-<grid>`):

- `scopes/<scope>.json`: one finished scope (`record`), written atomically (a temporary file in
  the same folder, then `os.replace`), so an interruption leaves a scope's record whole or absent;
- `traces/<scope>/<property>.itf.json` (with `.txt`, `.dot` and `replay_<property>.py`): the
  shortest trace of each property the scope breaks, and `known_<property>.*` for each known Kafka
  2.6 behaviour, written by the engine's `write_counterexample` before the record, so a record
  never names a trace that is not there; with liveness, a livelock's lasso as
  `EventuallyQuiescent.*` (its cycle marked, replayed through the model modulo controller epochs,
  as `kcm explore --liveness` writes it) and each known Kafka 2.6 loop as `known_<loop>.*`;
- `sweep.json` and `junit.xml`: the report over the whole grid (`kcm.sweep.report`).

Resume. `--resume` keeps a record whose grid, grid version, config, budget and liveness (whether
the run judged it) are the scope's own, and runs only the other scopes; without it every scope
runs and its record is overwritten. A record from before liveness could be asked has none and
stands for a run without it.
A scope cut by its budget is finished (its record says so); an interrupted one is not recorded.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from kcm.checker.engine.liveness import LIVENESS
from kcm.checker.engine.report import liveness_section
from kcm.checker.engine.result import Trace
from kcm.checker.engine.traces import file_stem, write_counterexample
from kcm.exploration import trace_spec
from kcm.model.checking.epoch_quotient import EpochQuotientModel
from kcm.model.checking.kafka_model import KafkaModel, config_fields
from kcm.sweep.grid import Grid, Scope
from kcm.sweep.run import BUDGET, Broken, ScopeOutcome


def default_out(grid: str) -> Path:
    return Path("kcm-out") / f"sweep-{grid}"


def record_path(out: Path, scope: str) -> Path:
    return out / "scopes" / f"{file_stem(scope)}.json"


def key_of(grid: Grid, scope: Scope, liveness: bool = False) -> dict[str, Any]:
    """What a record must match to stand for `scope` on resume, in a run that judges liveness or not."""
    return {"grid": grid.name, "grid_version": grid.version, "config": scope.fields,
            "budget": {"max_states": grid.budget.max_states, "seconds": grid.budget.seconds},
            "liveness": liveness}


def finished(out: Path, grid: Grid, liveness: bool = False) -> dict[str, dict]:
    """The records in `out` that stand for scopes of `grid` in a run with or without `liveness`
    (`key_of`), by scope name."""
    kept = {}
    for scope in grid.scopes:
        path = record_path(out, scope.name)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        key = key_of(grid, scope, liveness)
        if isinstance(record, dict) and all(record.get(k, False if k == "liveness" else None) == _plain(v)
                                            for k, v in key.items()):
            kept[scope.name] = record
    return kept


def save(out: Path, grid: Grid, scope: Scope, outcome: ScopeOutcome) -> dict:
    """Write `outcome`'s traces, then its record (atomically); returns the record. An outcome
    with a liveness result was judged by liveness: its record says so (`key_of`) and holds the
    liveness check's summary under `liveness_check`."""
    cfg = scope.config()
    model = KafkaModel(cfg)
    folder = out / "traces" / file_stem(scope.name)
    live = outcome.liveness
    loops: dict[str, str] = {}

    def entry(b: Broken, known: bool) -> dict:
        item: dict[str, Any] = {"property": b.name, "kind": b.kind, "steps": b.steps}
        if known:
            item["finding"] = b.finding
        if b.loop is not None:
            item["loop"] = b.loop
        if b.known_loop:
            item["known_loop"] = b.known_loop
        if b.trace is not None:
            item["trace"] = written(b, b.trace, known)
            if b.known_loop:
                loops[f"known {b.known_loop}"] = item["trace"]
        return item

    def written(b: Broken, trace: Trace, known: bool) -> str:
        meta: dict[str, Any] = {"invariant": b.name, "stem": f"known_{b.name}" if known else b.name}
        on, spec = model, trace_spec(cfg)
        if b.kind == LIVENESS:   # a lasso of the model explored modulo controller epochs (kcm explore --liveness)
            on, spec = EpochQuotientModel(cfg), trace_spec(cfg, liveness=True)
            meta["loop"] = b.loop
            if b.known_loop:
                meta.update(invariant=f"known {b.known_loop}", stem=f"known_{b.known_loop}",
                            description=f"known Kafka 2.6 loop {b.known_loop} ({b.finding}), breaks {b.name}")
        paths = write_counterexample(on, trace, folder, kind=b.kind, config={"preset": scope.name,
                                                                              **config_fields(cfg)},
                                     model_spec=spec, source=f"kcm sweep {grid.name} {scope.name}", **meta)
        return str(paths["itf"])

    record = {**_plain(key_of(grid, scope, live is not None)), "scope": scope.name, "verdict": outcome.verdict,
              "reason": outcome.reason, "distinct": outcome.distinct, "generated": outcome.generated,
              "depth": outcome.depth, "seconds": outcome.seconds,
              "cpu_seconds": outcome.cpu_seconds, "checked": list(outcome.checked),
              "goals": outcome.goals,
              "violations": [entry(b, False) for b in outcome.violations],
              "known": [entry(b, True) for b in outcome.known]}
    if outcome.reason == BUDGET:
        record["cut_in"] = outcome.extra.get("cut_in", "safety")
    if live is not None:
        record["liveness_check"] = {"verdict": ("not judged" if live.verdict == "not checked" else
                                                "violated" if live.violations else "held"),
                                    **_plain(liveness_section(live, loops))}
    _write_atomically(record_path(out, scope.name), json.dumps(record, indent=1) + "\n")
    return record


def _plain(value: Any) -> Any:
    """`value` as JSON gives it back (tuples as lists), for comparing with a record read."""
    return json.loads(json.dumps(value))


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
