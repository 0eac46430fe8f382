"""The clean model on each config, traced, and deciding a mutant without a search.

The clean model is explored once per config (`baselines`) and traced: the lines of the mutated
files each expansion ran, and the answer of each expansion (`CleanGraph`). A mutant is then
decided on a config without a search where an exact shortcut applies: its lines never ran there
(`Baseline.reaches`), or its successors and observations equal the clean ones on every clean
state where they ran (`same_as_clean`; docs/checking.md gives the argument).

A compiled model is refused: the tracer sees no line of compiled code, and every mutant would
look unreached.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kcm.checker.engine.errors import UsageError
from kcm.checker.mutation.generate import MUTABLE_FILES, Mutant, model_dir
from kcm.checker.mutation.loader import LoadedMutant
from kcm.checker.mutation.search import Budget, explore_with_budget, liveness_verdict, random_walks
from kcm.model.catalogue import properties_for
from kcm.model.checking.epoch_quotient import EpochQuotientModel
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.config import ModelConfig


@dataclass(frozen=True)
class Baseline:
    """The clean model on one config: its distinct-state count and the digest of its sorted
    fingerprint set (None when the budget cut the clean run short: equivalence cannot be judged)."""

    config: str
    distinct: int
    digest: str | None
    #: {file: lines of the mutable files the clean run executed}.
    covered: Mapping[str, frozenset[int]] | None = None
    #: What deciding a mutant without a search needs (`CleanGraph`); None for walks or a cut run.
    graph: CleanGraph | None = None
    #: The known Kafka 2.6 violations the complete clean run reached (None for walks or a cut run).
    known: frozenset[str] | None = None
    #: With `Budget.liveness`: the liveness properties the clean model breaks here (a livelock 2.6
    #: itself has is no kill); None when liveness is not judged on this config (off, or undecided).
    live: frozenset[str] | None = None
    #: With goals not required (`Budget.goals_required`): the goals the complete clean run met, which
    #: a mutant must meet too; None otherwise.
    goals_met: frozenset[str] | None = None

    def reaches(self, mutant: Mutant) -> bool:
        """Whether the clean run executed a line of `mutant.reach` (True when unknown)."""
        if self.covered is None:
            return True
        lines = self.covered.get(mutant.file, frozenset())
        first, last = mutant.reach
        return any(n in lines for n in range(first, last + 1))


@dataclass(frozen=True)
class CleanGraph:
    """The clean exploration of one config, kept to decide a mutant without searching.

    `states` are the states the explorer expanded, in its order (encoded with the model's codec),
    `successors[i]` the digest of what the clean model's `successors` and `observe` answered on
    `states[i]` (each action, its next state's fingerprint and the step's observations), and
    `by_line[(file, line)]` a bitmap of the states whose expansion executed that line of a
    mutable file. `inits` are the initial states (encoded), `init_lines` the lines the
    initial states' computation executed, `other_lines` those executed anywhere else (the
    properties, quiescence, building the model): the explorer's run of a mutant whose changed
    lines fall there is not decided by the successors alone, so it is searched."""

    states: tuple[bytes, ...]
    successors: tuple[bytes, ...]
    by_line: Mapping[tuple[str, int], int]
    inits: tuple[bytes, ...]
    init_lines: frozenset[tuple[str, int]]
    other_lines: frozenset[tuple[str, int]]



def baselines(configs: list[tuple[str, ModelConfig]], budget: Budget) -> list[Baseline]:
    """The clean model on every config; a config on which it does not pass is a usage error.

    Each exhaustive clean run is traced (`_LineCoverage`): the lines of the mutable files it
    executed, and what deciding a mutant without a search needs (`CleanGraph`)."""
    compiled = [f for f in MUTABLE_FILES if not _from_source(f"kcm.model.{f[:-3]}")]
    if compiled:
        # _LineCoverage sees no line of compiled code: every mutant would look unreached.
        raise UsageError(f"mutation testing traces the model's source lines, and model/{compiled[0]} is compiled: "
                         "run it with KCM_PURE=1 (kcm mutate restarts itself so)")
    out = []
    for name, cfg in configs:
        if budget.walks:
            result = random_walks(KafkaModel(cfg), budget)
            if result.verdict == "violation":
                v = result.violations[0]
                raise UsageError(f"the clean model violates {v.name} on '{name}': mutants need a config it passes")
            out.append(Baseline(name, result.distinct, None, None))
            continue
        with _LineCoverage() as cov:
            model = KafkaModel(cfg)
            recorder = _CleanRecorder(model, cov)
            result, digest, cut = explore_with_budget(model, budget)
        if result.verdict == "violation":
            v = result.violations[0]
            raise UsageError(f"the clean model violates {v.name} on '{name}': mutants need a config it passes")
        if cut:
            out.append(Baseline(name, result.stats.distinct, None, None))
        else:
            graph = recorder.graph()
            live = None
            if budget.liveness:
                clean = liveness_verdict(EpochQuotientModel(cfg), budget)
                live = None if clean is None else frozenset(v.name for v in clean.violations)
            met = None if budget.goals_required else frozenset(n for n, g in result.goals.items() if g.met)
            out.append(Baseline(name, result.stats.distinct, digest, _lines_of(graph), graph,
                                frozenset(v.name for v in result.known_violations), live, met))
    return out


def successors_digest(model, state, successors) -> bytes:
    """What `model` answered on `state`: each action, its next state's fingerprint, and the
    step's observations (`observe`, which the properties read), in order."""
    h = hashlib.blake2b(digest_size=16)
    fingerprint = type(model).fingerprint  # the model's own, not a checker's wrapper
    for a, t in successors:
        h.update(repr(a).encode())
        h.update(b"\0")
        h.update(fingerprint(model, t))
        h.update(repr(model.observe(state, a)).encode())
        h.update(b"\1")
    return h.digest()


