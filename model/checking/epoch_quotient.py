"""The controller-epoch quotient: states that differ only in which controller epochs they hold.

Kafka 2.6's controller-move loops (docs/model.md, Findings 6) go round forever, but each turn wins
`/controller` again and so writes `/controller_epoch` one higher: no state repeats, and the
explored graph has no cycle, only a chain cut by `ModelConfig.controller_epoch_bound`. For
liveness the model is therefore explored modulo the *values* of controller epochs: two states are
identified when one is the other with its controller epochs renamed by an order-preserving map.
Each state is represented by its **epoch-normal form** (`normalize_epochs`): the positive
controller epochs it holds, ranked, become 1, 2, ..., k; 0 and -1 stay (0 is `/controller_epoch`
before the first election and "nothing seen yet" in a broker or an empty context, -1 a missing
znode's). A plain uniform shift would not close the loops: the epochs left behind by earlier
controllers (a partition state znode's, a broker's highest seen) stay while `/controller_epoch`
climbs, so only the gaps between them grow; ranking forgets the gaps.

Why this is sound (a bisimulation, so a cycle of the quotient is an infinite run of the model, and
every run of the model is a path of the quotient). The controller epochs a state holds are
`/controller_epoch` (whose zkVersion is the epoch itself in the model), each partition state
znode's `controller_epoch` and each controller's cached copy of it, each controller context's
`epoch` (`epochZkVersion` too), each broker's highest controller epoch seen and the epoch of its
last UpdateMetadata, and each request's stamp. The model only compares them with each other and
makes one new value, `/controller_epoch + 1` at an election, which is above every epoch the state
holds (every epoch is copied from `/controller_epoch`, which never decreases; `normalize_epochs`
checks it). So an order-preserving renaming commutes with every step and keeps every guard, and
fairness is kept too: actions name brokers and partitions, never epochs. Kafka compares them the
same way:

- a broker rejects a request whose controller epoch is below the highest it has seen
  (kafka@2.6.x:core/src/main/scala/kafka/server/ReplicaManager.scala `becomeLeaderOrFollower`,
  `stopReplicas`, `maybeUpdateMetadataCache`: `controllerEpoch < this.controllerEpoch`), then
  remembers the larger;
- every controller write is a multi behind `CheckOp(/controller_epoch, epochZkVersion)`, an
  equality of zkVersions (kafka@2.6.x:core/src/main/scala/kafka/zk/KafkaZkClient.scala
  `wrapRequestWithControllerEpochCheck`, lines 1872-1883, via `retryRequestsUntilConnected`), and the election
  sets `/controller_epoch` to `epoch + 1` at version `epochZkVersion`
  (`registerControllerAndIncrementControllerEpoch`): only "+1 of the current value";
- the partition state machine and the reassignment skip a znode written by a newer controller
  (`leaderIsrAndControllerEpoch.controllerEpoch > controllerContext.epoch`,
  kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala
  `doElectLeaderForPartitions`, KafkaController.scala `updateLeaderEpoch`).

What the quotient does not keep is the absolute value, which only the model's own bound reads
(`controller_epoch > controller_epoch_bound`): `EpochQuotientModel` lifts that bound to its
maximum, since the quotient is finite without it (k is at most the number of places an epoch can
be held). Leader epochs and partition zkVersions are not quotiented: they grow with writes of the
partition state, which neither 2.6 loop makes, and a loop that made them would be cut by the
lifted bound and reported as undecided (`pruned`), never as a failure.

The quotient is used for liveness only (`kcm explore --liveness`): the explorer still continues
from the states it generates (as with symmetry), so every state it checks a safety property on
and every trace it writes is a real execution; only the identification of visited states (the
fingerprint) is by normal form. A lasso's last state therefore equals its loop state up to the
renaming of controller epochs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from kcm.model.actions import BrokerStart
from kcm.model.catalogue.settledness import settled

#: The largest `max_controller_epoch` a config accepts: the bound the quotient model runs with.
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.cluster import NO_ZNODE, Broker, Cluster, PartitionZnode
from kcm.model.config import ModelConfig

LIFTED_EPOCH_BOUND = 32


def controller_epochs(s: Cluster) -> set[int]:
    """Every controller epoch value `s` holds (see the module docstring), 0 and -1 included."""
    zk = s.zk
    out = {zk.controller_epoch}
    out.update(z.controller_epoch for z in zk.partitions)
    for b in s.brokers:
        out.add(b.controller_epoch)
        out.add(b.metadata_epoch)
        out.add(b.ctx.epoch)
        out.update(z.controller_epoch for z in b.ctx.leadership)
    for queue in s.net:
        out.update(r.controller_epoch for r in queue)
    return out


def normalize_epochs(s: Cluster) -> Cluster:
    """`s` with its positive controller epochs replaced by their ranks 1..k (the identity when they
    already are 1..k). Raises ValueError if some epoch is above `/controller_epoch`, which the
    quotient's soundness needs not to happen."""
    values = controller_epochs(s)
    top = s.zk.controller_epoch
    positive = sorted(v for v in values if v > 0)
    if positive and positive[-1] != top:
        raise ValueError(f"controller epoch {positive[-1]} above /controller_epoch {top}: "
                         "the epoch quotient does not apply")
    if not positive or positive[-1] == len(positive):
        return s  # already 1..k
    rank = {v: i for i, v in enumerate(positive, 1)}
    return rename_epochs(s, lambda v: rank[v] if v > 0 else v)


