"""Resumable snapshots of a Spark exploration, and where they live.

Two mechanisms, for two purposes:

- Cutting lineage (`RDD.checkpoint`, every `checkpoint_every` levels, into the SparkContext's
  checkpoint directory). Without it each level's RDD would depend on every earlier level, and
  a lost executor would recompute the whole search. Spark's reliable checkpoint keeps the RDD's
  partitioner, so the visited set stays co-partitioned with the candidates and is never
  shuffled. Spark cannot read these files back in another application, though (its reader is
  internal, and the saved partitioner names a Python function by its `id` in the old process).
- Resuming (`checkpoint_dir`): at the same levels the driver also writes a snapshot that a new
  application can read: `<dir>/level-NNNNN/records` (the visited and frontier records,
  `saveAsPickleFile`) and `<dir>/level-NNNNN/driver` (the driver's counters, a `DriverState`),
  written in that order. A snapshot counts only when `driver/_SUCCESS` exists, so a run killed
  while writing leaves the previous snapshot in force. Reading it back costs one shuffle of the
  visited set (`partitionBy`: pickle files do not keep a partitioner), once per resume.

Paths go through Hadoop's FileSystem API (via the JVM), so `checkpoint_dir` may be a local path
or any URI Spark can write (`hdfs://`, `s3a://`, ...). On a cluster it must be storage every
executor and the driver share.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kcm.spark_explore.level import owner_of
from kcm.spark_explore.spec import ModelSpec

_LEVEL_DIR = re.compile(r"^level-(\d{5,})$")

#: The layout of a snapshot's records and of the encoded states in them, part of the options a
#: resume must share: a snapshot written by a kcm that encoded states otherwise is refused in one
#: line, not failed on in an executor. 2: the Kafka model's states as a tuple of their records'
#: bytes (`model/checking/codec.py`), no longer one bytes object. 3: on a few partitions keys start
#: with the model's locality, which decides the owner partitions (`level.key_function`). 4: the
#: Kafka model keys a state by itself in the runs symmetry does not reduce (model/checking/reduced_runs.py)
#: and orders a call's replica state changes as listed (docs/model.md, "Abstractions and omissions"),
#: so older keys mean other states.
RECORDS_FORMAT = 4


@dataclass
class DriverState:
    """Everything the driver knows after a level, besides the RDD: enough to go on as if never
    stopped. `options_key` holds the options that change the result; a resume with others is
    refused."""

    spec: ModelSpec
    options_key: tuple
    partitions: int
    level: int
    frontier: int
    generated: int
    distinct: int
    frontier_sizes: list[int]
    outdegrees: dict[int, int]
    evaluations: dict[str, int]
    new_states: dict[str, int]
    first_seen: dict[str, tuple]
    edges: dict   # table edge -> transitions that took it (a Counter)
    witnesses: dict[str, tuple]
    #: Violations found so far (with `stop_on_violation=False`): (name, kind, path).
    violations: list[tuple]
    active_always: tuple[str, ...]
    active_steps: tuple[str, ...]
    check_deadlock: bool
    levels: list[dict] = field(default_factory=list)
    elapsed_s: float = 0.0
    #: Known behaviour of the system found so far (kcm.model.catalogue.findings): (name, kind, path).
    known_found: list[tuple] = field(default_factory=list)
    #: States with no successor only because a bound of the model cut their steps (`Stats.cut`).
    cut: int = 0


def _fs(sc, path: str):
    jpath = sc._jvm.org.apache.hadoop.fs.Path(path)
    return jpath.getFileSystem(sc._jsc.hadoopConfiguration()), jpath


def _join(root: str, *parts: str) -> str:
    return "/".join([root.rstrip("/"), *parts])


def level_dir(root: str, level: int) -> str:
    return _join(root, f"level-{level:05d}")


def snapshots(sc, root: str) -> list[tuple[int, str]]:
    """The complete snapshots under `root`, as (level, path), oldest first."""
    fs, jroot = _fs(sc, root)
    if not fs.exists(jroot):
        return []
    found = []
    for status in fs.listStatus(jroot):
        match = _LEVEL_DIR.match(status.getPath().getName())
        if match:
            path = _join(root, match.group(0))
            if _exists(sc, _join(path, "driver", "_SUCCESS")):
                found.append((int(match.group(1)), path))
    return sorted(found)


def _exists(sc, path: str) -> bool:
    fs, jpath = _fs(sc, path)
    return bool(fs.exists(jpath))


def _delete(sc, path: str) -> None:
    fs, jpath = _fs(sc, path)
    if fs.exists(jpath):
        fs.delete(jpath, True)


def save_snapshot(sc, root: str, state: DriverState, stored_rdd, keep: int = 2) -> str:
    """Write the snapshot of level `state.level` (records first, then the driver state), then
    delete all but the newest `keep` snapshots."""
    path = level_dir(root, state.level)
    _delete(sc, path)  # a partial one from an earlier attempt
    stored_rdd.saveAsPickleFile(_join(path, "records"))
    sc.parallelize([state], 1).saveAsPickleFile(_join(path, "driver"))
    for _, old in snapshots(sc, root)[:-max(keep, 1)]:
        _delete(sc, old)
    return path


def load_snapshot(sc, path: str) -> tuple[DriverState, Any]:
    """The driver state and the records of a snapshot, the records partitioned again by owner."""
    state = sc.pickleFile(_join(path, "driver")).collect()[0]
    records = sc.pickleFile(_join(path, "records")).partitionBy(state.partitions, owner_of)
    return state, records


def latest_snapshot(sc, root: str) -> str | None:
    found = snapshots(sc, root)
    return found[-1][1] if found else None