class _CleanRecorder:
    """Wraps a clean model's `successors` and `init_states` while the explorer runs it: keeps
    each expanded state with the digest of its successors, and switches the line coverage so that
    the lines each expansion executes are attributed to that state (`CleanGraph`)."""

    def __init__(self, model, cov: _LineCoverage) -> None:
        self.model, self.cov = model, cov
        self.states: list[bytes] = []
        self.digests: list[bytes] = []
        # {(file, line): bitmap of the states whose expansion ran it}, bit i in byte i // 8: a bit
        # per state and line (a list of indices would be a pointer per state and line).
        self.by_line: dict[tuple[str, int], bytearray] = {}
        self.inits: tuple[bytes, ...] = ()
        self.init_lines: set = set()
        self.index: dict[bytes, int] = {}
        successors, init_states, observe = model.successors, model.init_states, model.observe
        fingerprint = type(model).fingerprint

        def recorded_successors(state):
            lines: set = set()
            cov.sink = lines
            try:
                out = successors(state)
            finally:
                cov.sink = cov.other
            i = len(self.states)
            self.states.append(model.encode_state(state))
            self.digests.append(successors_digest(model, state, out))
            self.index.setdefault(fingerprint(model, state), i)
            for key in lines:
                self._mark(key, i)
            return out

        def recorded_observe(state, action):
            # A property asks what a step observed; the model answers from the expansion it
            # cached, or (when a property expanded another state in between) steps again. That
            # step is the one the expansion of `state` took: its lines are that state's.
            lines: set = set()
            previous, cov.sink = cov.sink, lines
            try:
                obs = observe(state, action)
            finally:
                cov.sink = previous
            if lines:
                i = self.index.get(fingerprint(model, state))
                if i is None:
                    previous.update(lines)
                else:
                    for key in lines:
                        self._mark(key, i)
            return obs

        def recorded_inits():
            cov.sink = self.init_lines
            try:
                inits = init_states()
            finally:
                cov.sink = cov.other
            self.inits = tuple(model.encode_state(s) for s in inits)
            return inits

        model.successors = recorded_successors
        model.init_states = recorded_inits
        model.observe = recorded_observe
        # The properties were given the model's `observe` when it was built: give them this one.
        model._properties = properties_for(model.cfg, recorded_observe)

    def _mark(self, key: tuple[str, int], i: int) -> None:
        """Set state `i`'s bit in the bitmap of line `key` (any order: `recorded_observe` marks late ones)."""
        bits = self.by_line.get(key)
        if bits is None:
            bits = self.by_line[key] = bytearray()
        byte = i >> 3
        if len(bits) <= byte:
            bits.extend(bytes(byte + 1 - len(bits)))
        bits[byte] |= 1 << (i & 7)

    def graph(self) -> CleanGraph:
        by_line = {key: int.from_bytes(bits, "little") for key, bits in self.by_line.items()}
        return CleanGraph(tuple(self.states), tuple(self.digests), by_line, self.inits,
                          frozenset(self.init_lines), frozenset(self.cov.other))


