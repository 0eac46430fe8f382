"""`KafkaConfig`: the broker settings the controller, the replica manager and the server read.

Mirrors the few entries of kafka@2.6.x:core/src/main/scala/kafka/server/KafkaConfig.scala that
the ZooKeeper-era controller depends on, with Kafka's defaults where they exist:

| field                                   | Kafka property                              | default |
|-----------------------------------------|---------------------------------------------|---------|
| `unclean_leader_election_enable`        | unclean.leader.election.enable              | false   |
| `delete_topic_enable`                   | delete.topic.enable                         | true    |
| `auto_leader_rebalance_enable`          | auto.leader.rebalance.enable                | true    |
| `leader_imbalance_check_interval_s`     | leader.imbalance.check.interval.seconds     | 300     |
| `leader_imbalance_per_broker_percentage`| leader.imbalance.per.broker.percentage      | 10      |
| `controlled_shutdown_max_retries`       | controlled.shutdown.max.retries             | 3       |
| `controlled_shutdown_retry_backoff_ms`  | controlled.shutdown.retry.backoff.ms        | 5000    |
| `replica_lag_time_max_ms`               | replica.lag.time.max.ms                     | 30000   |
| `isr_change_propagation_ms`             | (the ISR-propagation task's period)         | 2500    |
| `isr_change_propagation_blackout_ms`    | (ReplicaManager.IsrChangePropagationBlackOut) | 5000  |
| `isr_change_propagation_interval_ms`    | (ReplicaManager.IsrChangePropagationInterval) | 60000 |

Two fields are not Kafka's: `flags`, the historical bug to put back (`kcm.model.variants.Flags`,
honoured by the implementation exactly where the model honours it), and `alignment`, the places
where the model abstracts Kafka differently (`kcm.impl.model_alignment`). `unclean_leader_election_enable`
stands for the topic-level setting too: one value applies to every topic, as in the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kcm.impl.model_alignment import ModelAlignment
from kcm.model.variants import Flags


@dataclass(frozen=True, slots=True)
class KafkaConfig:
    """The settings shared by every broker of one cluster (the broker id is the server's own)."""

    unclean_leader_election_enable: bool = False
    delete_topic_enable: bool = True
    auto_leader_rebalance_enable: bool = False
    leader_imbalance_check_interval_s: float = 300.0
    leader_imbalance_per_broker_percentage: int = 10
    controlled_shutdown_enable: bool = True
    controlled_shutdown_max_retries: int = 3
    controlled_shutdown_retry_backoff_ms: int = 5000
    replica_lag_time_max_ms: int = 30000
    isr_change_propagation_ms: int = 2500
    isr_change_propagation_blackout_ms: int = 5000
    isr_change_propagation_interval_ms: int = 60000
    #: How often a follower's fetcher thread fetches (threaded mode only).
    replica_fetch_interval_ms: int = 100
    #: Backoff of a request send thread after a failed send (Kafka: 100 ms, fixed).
    request_send_backoff_ms: int = 100
    flags: Flags = field(default_factory=Flags)
    alignment: ModelAlignment = field(default_factory=ModelAlignment)

    def __post_init__(self) -> None:
        # A setting that is accepted and never read would promise a behaviour that is not there:
        # these two keep Kafka's names and defaults but are refused until something reads them.
        for name, default in _NOT_READ_YET.items():
            if getattr(self, name) != default:
                raise ValueError(f"KafkaConfig field `{name}` does nothing yet (the implementation never reads it); "
                                 f"leave it at {default!r}")


#: Fields that mirror Kafka's settings but that nothing reads yet, with the only value allowed.
_NOT_READ_YET = {"controlled_shutdown_enable": True, "isr_change_propagation_ms": 2500}
