"""The answer to a controlled shutdown reaches the process that asked, even if its session expired
and it re-registered (with a higher broker epoch) while the request waited.

`KafkaServer.controlledShutdown` sends the request and awaits its answer on its own connection
(kafka@2.6.x:core/src/main/scala/kafka/server/KafkaServer.scala lines 581-630); the controller
answers there whatever the outcome (kafka@2.6.x:core/src/main/scala/kafka/server/KafkaApis.scala
`controlledShutdownCallback`), and a refusal is an error the broker retries on. A session expiry
does not restart the process, so the answer is not lost with the old broker epoch.
"""

from __future__ import annotations

from kcm.checker.engine.replay import replay_labels
from kcm.model.checking.kafka_model import config_fields, model_for
from kcm.model.cluster import Shutdown

from kcm.sweep import grid
from kcm.sweep.run import run_scope

SCOPE = "b2-rf1-p1-expiry+shutdown-cold"

#: Broker 0's session expires; broker 1 becomes controller; broker 0 asks for its controlled
#: shutdown with broker epoch 1, then re-registers (epoch 2); controller 1 refuses the request
#: (broker 0 is not live to it yet) and answers.
PREFIX = [
    "ZkSessionExpire(broker=0)", "BrokerNoticeExpiry(broker=0)", "ControllerProcessEvent(broker=0)",
    "ControllerProcessEvent(broker=1)", "BrokerRequestControlledShutdown(broker=0)",
    "ControllerProcessEvent(broker=0)", "ControllerProcessEvent(broker=1)", "ControllerProcessEvent(broker=1)",
    "ControllerProcessEvent(broker=1)", "ControllerProcessEvent(broker=1)", "NetworkDeliver(src=1, dst=0)",
    "NetworkDeliver(src=1, dst=0)", "NetworkDeliver(src=1, dst=0)", "NetworkDeliver(src=1, dst=1)",
]


def _scope() -> grid.Scope:
    return next(s for s in grid.load("gate").scopes if s.name == SCOPE)


def test_a_refused_request_of_a_reregistered_broker_is_answered_and_retried() -> None:
    model = model_for(**config_fields(_scope().config()))
    initial = list(model.init_states())[0]
    _, states = replay_labels(model, PREFIX, initial)
    end = states[-1]
    assert end.brokers[0].up and end.brokers[0].epoch > 1       # re-registered after the expiry
    assert end.brokers[0].shutdown is Shutdown.RETRY            # the refusal reached it: it retries


def test_the_expiry_and_shutdown_scope_passes() -> None:
    outcome = run_scope(_scope(), grid.Budget())
    assert outcome.verdict == "pass" and not outcome.violations and not outcome.known, outcome
    assert outcome.distinct == 31_760
