"""Lock-step stateful testing with Hypothesis: the model and the stepped implementation driven by one
random action sequence, checked after every step, and shrunk when something fails.

The machine (`machine_for(cfg)`, a `hypothesis.stateful.RuleBasedStateMachine`) holds a model state
(`kcm.model.spec`) and a `StepCluster` built from the same config (`kcm.impl`). It has one rule,
`take(choice)`: among the model's enabled actions whose step is taken (`KafkaModel.successors`, in
the model's fixed order, faults and admin operations included within the config's bounds), it takes
number `choice % n`, applies it to both, and checks

1. the model's invariants: every `Always` on the new state and every `AlwaysStep` on the edge
   (`KafkaModel.properties()`; goals are not checked, a walk proves nothing about reachability).
   A property Kafka 2.6 is known to break under the config (`KafkaModel.known_violations`, the
   Findings of `kcm.model.catalogue.findings`) stays checked, and each of its violations is
   classified as the explorer does: one the Finding's matcher accepts (asked with the violating
   step and the walk so far) is 2.6's behaviour, recorded in `FuzzStats.known` with the shortest
   walk that showed it, and the walk goes on; any other is a failure like any property's;
2. the refinement: `abstract(impl) == next state` (`kcm.impl.abstraction`), and that the
   implementation did not raise.

A failure raises `Failure` (an AssertionError) carrying the property, the trace of `(action, model
state)` pairs and the differing fields, so the caller can write the trace as ITF.

Why one rule with an integer rather than one rule per action kind: the enabled actions depend on
the state, and Hypothesis strategies are fixed when the class is built. Drawing an integer keeps
the choice in Hypothesis's hands, so the shrinker can both delete steps (each step draws "stop?")
and lower the choices (towards the first enabled action in the model's order), and the failing
program it prints is runnable as is: `state = KafkaLockStep(); state.take(choice=3); ...`. When no
action is enabled (every bound spent, nothing left to heal) `take` stutters, as a TLA+ step may.

What it can find and what it cannot. It samples: a random walk of at most `stateful_step_count`
steps per example, `max_examples` examples. It finds violations and disagreements that many
interleavings reach (the bug variants within a few hundred examples), and it goes deeper than
exhaustive search can on large configs; it proves nothing. The explorer (`kcm.checker.engine.bfs`) is
exhaustive and returns the shortest counterexample; the fuzzer's shrunk trace is short but not
necessarily shortest (tests compare the two for each variant). Quiescence invariants are only
checked in the quiescent states a walk happens to reach.

With a variant (`cfg.variant`), `default_invariants` checks only the invariant the variant must
break: a historical bug may break several properties, and the test of a variant is that its own
invariant fails first. The implementation honours the variant flags too, so it is still compared.

Determinism: `fuzz(cfg, seed=n)` walks the same way every time for the same code and config. Two
things would otherwise leak in: the example database (off: `database=None`) and the integer
literals Hypothesis harvests from the source of whatever local modules happen to be loaded, which
differ between `kcm fuzz`, a single test file and the whole suite (`_without_local_constants`).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.reporting import with_reporter
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test
from kcm.checker.engine.contract import Always, AlwaysStep
from kcm.checker.engine.model_spec import ModelSpec
from kcm.impl.abstraction import abstract, describe_difference
from kcm.impl.model_alignment import ModelAlignment
from kcm.impl.step_cluster import StepCluster
from kcm.model.checking.kafka_model import KafkaModel, config_fields
from kcm.model.config import ModelConfig
from kcm.model.spec import settle_path
from kcm.model.variants import VARIANTS

#: The name of the refinement check, as a property name in reports and ITF files.
REFINEMENT = "ImplementationMatchesModel"
#: The name under which an exception raised by the model's own step function is reported.
MODEL_ERROR = "ModelStepCompletes"
MODEL_FACTORY = "kcm.model.checking.kafka_model:model_for"

#: `take(choice)` draws from [0, CHOICES); the action is `choice % n`. Large enough that every
#: enabled action is about equally likely, small enough to read in a printed program.
CHOICES = 1 << 10

#: `kcm fuzz`'s bounds when none are given: examples (walks) and steps per walk. A healthy config
#: runs `DEFAULT_*`; a variant runs `VARIANT_*`, within which every bug variant is found from
#: seed 0 (`tests/checker/test_stateful.py` asserts it; the last, V2, at about example 290).
#: Shorter walks suit the variant presets: they settle within about 25 steps, after which a walk
#: only stutters. The example bound leaves a margin for other Hypothesis versions, whose walks
#: differ; it costs nothing when the variant is found, since the run stops there.
DEFAULT_EXAMPLES, DEFAULT_STEPS = 100, 50
VARIANT_EXAMPLES, VARIANT_STEPS = 1000, 25


def default_bounds(cfg: ModelConfig) -> tuple[int, int]:
    """`(examples, steps)` for `cfg` when the user gives none: the variant bounds for a variant."""
    return (VARIANT_EXAMPLES, VARIANT_STEPS) if cfg.variant else (DEFAULT_EXAMPLES, DEFAULT_STEPS)


#: The profile the tests use: bounded, derandomized, no example database, quiet health checks.
CI_PROFILE = "kcm-ci"
settings.register_profile(CI_PROFILE, settings(
    max_examples=25, stateful_step_count=40, deadline=None, database=None, derandomize=True, print_blob=False,
    report_multiple_bugs=False, phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]))


class Failure(AssertionError):
    """A step broke something. `prop` is the property (or `REFINEMENT`, `MODEL_ERROR`), `kind` its
    kind ("safety", "transition", "quiescence", "refinement", "error"), `trace` the `(action, model
    state)` pairs from the initial state (action None) to the failing step, `details` one line per
    differing field (or the exception)."""

    def __init__(self, prop: str, kind: str, trace: Sequence[tuple[Any, Any]], details: Sequence[str]) -> None:
        self.prop, self.kind, self.trace, self.details = prop, kind, tuple(trace), list(details)
        steps = "\n".join(f"  {i}. {a!r}" for i, (a, _) in enumerate(self.trace[1:], 1)) or "  (none)"
        what = {"refinement": "the implementation differs from the model",
                "error": "the model raised"}.get(kind, f"{kind} invariant {prop} is violated")
        super().__init__(f"{what} after {len(self.trace) - 1} steps:\n{steps}\n"
                         + "\n".join(f"  {line}" for line in self.details))

    @property
    def length(self) -> int:
        return len(self.trace) - 1


@dataclass
class FuzzStats:
    """Counters the machines update as they run (for progress bars and benchmarks)."""

    examples: int = 0
    steps: int = 0
    stutters: int = 0
    failures: int = 0
    #: Length of the first failing run, and of the shortest seen so far (shrinking lowers it).
    first: int | None = None
    shortest: int | None = None
    #: Which example (1-based) failed first; `examples` beyond it are Hypothesis's shrinking runs.
    first_example: int | None = None
    #: The known behaviours met (`KafkaModel.known_violations`): property name -> the shortest
    #: walk, as `(action, model state)` pairs, whose last step the property's Finding excused.
    known: dict[str, tuple[tuple[Any, Any], ...]] = field(default_factory=dict)
    #: Called after every example starts and every step, with these stats.
    on_change: Callable[[FuzzStats], None] | None = field(default=None, repr=False)

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self)


def default_invariants(cfg: ModelConfig) -> tuple[str, ...] | None:
    """The properties to check: the variant's `breaks` invariant for a variant, else all (None)."""
    return (VARIANTS[cfg.variant].breaks,) if cfg.variant else None


