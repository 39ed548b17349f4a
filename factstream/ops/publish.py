"""Publish documents from a JSON Lines file to factstream.documents, keyed by namespace."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from pydantic import ValidationError

from factstream.config import KafkaSettings, WorkerSettings
from factstream.streams.admin import ensure_topics
from factstream.streams.changelog import ChangelogPublisher
from factstream.streams.decode import describe_validation_error
from factstream.topics.records import Document

__all__ = ["PublishReport", "publish_file", "read_documents"]

_CHUNK = 200


@dataclass
class PublishReport:
    published: int = 0
    rejected: list[tuple[int, str]] = field(default_factory=list)  # (line number, reason)


def read_documents(
    path: Path, report: PublishReport, namespace: str | None = None
) -> Iterator[Document]:
    """The valid documents of a JSON Lines file; invalid lines are recorded with why.

    Args:
        path: the file.
        report: collects the rejected lines.
        namespace: if given, every document goes to this namespace instead of its own.
    """
    with path.open("rb") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                data = orjson.loads(line)
                if namespace is not None and isinstance(data, dict):
                    data["namespace"] = namespace
                yield Document.model_validate(data)
            except orjson.JSONDecodeError as exc:
                report.rejected.append((number, f"not valid JSON: {exc}"))
            except ValidationError as exc:
                report.rejected.append((number, describe_validation_error(exc)))


async def publish_file(
    path: Path,
    kafka: KafkaSettings,
    worker: WorkerSettings,
    progress: Callable[[int], None] | None = None,
    namespace: str | None = None,
) -> PublishReport:
    """Validate and publish every line of ``path`` in file order; report the rejected lines."""
    await ensure_topics(kafka, worker)
    report = PublishReport()
    publisher = ChangelogPublisher(kafka, client_id="factstream-publish")
    await publisher.start()
    try:
        chunk: list[Document] = []
        for doc in read_documents(path, report, namespace):
            chunk.append(doc)
            if len(chunk) == _CHUNK:
                await _flush(publisher, chunk, report, progress)
        await _flush(publisher, chunk, report, progress)
    finally:
        await publisher.stop()
    return report


async def _flush(
    publisher: ChangelogPublisher,
    chunk: list[Document],
    report: PublishReport,
    progress: Callable[[int], None] | None,
) -> None:
    if not chunk:
        return
    await publisher.publish_documents(chunk)
    report.published += len(chunk)
    if progress is not None:
        progress(len(chunk))
    chunk.clear()
