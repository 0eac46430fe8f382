"""What the pages of `kcm serve` start from: the model, its initial states, and a counterexample.

The initial states are the explorer's (`Model.init_states()`), each labelled as the config makes
it: the cold start (every broker registered, each with its controller `Startup` event queued,
`kcm.model.spec.init_states`), once per placement of the existing topics that symmetry keeps, and,
for each of the config's overlapping runs, the settled cluster that run's perturbations start from.

A counterexample (an ITF file written by `kcm explore` or `kcm check`) names the model it was
found in (`#meta.model_factory` and `model_args`); it is replayed through that model
(`kcm.checker.engine.replay.replay_itf`: every step enabled, every state equal to the recorded
one, the recorded violation reproduced), so the pages show the model's states, not the file's.
Only the Kafka controller model's factories are accepted: a file cannot make the server import
anything else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kcm.checker.engine.contract import KnownViolation
from kcm.checker.engine.errors import UsageError
from kcm.checker.engine.itf import ItfTrace, read_itf
from kcm.checker.engine.model_spec import ModelSpec, load_factory
from kcm.checker.engine.replay import ReplayError, replay_itf
from kcm.exploration import MODEL_FACTORY, QUOTIENT_MODEL_FACTORY
from kcm.model.checking.kafka_model import KafkaModel, config_fields
from kcm.model.config import ConfigError, ModelConfig

#: The models a counterexample may name: the Kafka model, and the one `--liveness` explores.
KAFKA_FACTORIES = (MODEL_FACTORY, QUOTIENT_MODEL_FACTORY)


@dataclass(frozen=True)
class Origins:
    """The model a server steps through, its initial states with labels, and the replayed trace."""

    model: KafkaModel
    inits: tuple[Any, ...]
    labels: tuple[str, ...]
    #: The counterexample as `(action, state)` pairs (the first action None), its decoded file and name.
    trace: tuple[tuple[Any, Any], ...] | None = None
    itf: ItfTrace | None = None
    trace_file: str = ""
    #: The known Kafka 2.6 behaviours (`Model.known_violations`), by property.
    known: dict[str, KnownViolation] = field(default_factory=dict)


def init_labels(model: KafkaModel, inits: tuple[Any, ...]) -> tuple[str, ...]:
    """One label per initial state: the cold start (numbered when placements give several), or the
    settled cluster of overlapping run i with the perturbations that run allows."""
    cold = [s for s in inits if s.scenario == 0]
    out = []
    for state in inits:
        if state.scenario == 0:
            number = f" (topic placement {cold.index(state) + 1} of {len(cold)})" if len(cold) > 1 else ""
            out.append(f"cold start: every broker registered, no controller yet{number}")
        else:
            kinds = ", ".join(model.cfg.overlapping[state.scenario - 1])
            out.append(f"settled cluster, overlapping run {state.scenario} ({kinds})")
    return tuple(out)


def origins_of(model: KafkaModel, trace: tuple | None = None, itf: ItfTrace | None = None,
               trace_file: str = "") -> Origins:
    inits = tuple(model.init_states())
    return Origins(model, inits, init_labels(model, inits), trace, itf, trace_file, dict(model.known_violations()))


def from_config(cfg: ModelConfig) -> Origins:
    """The origins of a config without a counterexample."""
    return origins_of(KafkaModel(cfg))


def from_trace(path: Path, cfg: ModelConfig | None = None) -> Origins:
    """The origins of a counterexample file, replayed through its model. `cfg`, when the command
    line names a config too, must be the one the trace was found in. Every problem is one
    `UsageError` line naming the file."""
    itf = read_itf(path)  # a missing or corrupt file: one line already
    where = f"--trace {path}"
    factory = itf.meta.get("model_factory")
    if factory not in KAFKA_FACTORIES:
        named = f"model '{itf.meta.get('model')}'" if itf.meta.get("model") else "no kcm model"
        raise UsageError(f"{where}: the trace names {named} (#meta.model_factory {factory!r}); kcm serve "
                         "steps through the Kafka controller model, whose traces kcm explore and kcm check write")
    try:
        spec = ModelSpec.from_meta(itf.meta)
        model = load_factory(spec.factory)(**dict(spec.kwargs))
    except (ConfigError, TypeError, ValueError) as exc:
        raise UsageError(f"{where}: the model it names cannot be built ({exc})") from None
    if not isinstance(model, KafkaModel):
        raise UsageError(f"{where}: {factory} did not build the Kafka controller model")
    if cfg is not None and config_fields(cfg) != config_fields(model.cfg):
        differ = sorted(k for k, v in config_fields(cfg).items() if config_fields(model.cfg).get(k) != v)
        raise UsageError(f"{where}: the trace was found in another config than the one given "
                         f"(they differ in {', '.join(differ)}); drop --preset, --config and --variant "
                         "to step through the trace's own")
    try:
        actions, states = replay_itf(itf, model)
    except ReplayError as exc:
        raise UsageError(f"{where}: the trace does not replay through its model ({exc})") from None
    trace = tuple(zip([None, *actions], states))
    return origins_of(model, trace, itf, str(path))