def machine_for(cfg: ModelConfig, *, invariants: Iterable[str] | None = None,
                alignment: ModelAlignment | None = None, compare: bool = True,
                stats: FuzzStats | None = None, name: str = "KafkaLockStep") -> type[RuleBasedStateMachine]:
    """A lock-step machine class for `cfg`.

    `invariants`: property names to check (None: every `Always` and `AlwaysStep` of the model);
    an unknown name raises ValueError. A violation a Finding excuses is recorded, not failed,
    whether its property was named or not (as `kcm explore --invariant` does). `alignment`: the
    implementation's `ModelAlignment` (default `ModelAlignment.model()`, under which it matches
    the model; switches off make it do what Kafka does, and the fuzzer then reports the remaining
    disagreements). `compare=False` runs the model alone. `stats` is updated as the machine runs."""
    probe = KafkaModel(cfg, symmetry=False)
    checked = [p for p in probe.properties() if isinstance(p, (Always, AlwaysStep))]
    if invariants is not None:
        wanted = list(invariants)
        unknown = [n for n in wanted if n not in {p.name for p in checked}]
        if unknown:
            raise ValueError(f"unknown invariant '{unknown[0]}'; the model has: "
                             + ", ".join(p.name for p in checked))
        checked = [p for p in checked if p.name in wanted]
    names = frozenset(p.name for p in checked)
    counters = stats if stats is not None else FuzzStats()
    impl_alignment = ModelAlignment.model() if alignment is None else alignment

    if cfg.overlapping:
        class Machine(LockStepMachine):
            @initialize(run=st.integers(min_value=0, max_value=len(cfg.overlapping)))
            def start_run(self, run: int) -> None:
                """Which run of the config to walk: 0 the cold start, i its i-th overlapping run."""
                self.start(run)
    else:  # no draw at all, so that seeds keep walking the way they did
        class Machine(LockStepMachine):
            pass

    Machine.cfg, Machine.checked_names, Machine.compare = cfg, names, compare
    Machine.alignment, Machine.stats = impl_alignment, counters
    Machine.__name__ = Machine.__qualname__ = name
    return Machine


