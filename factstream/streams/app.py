"""The faust-streaming app: at-least-once, one actor per input partition, raw bytes in.

Known faust-streaming limits shape this (docs/design.md section 12): exactly-once mode
duplicates on rebalance and ``concurrency > 1`` breaks per-key order, so the app runs
at-least-once with one actor per partition (``isolated_partitions``), and the editor makes
effects idempotent.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import faust

from factstream.config import KafkaSettings, WorkerSettings
from factstream.topics.definitions import TopicName, topic_name

__all__ = ["StoppableApp", "create_app", "documents_topic"]


class StoppableApp(faust.App):
    """faust's app, except for a rebalance that meets it stopping (issue 25).

    faust then calls ``Consumer.close()``, which marks the aiokafka consumer closed and
    closes its client and coordinator from the app's event loop, not from the consumer
    thread's loop that owns them: the heartbeat task goes on in that thread, against a
    closed client ("Heartbeat session expired - marking coordinator dead" ten times a
    second), and the consumer's own stop returns at once since it is marked closed: no
    LeaveGroup, and the worker never exited. Here the rebalance is only ignored: the stop
    under way stops the consumer in its own thread, which leaves the group.
    """

    def _on_rebalance_when_stopped(self) -> None:
        return None


def create_app(kafka: KafkaSettings, worker: WorkerSettings) -> faust.App:
    """A faust app from settings; agents are registered by agents/."""
    # Tables live in memory; faust still makes its data dir (not its parents), so keep it
    # out of the cwd, in a folder that exists.
    datadir = Path(tempfile.gettempdir()) / "factstream-faust"
    datadir.mkdir(exist_ok=True)
    return StoppableApp(
        worker.app_id,
        broker=[f"kafka://{server.strip()}" for server in kafka.bootstrap_servers.split(",")],
        store="memory://",
        datadir=str(datadir / "{conf.id}-data"),
        autodiscover=False,
        web_enabled=False,
        processing_guarantee="at_least_once",
        topic_partitions=worker.partitions,
        topic_replication_factor=worker.replication,
        broker_session_timeout=worker.session_timeout_s,
        broker_heartbeat_interval=min(3.0, worker.session_timeout_s / 3),
        broker_commit_interval=worker.commit_interval_s,
        consumer_auto_offset_reset="earliest",
    )


def documents_topic(app: faust.App, kafka: KafkaSettings) -> faust.TopicT:
    """The input topic, as raw bytes: decoding is ours, so bad input can be dead-lettered."""
    return app.topic(
        topic_name(TopicName.DOCUMENTS, kafka.topic_prefix),
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
    )
