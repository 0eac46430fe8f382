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
consumer (rate-limited TLC lines), the CLI may use a progress bar instead. Rates follow TLC's
line but say only what was measured:

- a line's rate is taken over the latest span of at least `RATE_WINDOW` seconds, so the first
  line, written right after the initial states, has none (a rate extrapolated from a few
  microseconds says nothing), and a burst of short levels does not swing it;
- the final line gives the whole run's average, marked "on average" (TLC's closing line speaks
  of the whole run too).

The outlook. Breadth-first levels of these models grow, peak and shrink, and no count of the
states still to come exists before the run ends. So the line says what the levels measured so
far show, and its basis: how much of the current level is expanded, the factor by which the
levels grew or shrank per level over the last (up to) three, and only once they shrink, how many
more states that factor would give if it held (a geometric tail: `last * f / (1 - f)`), rounded
to two significant figures, with the time that takes at the current rate. While levels grow
nothing bounds the total, and the line gives no total.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
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
    #: States with no successor whose only steps a bound of the model cut (`Model.pruned`: a TLC
    #: state constraint, not the system stopping), so they are not deadlocks.
    cut: int = 0

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
        cut = [f"{self.cut:,} state{'s' if self.cut != 1 else ''} had no successor only because a bound of the "
               "model cut a healing step (not a deadlock)."] if self.cut else []
        return cut + [
            f"{self.generated:,} states generated, {self.distinct:,} distinct states found, "
            f"{self.queue:,} states left on queue.",
            (f"The depth of the complete state graph search is {self.depth}." if complete else
             f"The search stopped at depth {self.depth}, before the state graph was complete."),
            f"The average outdegree of {graph} is {o.mean:.2f} (minimum is "
            f"{o.minimum}, the maximum {o.maximum} and the 95th percentile is {o.p95}).",
            "Estimate of the probability that a fingerprint collision hid a state (128-bit, "
            f"n*(g-n)/2^128): {self.collision_probability:.1E}",
        ]


#: The shortest span (seconds) a rate is measured over; shorter, a line gives no rate.
RATE_WINDOW = 1.0
#: Levels over which the outlook measures growth or shrinkage.
TREND_LEVELS = 3


@dataclass(frozen=True)
class Progress:
    """A snapshot handed to the progress callback.

    `phase` is "init" (initial states done), "level" (a BFS level done), "tick" (the interval
    passed in the middle of a level) or "final". Rates are per minute, over the latest span of at
    least `RATE_WINDOW` seconds (None before one has passed), the final one over the whole run.
    `outlook` is the sentence the line ends with, what the level sizes say of the rest of the run
    (the function `outlook`; empty when they say nothing).
    """

    phase: str
    level: int
    generated: int
    distinct: int
    queue: int
    elapsed_s: float
    generated_per_min: float | None
    distinct_per_min: float | None
    outlook: str = ""

    def line(self, now: datetime | None = None) -> str:
        """TLC's progress line (MP.java), e.g. `Progress(3) at 2024-05-01 10:00:00: ...`, then
        the outlook."""
        stamp = (now or datetime.now()).strftime("%Y-%m-%d %H:%M:%S")
        mean = " on average" if self.phase == "final" else ""

        def rate(value: float | None, unit: str) -> str:
            return "" if value is None else f" ({value:,.0f} {unit}{mean})"

        line = (
            f"Progress({self.level}) at {stamp}: {self.generated:,} states generated"
            f"{rate(self.generated_per_min, 's/min')}, {self.distinct:,} distinct states found"
            f"{rate(self.distinct_per_min, 'ds/min')}, {self.queue:,} states left on queue."
        )
        return f"{line} {self.outlook}." if self.outlook else line


def outlook(levels: Sequence[int], expanded: int = 0, generated: int = 0, distinct: int = 0,
            queue: int = 0, generated_per_min: float | None = None) -> str:
    """What the level sizes so far say about the rest of the run (module docstring, "The
    outlook"). `levels` are the sizes of the levels found, the last one being expanded (or next),
    `expanded` how many of its states are expanded; the counts and rate are the line's."""
    parts = []
    if levels and 0 < expanded < levels[-1]:
        parts.append(f"{100 * expanded // levels[-1]}% of level {len(levels)} expanded")
    k = min(TREND_LEVELS, len(levels) - 1)
    if k >= 1 and levels[-1 - k] > 0 and levels[-1] > 0:
        factor = (levels[-1] / levels[-1 - k]) ** (1 / k)
        span = f"from level {len(levels) - k} to level {len(levels)}"
        if factor >= 1:
            parts.append(f"levels grew {factor:.2f}x per level {span}")
        else:
            peak = max(levels)
            more = levels[-1] * factor / (1 - factor)
            trend = (f"levels shrank {factor:.2f}x per level {span} (peak {peak:,} at level "
                     f"{levels.index(peak) + 1}); if that holds, about {_rounded(more)} more states")
            expanded_so_far = distinct - queue
            if generated_per_min and expanded_so_far > 0:
                # Time goes into generating edges: each state left to expand (the queue and the
                # states still to come) costs the mean outdegree so far.
                edges = (queue + more) * generated / expanded_so_far
                trend += f", {_duration(60.0 * edges / generated_per_min)} at the current rate"
            parts.append(trend)
    text = "; ".join(parts)
    return text[:1].upper() + text[1:]


def _rounded(n: float) -> str:
    """`n` to two significant figures, the precision an extrapolation has."""
    if n < 1:
        return "0"
    digits = max(int(math.floor(math.log10(n))) - 1, 0)
    return f"{round(n, -digits):,.0f}"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return "under a minute"
    if seconds < 3600:
        return f"about {round(seconds / 60):d} min"
    return f"about {seconds / 3600:.1f} h"


class ProgressClock:
    """Builds `Progress` snapshots (module docstring: rates and outlook); used by the explorers.

    The rates are measured from the first snapshot on, so a run resumed with earlier counts
    (Spark's `--resume`) does not count them as its own."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, window: float = RATE_WINDOW) -> None:
        self._clock = clock
        self._window = window
        self.start = clock()
        #: (time, generated, distinct) of earlier snapshots: the first one, and the ones a
        #: later rate may still be measured from.
        self._samples: deque[tuple[float, int, int]] = deque()
        self._first: tuple[float, int, int] | None = None

    def now(self) -> float:
        return self._clock()

    def snapshot(self, phase: str, level: int, generated: int, distinct: int, queue: int,
                 levels: Sequence[int] = (), expanded: int = 0, note: str | None = None) -> Progress:
        """A snapshot; `levels` and `expanded` feed the outlook (`outlook`), which `note`
        replaces when given."""
        now = self._clock()
        sample = (now, generated, distinct)
        if self._first is None:
            self._first = sample
        samples = self._samples
        # Keep the latest sample at least a window old (and the ones after it): later snapshots
        # measure from there, the most recent span that is long enough.
        while len(samples) >= 2 and now - samples[1][0] >= self._window:
            samples.popleft()
        base = self._first if phase == "final" else (samples[0] if samples else None)
        per_min_g = per_min_d = None
        if base is not None and now - base[0] >= self._window:
            minutes = (now - base[0]) / 60.0
            per_min_g, per_min_d = (generated - base[1]) / minutes, (distinct - base[2]) / minutes
        samples.append(sample)
        if note is None:
            note = "" if phase == "final" else outlook(levels, expanded, generated, distinct, queue, per_min_g)
        return Progress(phase, level, generated, distinct, queue, now - self.start, per_min_g, per_min_d, note)
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