class LockStepMachine(RuleBasedStateMachine):
    """The machine; `machine_for` makes a subclass per config (class attributes below)."""

    cfg: ModelConfig
    checked_names: frozenset[str]
    compare: bool
    alignment: ModelAlignment
    stats: FuzzStats

    def __init__(self) -> None:
        super().__init__()
        cls = type(self)
        # One KafkaModel per example: its observation cache (what the transition invariants read)
        # is only valid for the state it last expanded, and this keeps examples independent.
        self.model = KafkaModel(cls.cfg, symmetry=False)
        props = [p for p in self.model.properties() if p.name in cls.checked_names]
        self.state_props = [p for p in props if isinstance(p, Always)]
        self.step_props = [p for p in props if isinstance(p, AlwaysStep)]
        self.known = {n: k for n, k in self.model.known_violations().items() if n in cls.checked_names}
        self.state = self.model.init_states()[0]
        self.trace: list[tuple[Any, Any]] = [(None, self.state)]
        self.impl = StepCluster.initial(cls.cfg, alignment=cls.alignment) if cls.compare else None
        cls.stats.examples += 1
        cls.stats._changed()
        self._check_state(None, self.state)
        if self.impl is not None:
            self._compare(self.state)
        self.options = self._successors(self.state)

    def start(self, run: int) -> None:
        """Walk the config's overlapping run `run` (>= 1): bring the model and the implementation
        to the settled cluster by the same healing actions (`settle_path`), then start the trace
        there, at the model's initial state `run`."""
        if run == 0:
            return
        cold = self.state
        for action in settle_path(self.model.cfg, cold):
            if self.impl is not None:
                self.impl.apply(action)
        self.state = self.model.init_states()[run]
        self.trace = [(None, self.state)]
        self._check_state(None, self.state)
        if self.impl is not None:
            self._compare(self.state)
        self.options = self._successors(self.state)

    @rule(choice=st.integers(min_value=0, max_value=CHOICES - 1))
    def take(self, choice: int) -> None:
        """Take enabled action number `choice % n` in the model and the implementation; check."""
        stats = type(self).stats
        if not self.options:
            stats.stutters += 1  # nothing is enabled: a stuttering step
            return
        action, nxt = self.options[choice % len(self.options)]
        before = self.state
        self.trace.append((action, nxt))
        stats.steps += 1
        stats._changed()
        for prop in self.step_props:
            if not prop.holds(before, action, nxt):
                self._violated(prop, before, action, nxt)
        self._check_state(action, nxt)
        if self.impl is not None:
            try:
                self.impl.apply(action)
            except Exception as exc:  # noqa: BLE001 - any crash of the implementation is a finding
                self._fail(REFINEMENT, "refinement", [f"the implementation raised {type(exc).__name__}: {exc}",
                                                      *traceback.format_exc(limit=-3).splitlines()])
            self._compare(nxt)
        self.state = nxt
        self.options = self._successors(nxt)

    def teardown(self) -> None:
        if self.impl is not None:
            self.impl.close()

    # ---- checks --------------------------------------------------------------------------------

    def _successors(self, state) -> list:
        try:
            return self.model.successors(state)
        except Exception as exc:  # noqa: BLE001 - the model's step functions must not raise
            self._fail(MODEL_ERROR, "error", [f"expanding the last state raised {type(exc).__name__}: {exc}",
                                              *traceback.format_exc(limit=-3).splitlines()])

    def _check_state(self, action, state) -> None:
        """The state invariants on `state`, reached by `action` (None: the walk's initial state)."""
        before = self.trace[-2][1] if action is not None else state
        for prop in self.state_props:
            if not prop.holds(state):
                self._violated(prop, before, action, state)

    def _violated(self, prop, before, action, state) -> None:
        """`prop` fails on the step `(before, action, state)` (`(init, None, init)` for an initial
        state), the last of the walk: a known behaviour if its Finding's matcher accepts it
        (recorded, the walk goes on), else a failure."""
        known = self.known.get(prop.name)
        if known is not None and known.matches(before, action, state, lambda: self.trace):
            recorded = type(self).stats.known
            if prop.name not in recorded or len(self.trace) < len(recorded[prop.name]):
                recorded[prop.name] = tuple(self.trace)
            return
        self._fail(prop.name, prop.kind, [f"{prop.name}: {prop.doc}"])

    def _compare(self, expected) -> None:
        actual = _abstract(self.impl, expected)
        if actual != expected:
            self._fail(REFINEMENT, "refinement", describe_difference(expected, actual))

    def _fail(self, prop: str, kind: str, details: Sequence[str]):
        stats = type(self).stats
        failure = Failure(prop, kind, self.trace, details)
        stats.failures += 1
        if stats.first is None:
            stats.first, stats.first_example = failure.length, stats.examples
        if stats.shortest is None or failure.length < stats.shortest:
            stats.shortest = failure.length
        stats._changed()
        raise failure


