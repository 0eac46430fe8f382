"""Where a new topic's replicas go: every placement Kafka 2.6's topic creation can choose.

Without racks, `AdminUtils.assignReplicasToBrokersRackUnaware` (kafka@2.6.x:core/src/main/scala/
kafka/admin/AdminUtils.scala) walks an array of broker ids: partition i's first replica is
`brokerArray((i + startIndex) % n)`, its j-th follower `brokerArray((first + 1 + (shift + j) %
(n - 1)) % n)`, where `startIndex` and the follower `shift` (`nextReplicaShift`, plus one after
each round of n partitions) are both `rand.nextInt(n)`. The array's order is not the ids' order
on every path: the CreateTopics request takes it from the metadata cache
(`metadataCache.getAliveBrokers`, a `LongMap`'s values in hash order, kafka@2.6.x:core/src/main/
scala/kafka/server/AdminManager.scala `createTopics`), the ZooKeeper path sorts it by id
(kafka@2.6.x:core/src/main/scala/kafka/zk/AdminZkClient.scala `getBrokerMetadatas`), and an
operator may pass any explicit assignment. The model lets a creation choose any placement the
algorithm yields for any start index, any shift and any order of the broker array.

That set is closed under broker renaming (a renaming is a reorder of the array), so creation no
longer breaks symmetry (model/checking/symmetry.py), and the topics that exist from the start may sit on
any of these placements too (`spec.init_states`): each is an initial state, the spread of
`default_assignment` first.
"""

from __future__ import annotations

import itertools


def assign_replicas(broker_array: tuple[int, ...], partitions: int, replication_factor: int, start_index: int,
                    shift: int) -> tuple[tuple[int, ...], ...]:
    """`assignReplicasToBrokersRackUnaware` with its two random draws given (partition ids from 0)."""
    n = len(broker_array)
    out = []
    next_replica_shift = shift
    for i in range(partitions):
        if i > 0 and i % n == 0:
            next_replica_shift += 1
        first = (i + start_index) % n
        replicas = [broker_array[first]]
        for j in range(replication_factor - 1):
            replicas.append(broker_array[(first + 1 + (next_replica_shift + j) % (n - 1)) % n])
        out.append(tuple(replicas))
    return tuple(out)


def placements(brokers: int, partitions: int, replication_factor: int,
               first: tuple[tuple[int, ...], ...] = ()) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Every placement of a topic's `partitions` (one replica list per partition) Kafka can
    choose on `brokers` brokers; `first`, if given (and among them), is listed first, the others
    in sorted order. Computed when asked (the spec's `Tables` keeps the admin actions built from
    it, per admin state)."""
    if replication_factor > brokers or replication_factor < 1:
        return ()
    found = {assign_replicas(order, partitions, replication_factor, s, k)
             for order in itertools.permutations(range(brokers)) for s in range(brokers)
             for k in range(brokers)}
    rest = sorted(found - {first})
    return ((first,) + tuple(rest)) if first in found else tuple(rest)
