"""Every property the model registers fails through the explorer on a seeded controller mistake
(tests/model/catches/bugs.py), and holds on the clean model of the same config.

The mistake is loaded as a copy of the model with one source file changed (the mutation loader,
`kcm.checker.mutation.load`), explored with that property alone, and the property must be the one
violation, at its pinned shortest length; a goal must be left unmet. A property Kafka 2.6 is known
to break (model/catalogue/findings.py) is reported among the known violations: it counts the same, and the
clean run shows that the clean model does not break it there. The completeness test reads the
properties the model registers on every config the tests and the mutation suite use, so a new
property cannot be added without its mistake.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kcm.checker import mutation as M
from kcm.checker.engine.bfs import explore
from kcm.checker.engine.contract import Sometimes
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.config import ModelConfig

from kcm import config
from tests.model.catches.bugs import GOALS, INVARIANTS, UNCAUGHT, Bug

REPO = Path(__file__).resolve().parents[3]
SUITE = REPO / "bench" / "mutation"
#: The configs whose properties must all have a mistake: the test presets, the variants' presets
#: and the mutation suite. Only their models' lists of properties are read: none is explored.
PRESETS = ("tiny", "zkfaults", "default", "addparts", "elect", "logdir", *(f"v{i}" for i in range(1, 14)))


def config_of(name: str) -> ModelConfig:
    """A preset by name, or a file of the mutation suite (`m-*.toml`)."""
    return config.load_config_file(SUITE / name) if name.endswith(".toml") else config.load_preset(name)


def registered() -> tuple[set[str], set[str]]:
    """The names of the invariants and of the goals the model registers on any of the configs."""
    invariants: set[str] = set()
    goals: set[str] = set()
    for name in (*PRESETS, *sorted(p.name for p in SUITE.glob("*.toml"))):
        for prop in KafkaModel(config_of(name)).properties():
            (goals if isinstance(prop, Sometimes) else invariants).add(prop.name)
    return invariants, goals


def explore_with(bug: Bug, name: str, goals_required: bool):
    """The model with `bug` seeded, explored for property `name` alone on the bug's config."""
    sources = M.read_sources()
    source = sources[bug.file]
    assert source.count(bug.old) == 1, f"model/{bug.file} no longer holds the text of {name}'s mistake once"
    loaded = M.load(source.replace(bug.old, bug.new), bug.file, sources)
    try:
        model = loaded.spec.KafkaModel(config_of(bug.config))
        return explore(model, properties=[name], goals_required=goals_required)
    finally:
        M.unload(loaded)


def test_every_registered_property_has_a_mistake_or_a_reason() -> None:
    invariants, goals = registered()
    missing = (invariants - set(INVARIANTS) - set(UNCAUGHT)) | (goals - set(GOALS) - set(UNCAUGHT))
    unknown = (set(INVARIANTS) - invariants) | (set(GOALS) - goals) | (set(UNCAUGHT) - invariants - goals)
    assert not missing, f"properties without a seeded mistake in tests/model/catches/bugs.py: {sorted(missing)}"
    assert not unknown, f"entries of tests/model/catches/bugs.py naming no property of the model: {sorted(unknown)}"
    assert not set(UNCAUGHT) & (set(INVARIANTS) | set(GOALS)), "a property both caught and uncaught"


@pytest.mark.parametrize("name", sorted(INVARIANTS))
def test_the_invariant_fails_on_its_mistake(name: str) -> None:
    bug = INVARIANTS[name]
    result = explore_with(bug, name, goals_required=False)
    found = [(v.name, v.trace_length) for v in (*result.violations, *result.known_violations)]
    assert found == [(name, bug.length)], result.summary_lines()


@pytest.mark.parametrize("name", sorted(GOALS))
def test_the_goal_is_unreachable_with_its_mistake(name: str) -> None:
    result = explore_with(GOALS[name], name, goals_required=True)
    assert [(v.name, v.kind, v.trace_length) for v in result.violations] == [(name, "sometimes", None)], \
        result.summary_lines()
    assert not result.known_violations and not result.goals[name].met


def _by_config() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for table in (INVARIANTS, GOALS):
        for name, bug in table.items():
            out.setdefault(bug.config, set()).add(name)
    return out


@pytest.mark.parametrize("config_name", sorted(_by_config()))
def test_the_clean_model_keeps_the_properties_on_their_configs(config_name: str) -> None:
    """What the mistakes break, the clean model keeps on the same config (known violations
    included), and it reaches the goals: the mistake, not the config, is caught. A config with no
    goal to reach is explored one step beyond its longest pinned trace (a variant's preset whole
    takes most of a minute)."""
    names = _by_config()[config_name]
    goals = names & set(GOALS)
    depth = None if goals else max(INVARIANTS[n].length or 0 for n in names) + 1
    result = explore(KafkaModel(config_of(config_name)), properties=sorted(names), stop_on_violation=False,
                     max_depth=depth)
    assert result.verdict in ("pass", "incomplete") and not result.violations, result.summary_lines()
    assert not result.known_violations, result.summary_lines()
    assert all(result.goals[n].met for n in goals)