# ---- running it ------------------------------------------------------------------------------------


@dataclass
class FuzzResult:
    """What a fuzz run found: the (shrunk) failure or None, Hypothesis's failing program (runnable
    once the machine class is defined, see `program_preamble`), and the counters."""

    cfg: ModelConfig
    failure: Failure | None
    program: list[str]
    stats: FuzzStats
    seed: int
    examples: int
    steps: int
    alignment: ModelAlignment

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def known(self) -> dict[str, tuple[tuple[Any, Any], ...]]:
        """The known 2.6 behaviours the walks met: property name -> the shortest walk to one."""
        return self.stats.known

    def known_reasons(self) -> dict[str, str]:
        """For each known behaviour met, its Finding (`KnownViolation.reason`), as the explorer reports it."""
        listed = KafkaModel(self.cfg, symmetry=False).known_violations()
        return {name: listed[name].reason for name in self.known}


def fuzz_settings(examples: int, steps: int) -> settings:
    """Settings for one `kcm fuzz` run: the CI profile's, with these bounds."""
    return settings(settings.get_profile(CI_PROFILE), max_examples=examples, stateful_step_count=steps,
                    derandomize=False)


def fuzz(cfg: ModelConfig, *, examples: int = 100, steps: int = 50, seed: int = 0,
         invariants: Iterable[str] | None = None, alignment: ModelAlignment | None = None,
         compare: bool = True, stats: FuzzStats | None = None) -> FuzzResult:
    """Run the lock-step machine for `cfg` from `seed` (deterministic for a given seed and code)
    and return what it found. `invariants` defaults to `default_invariants(cfg)`."""
    stats = stats if stats is not None else FuzzStats()
    chosen = default_invariants(cfg) if invariants is None else tuple(invariants)
    machine = hypothesis_seed(seed)(machine_for(cfg, invariants=chosen, alignment=alignment, compare=compare,
                                                stats=stats))
    program: list[str] = []
    failure = None
    with with_reporter(program.append), _without_local_constants():
        try:
            run_state_machine_as_test(machine, settings=fuzz_settings(examples, steps))
        except Failure as exc:
            failure = exc
            # Hypothesis attaches the failing program to the exception as notes (older versions
            # printed it through the reporter); keep the program's lines only.
            program += getattr(exc, "__notes__", [])
    program = [line for chunk in program for line in str(chunk).splitlines() if line.startswith("state")]
    return FuzzResult(cfg, failure, program, stats, seed, examples, steps,
                      ModelAlignment.model() if alignment is None else alignment)


