"""The local stack as clusters: three Kafka brokers (KRaft, each also a controller) and three
Weaviate nodes on 127.0.0.1 (``factstream services up --cluster``).

Ports come from the same settings as the single-node stack, one node after another:

- Kafka: the brokers are the hosts of ``FACTSTREAM_KAFKA_BOOTSTRAP_SERVERS`` (exactly as
  many as the cluster has nodes); node i's controller listens on
  ``FACTSTREAM_LOCAL_KAFKA_CONTROLLER_PORT`` + i.
- Weaviate: node i answers REST on ``FACTSTREAM_WEAVIATE_HTTP_PORT`` + i and gRPC on
  ``FACTSTREAM_WEAVIATE_GRPC_PORT`` + i; its gossip and Raft ports are the settings' + 2i
  (the data and Raft RPC ports are one above each). Clients use node 0.
"""

from __future__ import annotations

from factstream.config import KafkaSettings, LocalSettings, Settings, WeaviateSettings
from factstream.errors import ServiceError
from factstream_lab.stack.base import LocalService
from factstream_lab.stack.kafka import KafkaQuorum, KafkaService, new_cluster_id
from factstream_lab.stack.process import CacheLayout
from factstream_lab.stack.weaviate import WeaviatePeers, WeaviateService

__all__ = [
    "CLUSTER_SIZE",
    "ClusterSettingsInvalid",
    "cluster_services",
    "kafka_cluster",
    "weaviate_cluster",
]

CLUSTER_SIZE = 3


class ClusterSettingsInvalid(ServiceError):
    """The settings do not describe a cluster (not one bootstrap server per broker)."""


def kafka_cluster(
    kafka: KafkaSettings, local: LocalSettings, layout: CacheLayout, size: int = CLUSTER_SIZE
) -> list[KafkaService]:
    """One KafkaService per broker of ``kafka.bootstrap_servers``, node 1 first."""
    servers = [s.strip() for s in kafka.bootstrap_servers.split(",") if s.strip()]
    if len(servers) != size:
        raise ClusterSettingsInvalid(
            f"a {size}-broker cluster needs {size} servers in FACTSTREAM_KAFKA_BOOTSTRAP_SERVERS"
            f" (one per broker), not {kafka.bootstrap_servers!r}"
        )
    controllers = tuple(local.kafka_controller_port + i for i in range(size))
    # Every node formats its storage with the same id, derived from where the cluster lives.
    cluster_id = new_cluster_id(f"{layout.data}|{','.join(servers)}")
    nodes = []
    for i, server in enumerate(servers):
        own = kafka.model_copy(update={"bootstrap_servers": server})
        ctrl = local.model_copy(update={"kafka_controller_port": controllers[i]})
        quorum = KafkaQuorum(i + 1, controllers, cluster_id)
        nodes.append(KafkaService(own, ctrl, layout, quorum))
    return nodes


def weaviate_cluster(
    weaviate: WeaviateSettings,
    local: LocalSettings,
    layout: CacheLayout,
    size: int = CLUSTER_SIZE,
) -> list[WeaviateService]:
    """``size`` Weaviate nodes on consecutive ports from the settings', node1 first."""
    raft_ports = tuple(local.weaviate_raft_port + 2 * i for i in range(size))
    nodes = []
    for i in range(size):
        own = weaviate.model_copy(
            update={"http_port": weaviate.http_port + i, "grpc_port": weaviate.grpc_port + i}
        )
        ports = local.model_copy(
            update={
                "weaviate_gossip_port": local.weaviate_gossip_port + 2 * i,
                "weaviate_data_port": local.weaviate_gossip_port + 2 * i + 1,
                "weaviate_raft_port": raft_ports[i],
                "weaviate_raft_rpc_port": raft_ports[i] + 1,
            }
        )
        peers = WeaviatePeers(i, raft_ports, local.weaviate_gossip_port)
        nodes.append(WeaviateService(own, ports, layout, peers))
    return nodes


def cluster_services(settings: Settings, layout: CacheLayout) -> dict[str, list[LocalService]]:
    """The Kafka and Weaviate clusters that ``settings`` describe, by service name."""
    return {
        "kafka": list(kafka_cluster(settings.kafka, settings.local, layout)),
        "weaviate": list(weaviate_cluster(settings.weaviate, settings.local, layout)),
    }
