"""Exploration statistics and the TLC-style progress line.

The numbers and their wording follow TLC (`tlc2/output/MP.java`), so that people who read TLC's
output read ours without a legend:

- `generated`: every state produced, initial states included, duplicates included (TLC "states
  generated"); `distinct`: the size of the visited set; `queue`: states found but not expanded.
- `depth`: the number of BFS levels, the initial states being level 1 (TLC "The depth of the
  complete state graph search"); a trace of `k` steps ends at level `k + 1`.
- Outdegree: the number of successors of each expanded state, duplicates and self-loops included,
  summarised as minimum, mean, maximum and 95th percentile (nearest rank) from a histogram, so
  no per-state list is kept.
- The fingerprint-collision estimate is TLC's optimistic one, `n * (g - n) / 2^b`, with `b = 128`
  for our fingerprints instead of TLC's 64: the chance that one of the `g - n` duplicate lookups
  matched a different state among the `n` stored.

Progress is handed to a callback as a `Progress` value; `ProgressPrinter` is the plain-text
consumer (rate-limited TLC lines), the CLI may use a progress bar instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

FINGERPRINT_BITS = 128


def collision_probability(distinct: int, generated: int, bits: int = FINGERPRINT_BITS) -> float:
    """TLC's optimistic estimate that two distinct states shared a fingerprint: n*(g-n)/2^bits."""
    return distinct * max(generated - distinct, 0) / 2.0**bits


@dataclass(frozen=True)
class Outdegree:
    """Successors per expanded state: minimum, mean, maximum and 95th percentile (nearest rank)."""

    minimum: int = 0
    mean: float = 0.0
    maximum: int = 0
    p95: int = 0
    #: `{outdegree: number of states}` it summarises, so that runs explored apart add up
    #: exactly (`kcm.checker.engine.runs`); not part of equality.
    histogram: Mapping[int, int] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_histogram(cls, histogram: Mapping[int, int]) -> Outdegree:
        """Summarise `{outdegree: number of states}`; all zeros when nothing was expanded."""
        total = sum(histogram.values())
        if not total:
            return cls()
        degrees = sorted(histogram)
        rank = -(-95 * total // 100)  # ceil(0.95 * total): the nearest-rank 95th percentile
        seen, p95 = 0, degrees[-1]
        for degree in degrees:
            seen += histogram[degree]
            if seen >= rank:
                p95 = degree
                break
        mean = sum(d * c for d, c in histogram.items()) / total
        return cls(degrees[0], mean, degrees[-1], p95, dict(histogram))


@dataclass(frozen=True)
class Stats:
    """What a run computed; see the module docstring for each number's exact meaning."""

    generated: int = 0
    distinct: int = 0
    queue: int = 0
    #: BFS levels; initial states are level 1 (TLC's "depth").
    depth: int = 0
    #: Distinct states first found at each BFS distance (index 0: the initial states).
    frontier_sizes: tuple[int, ...] = ()
    outdegree: Outdegree = field(default_factory=Outdegree)
    duration_s: float = 0.0

    @property
    def collision_probability(self) -> float:
        return collision_probability(self.distinct, self.generated)

    def summary_lines(self, complete: bool = True) -> list[str]:
        """TLC's closing lines, with the estimate adapted to 128-bit fingerprints. TLC says "the
        complete state graph" only when the search covered it; a search cut short (a bound, an
        interruption, a violation) says how deep it got instead. The run's duration is printed
        once, by the caller ("Explored in")."""
        o = self.outdegree
        graph = "the complete state graph" if complete else "the explored part of the state graph"
        return [
            f"{self.generated:,} states generated, {self.distinct:,} distinct states found, "
            f"{self.queue:,} states left on queue.",
            (f"The depth of the complete state graph search is {self.depth}." if complete else
             f"The search stopped at depth {self.depth}, before the state graph was complete."),
            f"The average outdegree of {graph} is {o.mean:.2f} (minimum is "
            f"{o.minimum}, the maximum {o.maximum} and the 95th percentile is {o.p95}).",
            "Estimate of the probability that a fingerprint collision hid a state (128-bit, "
            f"n*(g-n)/2^128): {self.collision_probability:.1E}",
        ]


@dataclass(frozen=True)
class Progress:
    """A snapshot handed to the progress callback.

    `phase` is "init" (initial states done), "level" (a BFS level done), "tick" (the interval
    passed in the middle of a level) or "final". Rates are per minute over the time since the
    previous snapshot, as TLC computes them.
    """

    phase: str
    level: int
    generated: int
    distinct: int
    queue: int
    elapsed_s: float
    generated_per_min: float
    distinct_per_min: float

    def line(self, now: datetime | None = None) -> str:
        """TLC's progress line (MP.java), e.g. `Progress(3) at 2024-05-01 10:00:00: ...`."""
        stamp = (now or datetime.now()).strftime("%Y-%m-%d %H:%M:%S")
        return (
            f"Progress({self.level}) at {stamp}: {self.generated:,} states generated "
            f"({self.generated_per_min:,.0f} s/min), {self.distinct:,} distinct states found "
            f"({self.distinct_per_min:,.0f} ds/min), {self.queue:,} states left on queue."
        )


class ProgressClock:
    """Builds `Progress` snapshots with TLC's interval rates; used by the explorers."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.start = clock()
        self._last_time = self.start
        self._last_generated = 0
        self._last_distinct = 0

    def now(self) -> float:
        return self._clock()

    def snapshot(self, phase: str, level: int, generated: int, distinct: int, queue: int) -> Progress:
        now = self._clock()
        minutes = max(now - self._last_time, 1e-9) / 60.0
        progress = Progress(
            phase, level, generated, distinct, queue, now - self.start,
            (generated - self._last_generated) / minutes, (distinct - self._last_distinct) / minutes,
        )
        self._last_time, self._last_generated, self._last_distinct = now, generated, distinct
        return progress


class ProgressPrinter:
    """A progress callback that prints TLC lines: the first and the final one always, the others
    at most once per `interval` seconds (TLC's default is 60; a few seconds suits a terminal)."""

    def __init__(self, echo: Callable[[str], object] = print, interval: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._echo, self._interval, self._clock = echo, interval, clock
        self._last: float | None = None

    def __call__(self, progress: Progress) -> None:
        now = self._clock()
        due = self._last is None or now - self._last >= self._interval
        if progress.phase in ("init", "final") or due:
            self._echo(progress.line())
            self._last = now