@contextmanager
def _without_local_constants() -> Iterator[None]:
    """Hypothesis draws, now and then, an integer found as a literal in the source of the local
    modules loaded so far; which modules those are depends on how the run was started (`kcm fuzz`,
    pytest, which tests were collected), so the same seed would explore different runs. Pinning
    that pool to empty makes a seed mean one run. Internal API: without it, nothing is changed."""
    try:
        from hypothesis.internal.conjecture import providers
        empty = providers.Constants()
        saved = providers._get_local_constants
    except (ImportError, AttributeError):
        yield
        return
    providers.CONSTANTS_CACHE.cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = saved
        providers.CONSTANTS_CACHE.cache.clear()


def program_preamble(result: FuzzResult) -> list[str]:
    """Lines that define the machine class, so that Hypothesis's printed program runs as is."""
    invariants = default_invariants(result.cfg)
    return [
        "from kcm.checker.stateful import machine_for",
        "from kcm.impl.model_alignment import ModelAlignment",
        "from kcm.model.config import ModelConfig",
        f"KafkaLockStep = machine_for(ModelConfig.from_mapping({config_fields(result.cfg)!r}),",
        f"                            invariants={invariants!r}, alignment={result.alignment!r})",
    ]


def write_failure(result: FuzzResult, out_dir: str | Path, *, preset: str) -> dict[str, Path]:
    """Write the failure's trace as ITF (+ text, diagram, replay script) under `out_dir`; returns
    the paths (`kcm.checker.engine.traces.write_counterexample`'s, plus "program": the Hypothesis program).

    A model invariant's replay script replays the trace through the model and asserts the
    violation; a disagreement's replays it through the model and the implementation
    (`replay_lockstep`) and asserts the difference, since the model alone has nothing to show."""
    from kcm.checker.engine.traces import write_counterexample

    failure = result.failure
    assert failure is not None
    cfg = result.cfg
    model = KafkaModel(cfg, symmetry=False)
    off = [f for f in ModelAlignment.__dataclass_fields__ if not getattr(result.alignment, f)]
    stem = f"fuzz_{failure.prop}"
    paths = write_counterexample(
        model, failure.trace, out_dir, invariant=failure.prop, kind=failure.kind, stem=stem,
        config={"preset": preset, **config_fields(cfg), "fuzz_seed": result.seed, "alignment_off": off},
        model_spec=ModelSpec.of(MODEL_FACTORY, symmetry=False, **config_fields(cfg)),
        source=f"kcm fuzz --preset {preset} --seed {result.seed}",
        description="; ".join(failure.details)[:2000] or None)
    if failure.kind in ("refinement", "error"):
        paths["replay"].write_text(_lockstep_replay_script(paths["itf"].name), encoding="utf-8")
    paths["program"] = Path(out_dir) / f"{stem}_program.py"
    paths["program"].write_text("\n".join(program_preamble(result) + result.program) + "\n", encoding="utf-8")
    return paths