def rename_epochs(s: Cluster, f: Callable[[int], int]) -> Cluster:
    """`s` with every controller epoch `v` it holds replaced by `f(v)` (`f` should keep 0 and -1
    and preserve the order of the positive ones, as `normalize_epochs`' ranking does)."""
    rank = {v: f(v) for v in controller_epochs(s)}

    def znode(z: PartitionZnode) -> PartitionZnode:
        return z if z is NO_ZNODE or z.controller_epoch <= 0 else z._replace(controller_epoch=rank[z.controller_epoch])

    def broker(b: Broker) -> Broker:
        ctx = b.ctx._replace(epoch=rank[b.ctx.epoch], leadership=tuple(map(znode, b.ctx.leadership)))
        return b._replace(controller_epoch=rank[b.controller_epoch], metadata_epoch=rank[b.metadata_epoch], ctx=ctx)

    zk = s.zk._replace(controller_epoch=rank[s.zk.controller_epoch], partitions=tuple(map(znode, s.zk.partitions)))
    net = tuple(tuple(r._replace(controller_epoch=rank[r.controller_epoch]) for r in q) if q else q for q in s.net)
    return s._replace(zk=zk, brokers=tuple(map(broker, s.brokers)), net=net)


class EpochQuotientModel(KafkaModel):
    """`KafkaModel` for liveness: states identified by their epoch-normal form, the epoch bound
    lifted, no symmetry (see the module docstring). `KafkaModel.pruned` tells the liveness checker
    whether a healing step of a state was not taken because of a bound (an event queue's capacity,
    or the lifted epoch bound)."""

    def __init__(self, cfg: ModelConfig, *, quotient: bool = True) -> None:
        # `quotient=False`: the plain model with its epoch bound, only telling `pruned` and
        # `is_settled` (what the liveness checker needs to never blame the bound).
        if quotient:
            cfg = dataclasses.replace(cfg, max_controller_epoch=LIFTED_EPOCH_BOUND)
        # one initial state per orbit under broker renaming, as every liveness graph (KafkaModel)
        super().__init__(cfg, symmetry=False, initial_orbits=True)
        self.quotient = "controller epochs" if quotient else ""
        if quotient:
            self.name += " modulo controller epochs"

    def fingerprint(self, state: Cluster) -> bytes:
        return super().fingerprint(normalize_epochs(state) if self.quotient else state)

    def locality(self, state: Cluster) -> bytes:
        # Of the same normal form as the fingerprint: states identified here must share it.
        return super().locality(normalize_epochs(state) if self.quotient else state)

    def is_settled(self, state: Cluster) -> bool:
        return settled(state)

    def is_unforced(self, action) -> bool:
        # A dead broker may stay dead (a decommissioned machine): EventuallySettled does not assume
        # restarts are fair, and asks that the cluster settle around the brokers that are down.
        return type(action) is BrokerStart


def quotient_model_for(**config) -> EpochQuotientModel:
    """The quotient model of a config given as plain fields (what liveness traces name for replay)."""
    return EpochQuotientModel(ModelConfig.from_mapping(config))
