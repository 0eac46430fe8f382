"""The Kafka model as the checkers see it: `KafkaModel`, the transition relation of
`kcm.model.spec` wrapped as a `kcm.checker.engine.contract.Model`, with the property catalogue,
the known Kafka 2.6 violations, the broker renamings (`symmetry`, run by run as `reduced_runs`
plans), fingerprints, and the state rendered for traces (`state_fields`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import marshal

from kcm.checker.engine.contract import KnownAs, KnownViolation, Model
from kcm.model.actions import ALL_ACTIONS
from kcm.model.catalogue import excused_violations, properties_for
from kcm.model.catalogue.settledness import Judge, quiescent
from kcm.model.checking import codec as state_codec
from kcm.model.checking import reduced_runs
from kcm.model.checking.symmetry import Symmetry
from kcm.model.cluster import NO_ZNODE, NONE, Cluster, Edge, bits
from kcm.model.config import ModelConfig
from kcm.model.known_loops import known_loops_for
from kcm.model.release import KAFKA_VERSION
from kcm.model.spec import Tables, World, enabled_actions, flags_for, heals, init_states, step
from kcm.model.tables import PARTITION_TABLE, REPLICA_TABLE


def _plain(x):
    """A record as nested tuples of plain ints (marshal's input)."""
    if type(x) is int:
        return x
    if isinstance(x, tuple):
        return tuple(map(_plain, x))
    return int(x)


class KafkaModel(Model):
    """The Kafka 2.6 controller model for one config, as a `kcm.checker.engine.contract.Model`.

    Fingerprints are 128-bit BLAKE2b digests of a canonical byte encoding (marshal, version 2:
    no back-references, so equal values always encode alike): one digest over the 128-bit digests
    of the parts (ZooKeeper, each broker, the network) side by side, then the budgets, ghost and
    run. Records are immutable and shared between a state and its successors (`step` even keeps
    the parent's tuples of brokers and requests when alike), so each part's digest is cached by
    value: a step that changes one broker re-encodes one broker. The cache is looked up by
    identity first (a part unchanged by a step is the very same object), then by value (hashing
    the nested tuples).
    """

    has_symmetry = True
    known_as = KnownAs(f"Kafka {KAFKA_VERSION}", KAFKA_VERSION)
    _CACHE_LIMIT = 1 << 20

    def __init__(self, cfg: ModelConfig, *, symmetry: bool = True, initial_orbits: bool = False) -> None:
        """`symmetry`: use the broker renamings, run by run (model/checking/reduced_runs.py): a run where
        renamings of one state are reachable again is reduced (`representative`), each other run
        starts from one initial state per orbit and is not.

        `initial_orbits`: start every run from one initial state per orbit under broker renaming
        (the first listed), and reduce nothing. What the liveness check explores with symmetry
        off: the graph reached from a renamed initial state is the renamed graph, and its
        properties (quiescence, healing, fairness over every broker) do not name brokers, so one
        initial state per orbit gives the same verdict."""
        self.cfg = cfg
        self.initial_orbits = initial_orbits
        self.flags = flags_for(cfg.variant)
        self.name = f"kafka-{KAFKA_VERSION}-controller{'/' + cfg.variant if cfg.variant else ''}"
        # Creation chooses among placements closed under renaming (model/placement.py), so every
        # renaming is a symmetry: symmetry is on when asked for and there are two brokers to swap.
        self.has_symmetry = symmetry and cfg.brokers > 1
        self._fp_cache: dict = {}
        self._fp_by_id: dict = {}
        self._inits: tuple[Cluster, ...] | None = None
        #: The runs reduced by symmetry (`reduced_runs.plan`), known with the initial states.
        self._reduced: frozenset[int] | None = None if self.has_symmetry else frozenset()
        self._obs_state: Cluster | None = None
        self._obs: dict = {}
        #: What the transition relation and the broker renamings remember for this config.
        self.tables = Tables(cfg)
        self.symmetry = Symmetry(cfg.brokers)
        #: Remembers settledness and a step's elections for the properties, which share it.
        self.judge = Judge(self.observe)
        self._properties = properties_for(cfg, self.observe, self.judge)

    # the transition relation
    def init_states(self):
        # Computed once: with overlapping runs it settles the cluster, and checkers ask again
        # (ITF files for `initial_index`, the fuzzer for each walk).
        if self._inits is None:
            inits = self.starts()
            if self.has_symmetry:
                self._inits, self._reduced = reduced_runs.plan(self.cfg, inits, self.symmetry)
            else:
                self._inits = tuple(reduced_runs.one_per_orbit(inits, self.symmetry)) if self.initial_orbits else inits
        return self._inits

    def starts(self) -> tuple[Cluster, ...]:
        """The states runs start from, before symmetry chooses among them (`init_states` above):
        what a model that starts elsewhere overrides (bench/reach.py, from the settled cluster)."""
        return init_states(self.cfg)

    @property
    def reduced_runs(self) -> frozenset[int]:
        """The runs (`run_of`) whose states are keyed by their representative; the others start
        from one initial state per orbit (model/checking/reduced_runs.py)."""
        if self._reduced is None:
            self.init_states()
        assert self._reduced is not None
        return self._reduced

    def run_of(self, state: Cluster) -> int:
        # The cold start is run 0, each overlapping run its number: `Cluster.scenario`, which no
        # step writes (model/checking/footprints.py) and no renaming touches.
        return state.scenario

    def successors(self, state: Cluster) -> list:
        out = []
        obs = {}
        for action in enabled_actions(self.cfg, state, self.tables):
            w = World(self.cfg, self.flags, state)
            nxt = step(self.cfg, state, action, w)
            if nxt is not None:
                out.append((action, nxt))
                # Keyed by identity (a dataclass hash costs more than the lookup saves); the
                # action is kept alongside so that its id cannot be reused while cached.
                obs[id(action)] = (action, w.obs)
        self._obs_state, self._obs = state, obs
        return out

    def enabled_actions(self, state: Cluster) -> list:
        return [a for a, _ in self.successors(state)]

    def step(self, state: Cluster, action) -> Cluster:
        nxt = step(self.cfg, state, action)
        if nxt is None:
            raise ValueError(f"{action!r} would overflow an event queue")
        return nxt

    def observe(self, state: Cluster, action) -> list:
        """What happened inside the step (`Edge`s and `Election`s); cached for the state last expanded."""
        if state is self._obs_state:
            entry = self._obs.get(id(action))
            if entry is not None and entry[0] is action:
                return entry[1]
        w = World(self.cfg, self.flags, state)
        step(self.cfg, state, action, w)
        return w.obs

    def properties(self):
        return self._properties

    def known_violations(self) -> dict[str, KnownViolation]:
        # The catalogue's Findings, each excusing only the violations that are its own.
        return excused_violations(self.cfg, self.judge)

    def por_info(self):
        from kcm.model.checking.footprints import independence  # partial-order reduction (model/checking/footprints.py)
        return independence(self.cfg, self.tables)

    # what the checkers need besides
    def fingerprint(self, state: Cluster) -> bytes:
        by_id = self._fp_by_id
        digests = []
        for part in (state.zk, *state.brokers, state.net):
            # First by identity (no hashing of the nested record), then by value.
            entry = by_id.get(id(part))
            if entry is not None and entry[0] is part:
                digests.append(entry[1])
            else:
                digests.append(self._part_digest(part))
        digests.append(marshal.dumps((state.spent, state.ghost, state.scenario), 2))
        # One digest of the parts' digests side by side (what feeding them one by one computes).
        return hashlib.blake2b(b"".join(digests), digest_size=16).digest()

    def _part_digest(self, part) -> bytes:
        cache, by_id = self._fp_cache, self._fp_by_id
        fp = cache.get(part)
        if fp is None:
            if len(cache) > self._CACHE_LIMIT:
                cache.clear()
            fp = hashlib.blake2b(marshal.dumps(_plain(part), 2), digest_size=16).digest()
            cache[part] = fp
        if len(by_id) > self._CACHE_LIMIT:
            by_id.clear()
        by_id[id(part)] = (part, fp)
        return fp

    def representative(self, state: Cluster) -> Cluster:
        reduced = self._reduced
        if reduced is None:
            reduced = self.reduced_runs
        return self.symmetry.representative(state) if state.scenario in reduced else state

    def locality(self, state: Cluster) -> bytes:
        # The ZooKeeper record's digest. Steps that commute touch different brokers' records or
        # queues and mostly leave ZooKeeper's alone (a delivery, a broker's own work), so both
        # orders of such a pair share it, and fewer candidates reach each owner than by
        # fingerprint (docs/benchmarks.md). The digest was just computed by `fingerprint`, so it
        # is found by identity.
        entry = self._fp_by_id.get(id(state.zk))
        if entry is not None and entry[0] is state.zk:
            return entry[1][:8]
        return self._part_digest(state.zk)[:8]

    def is_terminal(self, state: Cluster) -> bool:
        return quiescent(state)

    def is_healing(self, state: Cluster, action) -> bool:
        return heals(state, action)

    def pruned(self, state: Cluster) -> bool:
        # An enabled action with no successor is a step that returned None: a bound (the event
        # queues' capacity, `/controller_epoch` beyond `controller_epoch_bound`: TLC state
        # constraints) or, for a lost reply, a fault that would change nothing, which does not
        # heal. The successors just computed for `state` are reused (`_obs` holds the steps taken).
        if state is not self._obs_state:
            self.successors(state)
        enabled = enabled_actions(self.cfg, state, self.tables)
        if len(self._obs) == len(enabled):
            return False
        taken = {a for a, _ in self._obs.values()}
        return any(a not in taken and heals(state, a) for a in enabled)

    def is_quiescent(self, state: Cluster) -> bool:
        return quiescent(state)

    def known_loops(self):
        return known_loops_for(self.cfg.partitions)

    def action_names(self):
        return tuple(a.__name__ for a in ALL_ACTIONS)

    def describe_action(self, state: Cluster, action) -> str:
        from kcm.model.checking.labels import describe  # the event processed, the request delivered
        return describe(state, action, self.format_action(action))

    def edges_taken(self, state, action, next_state):
        # An invalid request is reported under its own key, outside the universe of table edges.
        return [(o.machine if o.valid else f"illegal {o.machine}", o.frm.name, o.to.name)
                for o in self.observe(state, action) if type(o) is Edge]

    def coverage_universe(self):
        return [(t.name, f.name, to.name) for t in (REPLICA_TABLE, PARTITION_TABLE) for f, to in t.edges()]

    def fields(self, state: Cluster) -> dict:
        return state_fields(state)

    def encode_state(self, state: Cluster) -> tuple:
        return state_codec.encode(state)  # its records' marshals, in a tuple (model/checking/codec.py)

    def decode_state(self, data: bytes | tuple) -> Cluster:
        if not isinstance(data, tuple):
            raise TypeError("a Kafka model state is encoded as a tuple of marshals (model/checking/codec.py)")
        return state_codec.decode(data)


def _set(mask: int) -> frozenset[int]:
    return frozenset(bits(mask))


def state_fields(s: Cluster) -> dict:
    """The state as named variables, ids as sets and enums by name, for traces and ITF files."""
    zk = s.zk
    out: dict = {
        "zk.session": _set(zk.session), "zk.controller": zk.controller,
        "zk.controller_epoch": zk.controller_epoch, "zk.broker_epochs": zk.broker_epochs,
        "zk.assignment": zk.assignment, "zk.adding": zk.adding, "zk.removing": zk.removing,
        "zk.partitions": tuple(None if z == NO_ZNODE else z._asdict() for z in zk.partitions),
        "zk.reassign": zk.reassign, "zk.preferred": _set(zk.preferred),
        "zk.delete_topics": _set(zk.delete_topics), "zk.isr_changes": _set(zk.isr_changes),
        "zk.watches": tuple(_set(w) for w in zk.watches),
        "zk.unclean_topics": _set(zk.unclean_topics),
        "zk.log_dir_events": _set(zk.log_dir_events),
    }
    for b, br in enumerate(s.brokers):
        c = br.ctx
        out[f"broker{b}"] = {
            "up": br.up, "connected": br.connected, "epoch": br.epoch, "active": br.active,
            "queue": tuple(f"{e.kind.name}({e.a},{e.b})" if e.a != NONE else e.kind.name for e in br.queue),
            "controller_epoch": br.controller_epoch, "metadata_epoch": br.metadata_epoch,
            "metadata_controller": br.metadata_controller,
            "replicas": tuple(r._asdict() for r in br.replicas), "shutdown": br.shutdown.name,
            "offline_dirs": _set(br.offline_dirs),
            "ctx": {"epoch": c.epoch, "live": _set(c.live), "broker_epochs": c.broker_epochs,
                    "shutting_down": _set(c.shutting_down), "assignment": c.assignment,
                    "leadership": tuple(None if z == NO_ZNODE else (z.leader, z.leader_epoch, z.isr)
                                        for z in c.leadership),
                    "partition_states": tuple(x.name for x in c.partition_states),
                    "replica_states": tuple(tuple(x.name for x in r) for r in c.replica_states),
                    "topics_to_delete": _set(c.topics_to_delete), "channel": _set(c.channel),
                    "offline_dirs": tuple(_set(d) for d in c.offline_dirs)},
        }
    n = len(s.brokers)
    out["net"] = {f"{c}->{d}": tuple(f"{r.kind.name}(c{r.controller_id},e{r.controller_epoch},be{r.broker_epoch})"
                                       for r in s.net[c * n + d])
                  for c in range(n) for d in range(n) if s.net[c * n + d]}
    out["spent"] = s.spent
    out["ghost"] = s.ghost
    out["scenario"] = s.scenario
    return out


def model_for(symmetry: bool = True, **config) -> KafkaModel:
    """The model of a config given as plain fields (how traces name their model for replay)."""
    return KafkaModel(ModelConfig.from_mapping(config), symmetry=symmetry)


def config_fields(cfg: ModelConfig) -> dict:
    """A config as the plain fields `model_for` takes back."""
    return {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg) if f.name != "description"}