class _LineCoverage:
    """The lines of the mutable files executed while it is active (`sys.settrace`, line events
    only in frames of those files, so the rest of the explorer runs at nearly full speed), as
    (file, line) pairs added to `sink` (by default `other`; `_CleanRecorder` points it at the set
    of the state being expanded).

    Why not coverage.py: the baseline needs the lines of each expanded state apart (tens of
    thousands of "contexts" per config, kept in memory as bitmaps), not one report per run; a
    tracer limited to six files is thirty lines and costs the clean runs little."""

    def __init__(self) -> None:
        folder = str(model_dir())
        self.files = {str(Path(folder) / f): f for f in MUTABLE_FILES}
        self.other: set[tuple[str, int]] = set()
        self.sink = self.other
        self._all: list[set] = []
        self._previous = None

    def __enter__(self):
        files = self.files

        def local(frame, event, arg):
            if event == "line":
                self.sink.add((files[frame.f_code.co_filename], frame.f_lineno))
            return local

        def global_(frame, event, arg):
            name = frame.f_code.co_filename
            if name in files:
                self.sink.add((files[name], frame.f_lineno))
                return local
            return None

        self._previous = sys.gettrace()
        sys.settrace(global_)
        return self

    def __exit__(self, *exc) -> None:
        sys.settrace(self._previous)


def _lines_of(g: CleanGraph) -> dict[str, frozenset[int]]:
    """{file: every line the clean run executed}: of the expansions, the initial states and the rest."""
    out: dict[str, set[int]] = {f: set() for f in MUTABLE_FILES}
    for f, n in itertools.chain(g.by_line, g.init_lines, g.other_lines):
        out[f].add(n)
    return {f: frozenset(v) for f, v in out.items()}


def same_as_clean(loaded: LoadedMutant, cfg: ModelConfig, base: Baseline, mutant: Mutant,
                  deadline: float | None = None) -> bool:
    """Whether the mutant explores `cfg` exactly as the clean model did, decided without a search.

    The mutant's code differs from the clean code only in the lines of `mutant.reach`. On a clean
    state whose clean expansion never executed those lines, the mutant's expansion takes the same
    path and gives the same successors and observations (the model is deterministic, over
    immutable values); so it is enough to run the mutant's `successors` on the clean states where
    those lines ran (and its `init_states`, if they ran there) and compare. If all agree, induction
    over the explorer's breadth-first order shows the mutant's run expands the very states of the
    clean run, with the same edges, observations and property verdicts (the properties and the
    quiescence test never executed those lines: `other_lines`), so its verdict, state count and
    fingerprint set are the clean ones. Any difference, an exception, or the deadline: False, and
    the caller searches as before (so a False never changes an outcome)."""
    g = base.graph
    if g is None or deadline is not None and time.monotonic() > deadline:
        return False
    first, last = mutant.reach
    keys = [(mutant.file, n) for n in range(first, last + 1)]
    if any(k in g.other_lines for k in keys):
        return False
    try:
        model = loaded.spec.KafkaModel(cfg)
        if any(k in g.init_lines for k in keys) and (
                tuple(model.encode_state(s) for s in model.init_states()) != g.inits):
            return False
        bitmap = 0
        for k in keys:
            bitmap |= g.by_line.get(k, 0)
        # The states to compare, in the explorer's order (the set bits of the bitmap).
        indices = [i for i, bit in enumerate(reversed(bin(bitmap)[2:])) if bit == "1"] if bitmap else []
        for checked, i in enumerate(indices, 1):
            state = model.decode_state(g.states[i])
            if successors_digest(model, state, model.successors(state)) != g.successors[i]:
                return False
            if deadline is not None and (checked & 63) == 0 and time.monotonic() > deadline:
                return False
    except Exception:  # noqa: BLE001 - the search will report what the mutant raises
        return False
    return True


def _from_source(module: str) -> bool:
    """Whether `module` runs from its Python source (a compiled build's `__file__` is a shared library)."""
    return str(getattr(importlib.import_module(module), "__file__", "") or "").endswith(".py")
