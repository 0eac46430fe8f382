"""kcm.impl.zk: the ZooKeeper layer of the reference implementation.

`protocol` is the `ZooKeeper` client protocol the controller code uses; `memory` is an embedded
server with fault injection and steppable watch delivery; `kazoo_backend` talks to a real server;
`handlers` is Kafka's path-keyed watch-handler registry (`ZooKeeperClient`'s) on top of the protocol.
"""