def write_known(result: FuzzResult, out_dir: str | Path, *, preset: str) -> dict[str, Path]:
    """Write the shortest walk to each known 2.6 behaviour met as `known_<property>.itf.json` (+
    text, diagram, replay script) under `out_dir`, as `kcm explore` does; returns property -> ITF path."""
    from kcm.checker.engine.traces import write_counterexample

    cfg = result.cfg
    model = KafkaModel(cfg, symmetry=False)
    kinds = {p.name: p.kind for p in model.properties() if isinstance(p, (Always, AlwaysStep))}
    reasons = result.known_reasons()
    written = {}
    for name, trace in result.known.items():
        paths = write_counterexample(
            model, trace, out_dir, invariant=name, kind=kinds[name], stem=f"known_{name}",
            config={"preset": preset, **config_fields(cfg), "fuzz_seed": result.seed},
            model_spec=ModelSpec.of(MODEL_FACTORY, symmetry=False, **config_fields(cfg)),
            source=f"kcm fuzz --preset {preset} --seed {result.seed}",
            description=f"known Kafka 2.6 behaviour ({reasons[name]})")
        written[name] = paths["itf"]
    return written


def _abstract(impl: StepCluster, expected):
    """The implementation as a model state, in the run of `expected`: which run a state belongs
    to is the model's bookkeeping (`Cluster.scenario`), the implementation has none."""
    return abstract(impl)._replace(scenario=expected.scenario)


def replay_lockstep(path: str | Path) -> tuple[int, list[str]]:
    """Replay an ITF trace written by `write_failure` through the model and the implementation
    (with the alignment it was found with) and return `(step, differing fields)` at the first
    difference. Raises `ReplayError` if the trace does not replay or shows no difference."""
    from kcm.checker.engine.itf import read_itf
    from kcm.checker.engine.replay import ReplayError, model_from_meta, replay_labels

    trace = read_itf(path)
    model = model_from_meta(trace.meta)
    off = (trace.meta.get("config") or {}).get("alignment_off") or []
    alignment = ModelAlignment(**{f: f not in off for f in ModelAlignment.__dataclass_fields__})
    inits = model.init_states()
    run = int(trace.meta.get("initial_index") or 0)
    actions, states = replay_labels(model, list(trace.actions[1:]), inits[run])
    impl = StepCluster.initial(model.cfg, alignment=alignment)
    try:
        if run:  # an overlapping run starts from the settled cluster
            for action in settle_path(model.cfg, inits[0]):
                impl.apply(action)
        for i, (action, expected) in enumerate(zip(actions, states[1:]), 1):
            try:
                impl.apply(action)
            except Exception as exc:  # noqa: BLE001
                return i, [f"the implementation raised {type(exc).__name__}: {exc}"]
            actual = _abstract(impl, expected)
            if actual != expected:
                return i, describe_difference(expected, actual)
    finally:
        impl.close()
    raise ReplayError(f"the implementation matches the model after all {len(actions)} steps")


def _lockstep_replay_script(itf_name: str) -> str:
    return f'''#!/usr/bin/env python3
"""Replays the kcm fuzz trace {itf_name} through the model and the implementation, and asserts that
they still differ at its last step. Run it with python, or collect it with pytest."""

from pathlib import Path

from kcm.checker.stateful import replay_lockstep

ITF = Path(__file__).with_name({itf_name!r})


def test_replay():
    with ITF.open() as f:
        steps = len(__import__("json").load(f)["states"]) - 1
    step, fields = replay_lockstep(ITF)
    assert step == steps, f"the difference shows at step {{step}}, not at the trace's last ({{steps}})"
    return fields


if __name__ == "__main__":
    for line in test_replay():
        print(line)
'''


__all__ = ["CHOICES", "CI_PROFILE", "DEFAULT_EXAMPLES", "DEFAULT_STEPS", "Failure", "FuzzResult", "FuzzStats",
           "LockStepMachine", "MODEL_ERROR", "REFINEMENT", "VARIANT_EXAMPLES", "VARIANT_STEPS", "default_bounds",
           "default_invariants", "fuzz", "fuzz_settings", "machine_for", "program_preamble", "replay_lockstep",
           "write_failure", "write_known"]
