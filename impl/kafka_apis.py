"""`KafkaApis`: the broker's request entry point for the controller-related APIs.

kafka@2.6.x:core/src/main/scala/kafka/server/KafkaApis.scala. Control requests (LeaderAndIsr,
UpdateMetadata, StopReplica) first pass the broker-epoch check of KIP-380 (`isBrokerEpochStale`): a
request stamped with a broker epoch older than this incarnation's was meant for a previous
incarnation of the broker and is answered STALE_BROKER_EPOCH without being applied. Variant V5 drops
the check. The rest goes to the `ReplicaManager`.

A ControlledShutdownRequest goes to this broker's controller module, which answers later, from its
event thread, through `respond` (Kafka's `sendResponseExemptThrottle` in the callback). A Fetch
(threaded mode only) goes to the replica manager's leader side.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kcm.impl.requests import (
    ControlledShutdownRequest,
    ControlledShutdownResponse,
    Errors,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
)
from kcm.impl.zk_data import TopicPartition


@dataclass(frozen=True, slots=True)
class ControlledShutdownCall:
    """A ControlledShutdownRequest with the connection its response goes back on."""

    request: ControlledShutdownRequest
    respond: Callable[[ControlledShutdownResponse], None]


@dataclass(frozen=True, slots=True)
class FetchRequest:
    topic_partition: TopicPartition
    replica_id: int
    leader_epoch: int


class KafkaApis:
    def __init__(self, server) -> None:
        self._server = server

    def handle(self, request):
        server = self._server
        if isinstance(request, (LeaderAndIsrRequest, UpdateMetadataRequest, StopReplicaRequest)):
            if self._is_broker_epoch_stale(request.broker_epoch):
                server.timeline.append("fenced", request.controller_id, epoch=request.controller_epoch,
                                       peer=server.broker_id,
                                       detail=f"{request.api_key.value} for broker epoch {request.broker_epoch} < "
                                              f"{server.broker_epoch}: STALE_BROKER_EPOCH")
                return {LeaderAndIsrRequest: LeaderAndIsrResponse, UpdateMetadataRequest: UpdateMetadataResponse,
                        StopReplicaRequest: StopReplicaResponse}[type(request)](Errors.STALE_BROKER_EPOCH)
            if isinstance(request, LeaderAndIsrRequest):
                return server.replica_manager.become_leader_or_follower(request)
            if isinstance(request, UpdateMetadataRequest):
                return server.replica_manager.maybe_update_metadata_cache(request)
            return server.replica_manager.stop_replicas(request)
        if isinstance(request, ControlledShutdownCall):
            return self._handle_controlled_shutdown(request)
        if isinstance(request, FetchRequest):
            return server.replica_manager.handle_fetch(request.topic_partition, request.replica_id,
                                                       request.leader_epoch)
        raise TypeError(f"unexpected request {request!r}")

    def _is_broker_epoch_stale(self, broker_epoch_in_request: int) -> bool:
        if self._server.config.flags.broker_change_by_id_only:   # V5: no KIP-380 check
            return False
        return broker_epoch_in_request != -1 and broker_epoch_in_request < self._server.broker_epoch

    def _handle_controlled_shutdown(self, call: ControlledShutdownCall) -> None:
        def callback(result) -> None:
            if isinstance(result, Exception):
                call.respond(ControlledShutdownResponse(_error_of(result)))
            else:
                call.respond(ControlledShutdownResponse(Errors.NONE, frozenset(result)))

        self._server.controller.controlled_shutdown(call.request.broker_id, call.request.broker_epoch, callback)


def _error_of(error: Exception) -> Errors:
    name = type(error).__name__
    return {"ControllerMovedException": Errors.NOT_CONTROLLER, "StaleBrokerEpochException": Errors.STALE_BROKER_EPOCH,
            "BrokerNotAvailableException": Errors.BROKER_NOT_AVAILABLE}.get(name, Errors.UNKNOWN_SERVER_ERROR)
