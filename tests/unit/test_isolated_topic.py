"""An ended editor actor's one-partition topic leaves faust's conductor
(factstream.agents.worker.release_partition_topic).

faust unregisters it only when the actor's iteration of the stream ends; an actor revoked
while it waits on something else is cancelled there, and the topic stayed registered with
the revoked partition: the next assignment without that partition failed faust's assertion
in Conductor._update_tp_index, and the worker exited with status 1.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import faust
import pytest
from faust.types import TP

from factstream.agents.worker import release_partition_topic
from factstream.config import Settings
from factstream.streams.app import create_app, documents_topic


def _app_with_an_actor_topic() -> tuple[faust.App, Any, str]:
    settings = Settings.from_env({"FACTSTREAM_WORKER_APP_ID": "unit-isolated"})
    app = create_app(settings.kafka, settings.worker)
    topic = documents_topic(app, settings.kafka)
    name = topic.get_topic_name()
    # What faust's agent does for the actor of partition 3: a one-partition topic,
    # iterated, hence registered with the conductor.
    actor_topic = aiter(topic.clone(active_partitions={TP(name, 3)}))
    return app, actor_topic, name


def test_a_revoked_actors_topic_fails_the_next_assignment_while_registered() -> None:
    app, actor_topic, name = _app_with_an_actor_topic()
    assert actor_topic in app.topics._topics
    with pytest.raises(AssertionError):
        app.topics._update_tp_index({TP(name, 0)})  # partition 3 went to another worker


def test_releasing_an_ended_actors_topic_unregisters_it() -> None:
    app, actor_topic, name = _app_with_an_actor_topic()
    stream = cast("faust.StreamT[bytes]", SimpleNamespace(channel=actor_topic))
    release_partition_topic(stream)
    release_partition_topic(stream)  # again, as faust may when the iteration does end
    assert actor_topic not in app.topics._topics
    app.topics._update_tp_index({TP(name, 0)})  # the next assignment goes through
