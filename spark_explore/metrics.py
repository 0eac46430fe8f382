"""Spark's own figures for a level: shuffle bytes and stages, read from the status store.

Each BFS level runs under its own job group (`SparkContext.setJobGroup`), so its jobs, and their
stages, can be found afterwards with the public status tracker. Shuffle bytes are not in PySpark's
`SparkStageInfo`; they are in the JVM's `AppStatusStore` (`SparkContext.statusStore`, which the
web UI and the REST API read, and which exists with the UI off), as `v1.StageData`.

The store is fed by the asynchronous listener bus, so right after a job ends its last stage may
not be there yet. `LiveListenerBus.waitUntilEmpty` (public in the JVM, marked `private[spark]` in
Scala) is the barrier; if a future Spark hides it, we poll until the stages are no longer active,
for a few seconds at most. These figures are for people and benchmarks; no result depends on them.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class ShuffleFigures:
    """What a level's jobs moved: bytes written to and read from shuffle files, across stages."""

    shuffle_write_bytes: int = 0
    shuffle_read_bytes: int = 0
    stages: int = 0
    failed_tasks: int = 0


def _drain_listener_bus(sc) -> None:
    with contextlib.suppress(Exception):  # not public API; fall back to polling below
        sc._jsc.sc().listenerBus().waitUntilEmpty()


def _stages_of(sc, group: str) -> list[int]:
    tracker = sc.statusTracker()
    stages: list[int] = []
    for job in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job)
        if info is not None:
            stages.extend(info.stageIds)
    return stages


def job_group_figures(sc, group: str, timeout: float = 5.0) -> ShuffleFigures:
    """Shuffle figures of every stage run under job group `group` (its last attempts)."""
    _drain_listener_bus(sc)
    store = sc._jsc.sc().statusStore()
    deadline = time.monotonic() + timeout
    while True:
        write = read = failed = count = 0
        pending = False
        for stage in _stages_of(sc, group):
            try:
                data = store.lastStageAttempt(stage)
            except Exception:  # a stage the store never recorded
                continue
            status = data.status().toString()
            if status in ("ACTIVE", "PENDING"):
                pending = True
            count += 1
            write += data.shuffleWriteBytes()
            read += data.shuffleReadBytes()
            failed += data.numFailedTasks()
        if not pending or time.monotonic() >= deadline:
            return ShuffleFigures(write, read, count, failed)
        time.sleep(0.05)
