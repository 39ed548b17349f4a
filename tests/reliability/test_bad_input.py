"""Issue 9 item 4: malformed input, generated with hypothesis, never stops the stream.

Thousands of bad records (random bytes, wrong JSON shapes and types, huge and empty texts,
bad encodings, impossible timestamps, hostile namespace names, keys that disagree with the
document) go onto the documents topic, interleaved with valid documents that are as odd as
the contract allows. One worker process handles them all. Each bad record must be in the
dead-letter topic, once, with its original bytes and a reason naming what is wrong; each
valid one must be applied; and the knowledge it leaves must equal a reference: the same
valid documents, in their own namespaces, with no bad input around them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections import Counter
from typing import Any

from fixtures.decisions import Decisions
from fixtures.hostile import (
    BadRecord,
    bad_records,
    draw_all,
    interleave,
    publish_all,
    valid_documents,
)
from fixtures.stack import Stack, StackFactory

from factstream.topics.definitions import TopicName
from factstream.topics.records import DeadLetter, Fact

MAX_BYTES = 16_384  # small, so "huge" records are cheap to make; valid ones come close to it
SEED = 9


def reference_namespace(namespace: str) -> str:
    """The namespace of a valid document's twin in the reference run."""
    return "ref-" + hashlib.sha256(namespace.encode()).hexdigest()[:12]


def finish(doc: dict[str, Any], i: int) -> dict[str, Any]:
    """A generated valid document made unique: a marker the stub LM keys on, a unique id."""
    done = {**doc, "text": f"[doc-v{i}] {doc['text']}"}
    if "id" in done:
        done["id"] = f"{done['id']}#{i}"
    return done


def fact_of(i: int) -> str:
    return f"Valid fact {i} holds."


def encode(doc: dict[str, Any]) -> tuple[bytes, bytes]:
    return doc["namespace"].encode(), json.dumps(doc, ensure_ascii=False).encode()


async def facts_by_namespace(stack: Stack, namespaces: set[str]) -> dict[str, list[Fact]]:
    store = await stack.store()
    try:
        out = {}
        for ns in namespaces:
            page = await store.list_facts(ns, include_false=True, limit=10_000)
            out[ns] = page.facts
    finally:
        await store.close()
    return out


def canonical(facts: list[Fact]) -> list[tuple[Any, ...]]:
    """What a namespace knows, without ids (they derive from the namespace)."""
    return sorted(
        (
            f.text,
            f.truth,
            tuple((h.ts, h.truth) for h in f.history),
            f.first_seen,
            f.last_changed,
            f.replaces is None and f.replaced_by is None,
        )
        for f in facts
    )


async def test_bad_input_is_dead_lettered_one_for_one_and_valid_input_is_applied(
    stack_factory: StackFactory, scale: Any, figures: Any, window_env: Any
) -> None:
    n_bad, n_good = scale.pick(10_000, 500), scale.pick(250, 25)
    bad = draw_all(bad_records(MAX_BYTES), n_bad)
    good = [finish(d, i) for i, d in enumerate(draw_all(valid_documents(MAX_BYTES), n_good))]
    assert (len(bad), len(good)) == (n_bad, n_good), "hypothesis drew fewer examples"
    assert all(len(encode(d)[1]) <= MAX_BYTES for d in good)
    stream = interleave(bad, good, SEED)
    twins = [{**d, "namespace": reference_namespace(d["namespace"])} for d in good]

    decisions = Decisions(extract={f"[doc-v{i}]": [fact_of(i)] for i in range(n_good)})
    stack = await stack_factory(
        decisions,
        FACTSTREAM_WORKER_MAX_DOCUMENT_BYTES=str(MAX_BYTES),
        FACTSTREAM_EDITOR_TOP_K="3",
        **window_env.env,
    )
    worker = stack.start_worker()
    records = [(r.key, r.value) if is_bad else encode(r) for is_bad, r in stream]
    started = time.monotonic()
    where = await publish_all(stack, records + [encode(d) for d in twins])
    outcomes = await stack.wait_outcomes(len(where), timeout_s=scale.pick(3600, 300))
    seconds = time.monotonic() - started

    # The worker never crashed, never retried, and processed every record exactly once.
    assert worker.poll() is None, stack.worker_log()[-3000:]
    assert "unrecoverable" not in stack.worker_log()
    stack.assert_no_retries()
    assert set(outcomes) == set(where)
    expected = ["dead_letter" if is_bad else "applied" for is_bad, _ in stream]
    expected += ["applied"] * len(twins)
    wrong = [(w, outcomes[w], e) for w, e in zip(where, expected, strict=True) if outcomes[w] != e]
    assert not wrong, wrong[:10]
    stack.assert_committed_in_order()

    # Every bad record is in the DLQ once, with its own bytes and a reason that fits it.
    letters: list[DeadLetter] = await stack.read_topic(TopicName.DOCUMENTS_DLQ, DeadLetter)
    by_place = {f"{d.topic}[{d.partition}]@{d.offset}": d for d in letters}
    assert len(by_place) == len(letters) == n_bad
    for place, (is_bad, record) in zip(where, stream, strict=False):
        if is_bad:
            check_letter(by_place[place], record)

    # Every valid document is applied: exactly its fact, and the same as in the reference.
    namespaces = {d["namespace"] for d in good}
    facts = await facts_by_namespace(
        stack, namespaces | {reference_namespace(n) for n in namespaces}
    )
    for ns in namespaces:
        mine = [i for i, d in enumerate(good) if d["namespace"] == ns]
        assert sorted(f.text for f in facts[ns]) == sorted(fact_of(i) for i in mine)
        assert all(f.truth and len(f.history) == 1 for f in facts[ns])
        assert canonical(facts[ns]) == canonical(facts[reference_namespace(ns)])
    edits = await stack.changelog()
    assert len(edits) == 2 * n_good and all(e.op.value == "add" for e in edits)

    kinds = Counter(r.category for is_bad, r in stream if is_bad)
    figures.record(
        window_env.name("bad_input"),
        f"{n_bad} bad records ({len(kinds)} kinds) and {n_good} valid documents "
        f"(+{n_good} reference) in {seconds:.0f} s: {n_bad} dead-lettered, "
        f"{2 * n_good} applied, 0 lost, worker alive; kinds: {dict(sorted(kinds.items()))}",
        bad_records=n_bad,
        kinds=len(kinds),
        dead_lettered=len(letters),
        valid_documents=n_good,
        applied=2 * n_good,
        seconds=round(seconds, 1),
    )


def check_letter(letter: DeadLetter, record: BadRecord) -> None:
    assert base64.b64decode(letter.value) == record.value, record
    key = base64.b64decode(letter.key) if letter.key is not None else None
    assert key == record.key or (not key and not record.key), (key, record)
    assert letter.error_type == "BadInput", (letter.reason, record)
    assert any(words in letter.reason for words in record.expect), (letter.reason, record)
