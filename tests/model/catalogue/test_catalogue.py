"""The property catalogue (model/catalogue/): every declaration complete, every meaning its own,
every property name used in the documents, findings, triage files and presets declared, and
what is derived from it (the list, its order, the POR reads, the known violations) as pinned."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

import pytest
from kcm.checker.engine.contract import PropertyReads
from kcm.model.actions import ALL_ACTIONS
from kcm.model.catalogue import CATALOGUE, LISTED, LISTING, READS_WATCHES, known_violations, properties_for
from kcm.model.catalogue.declaration import JUDGED_FOR_KIND, Declaration, Kind
from kcm.model.catalogue.findings import FINDINGS
from kcm.model.checking.footprints import GHOST, ZK, property_reads
from kcm.model.checking.kafka_model import KafkaModel

from kcm import config

ROOT = Path(__file__).parents[3]
NAMES = {d.name for d in CATALOGUE}


def test_every_declaration_is_complete() -> None:
    for d in CATALOGUE:
        assert re.fullmatch(r"[A-Z][A-Za-z0-9]+", d.name), d.name
        assert d.meaning and "\n" not in d.meaning and not d.meaning.endswith("."), d.name
        assert d.judged in JUDGED_FOR_KIND[d.kind], d.name
        assert callable(d.predicate) and callable(d.listed), d.name
        assert (d.judges is None) or d.kind is Kind.TRANSITION, d.name
        # each Finding comes with the configs it applies to, once per property
        assert all(f in FINDINGS and callable(when) for f, when in d.findings), d.name
        assert len({f for f, _ in d.findings}) == len(d.findings), d.name
        assert d.kind is not Kind.GOAL or not d.findings, d.name


def test_no_two_properties_share_a_meaning() -> None:
    meanings = [d.meaning for d in CATALOGUE]
    assert len(meanings) == len(set(meanings)), [m for m in meanings if meanings.count(m) > 1]


def test_names_are_unique_but_for_one_goal() -> None:
    """ControlledShutdownMovesLeadership names both a goal and a transition invariant (both names
    are in reports and pinned results); no other name is declared twice."""
    names = [d.name for d in CATALOGUE]
    assert {n for n in names if names.count(n) > 1} == {"ControlledShutdownMovesLeadership"}
    assert len({(d.name, d.kind is Kind.GOAL) for d in CATALOGUE}) == len(CATALOGUE)


def test_every_finding_has_its_committed_trace() -> None:
    for finding in FINDINGS:
        itf = json.loads((ROOT / finding.trace).read_text())
        assert itf["#meta"]["invariant"] in {d.name for d in CATALOGUE for f, _ in d.findings if f is finding}, finding


def test_the_listing_names_only_declared_invariants() -> None:
    assert len(LISTING) == len(set(LISTING))
    assert set(LISTING) <= {d.name for d in CATALOGUE if d.kind is not Kind.GOAL}
    assert set(LISTED) == set(CATALOGUE)


def test_each_property_is_built_as_declared() -> None:
    cfg = config.load_preset("default")
    props = {(p.name, type(p).__name__): p for p in properties_for(cfg, lambda s, a: [])}
    for d in LISTED:
        if not d.listed(cfg):
            continue
        kind = {Kind.GOAL: "Sometimes", Kind.TRANSITION: "AlwaysStep"}.get(d.kind, "Always")
        assert props[(d.name, kind)].doc == d.meaning


# ---- every property name used anywhere is declared ----------------------------------------------

#: CamelCase words of the model's vocabulary that are not properties: actions, events, requests,
#: states, strategies, the liveness checker's properties and the known loops.
def _vocabulary() -> set[str]:
    from kcm.model.cluster import ElectLeadersAnswer, EventKind, RequestKind
    from kcm.model.known_loops import known_loops_for
    from kcm.model.states import PartitionState, ReplicaState
    words = {a.__name__ for a in ALL_ACTIONS} | {k.name for k in (*EventKind, *RequestKind)}
    words.add(ElectLeadersAnswer.__name__)   # an observation the documents name
    words |= {s.name for s in (*ReplicaState, *PartitionState)} | {loop.name for loop in known_loops_for(1)}
    return words | {"EventuallyQuiescent", "EventuallySettled", "QuiescenceAlwaysReachable"}


def _documents() -> list[Path]:
    docs = [ROOT / "docs" / "model.md", ROOT / "docs" / "checking.md"]
    docs += sorted((ROOT / "bench" / "mutation" / "triage").glob("*.toml"))
    docs += sorted((ROOT / "bench" / "mutation").glob("*.toml")) + sorted((ROOT / "kcm" / "presets").glob("*.toml"))
    docs += sorted(p for p in (ROOT / "docs" / "findings").iterdir() if p.suffix in (".toml", ".txt", ".md"))
    return docs


_CAMEL = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+){2,}\b")


def test_every_property_name_used_in_the_documents_is_declared() -> None:
    """A name is a property's when it is a CamelCase word of three humps or more that is no
    other word of the model's vocabulary and reads like a declared name (a close match or a
    prefix of one: a property renamed, misspelled, shortened or dropped); Kafka's own identifiers
    match none."""
    vocabulary = _vocabulary()
    unknown = []
    for path in _documents():
        for word in set(_CAMEL.findall(path.read_text(encoding="utf-8"))) - NAMES - vocabulary:
            close = difflib.get_close_matches(word, NAMES, n=1, cutoff=0.85) or [n for n in NAMES if n.startswith(word)]
            if close:
                unknown.append(f"{path.relative_to(ROOT)}: {word} (did you mean {close[0]}?)")
    assert not unknown, unknown


def test_the_committed_traces_name_declared_properties() -> None:
    """A trace names the property it violates, or the known livelock (`known <loop>`) it shows."""
    vocabulary = _vocabulary()
    for path in sorted((ROOT / "docs" / "findings").glob("*.itf.json")):
        invariant = json.loads(path.read_text())["#meta"].get("invariant")
        assert invariant is None or invariant in NAMES or invariant.removeprefix("known ") in vocabulary, path


# ---- what is derived from it, pinned --------------------------------------------------------------


def _reads_before_the_catalogue(nb: int) -> dict:
    """The POR table `footprints.property_reads` kept by name before the catalogue."""
    deliver, event = frozenset({"deliver", "deliver-plain", "deliver-meta"}), frozenset({"cpe", "cpe-life"})
    ctl = frozenset(("ctl", b) for b in range(nb))
    rms = frozenset(("rm", b) for b in range(nb))
    metas = frozenset(("meta", b) for b in range(nb))
    life = frozenset(("life", b) for b in range(nb))
    nets = frozenset(("net", c, d) for c in range(nb) for d in range(nb))
    return {
        "SingleActiveControllerPerEpoch": PropertyReads(ctl),
        "UniqueEpochSender": PropertyReads(metas | nets),
        "LeaderInIsrOrNone": PropertyReads(frozenset({ZK})),
        "IsrNonEmpty": PropertyReads(frozenset({ZK})),
        "OnlyActiveControllerActs": PropertyReads(frozenset({GHOST})),
        "NoStaleContextWhenInactive": PropertyReads(ctl),
        "NoControllerWatchesWhenInactive": PropertyReads(ctl | {ZK}),
        "NoQueuedRequestsWhenInactive": PropertyReads(ctl | nets),
        "ReassignmentSetsDisjoint": PropertyReads(frozenset({ZK})),
        "ZkWritesFenced": PropertyReads(ctl | {ZK}, event),
        "StaleControllerRejected": PropertyReads(metas, deliver),
        "ZkLeaderEpochMonotonic": PropertyReads(frozenset({ZK})),
        "ControllerBumpsLeaderEpoch": PropertyReads(frozenset({ZK}), event),
        "BrokerLeaderEpochMonotonic": PropertyReads(rms, deliver),
        "NoStaleBrokerEpochApplied": PropertyReads(rms | metas | life | nets, deliver),
        "MetadataBeforeLeaderAndIsr": PropertyReads(rms | metas | nets, deliver),
        "NoShuttingDownJoinsIsr": PropertyReads(ctl | {ZK}, frozenset({"leader"})),
        "CacheMatchesZkAfterWrite": PropertyReads(ctl | {ZK}, event),
    }


@pytest.mark.parametrize("preset", ["tiny", "default"])
def test_the_por_reads_are_as_before(preset: str) -> None:
    cfg = config.load_preset(preset)
    reads = property_reads(cfg)
    expected = _reads_before_the_catalogue(cfg.brokers)
    for d in CATALOGUE:
        if d.listed(cfg):   # (the properties of partition additions are not listed on these presets)
            assert reads(d.name) == expected.get(d.name), d.name


F4 = "Findings 4: a replica removed by a reassignment can believe it leads, for good"
F8 = "Findings 8: a shutting-down broker rejoins the ISR"
F9 = "Findings 9: a preferred election for a partition without leadership stays in ZooKeeper"
F10 = "Findings 10: /controller deleted while the controller's own watch is spent leaves no controller"


@pytest.mark.parametrize("preset, expected", [
    ("tiny", {"NoShuttingDownJoinsIsr": F8, "AdminZnodesConsumed": F9, "PreferredElectionZnodeConsumed": F9}),
    ("default", {"NoShuttingDownJoinsIsr": F8, "AdminZnodesConsumed": F9, "PreferredElectionZnodeConsumed": F9,
                 "ActiveControllerOnceSettled": F10, "AtMostOneBelievedLeaderAfterQuiescence": F4}),
])
def test_the_known_violations_are_as_before(preset: str, expected: dict) -> None:
    assert known_violations(config.load_preset(preset)) == expected


def test_only_the_watch_property_reads_the_watches() -> None:
    assert {"ControllerWatchesArmed", "NoControllerWatchesWhenInactive"} == READS_WATCHES


def test_each_model_owns_its_judge() -> None:
    """The memos of settledness and elections belong to the model: two models never share one,
    and a model's properties ask its own."""
    cfg = config.load_preset("tiny")
    a, b = KafkaModel(cfg), KafkaModel(cfg)
    assert a.judge is not b.judge
    s = a.init_states()[0]
    for name in ("CacheMatchesZk", "NoDeadLeaderAdvertised"):  # judged quiescent, and settled
        next(p for p in a.properties() if p.name == name).holds(s)
    assert a.judge._quiescent[0] is s and a.judge._settled[0] is s
    assert b.judge._quiescent[0] is None and b.judge._settled[0] is None


def test_declarations_are_frozen() -> None:
    with pytest.raises(AttributeError):
        CATALOGUE[0].name = "Renamed"  # type: ignore[misc]
    assert all(isinstance(d, Declaration) for d in CATALOGUE)
