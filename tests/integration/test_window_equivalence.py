"""A window of documents in flight commits what one at a time commits (issue 18, item 2).

The stream is built to conflict: documents about the same subjects back to back, so a
document decided beside the ones before it sees other candidates than it would one at a time
and must be decided again, or (predicted dependencies, the default) wait for the commit of
the earlier document whose plan changes them. The changelog (every field but the processing
time ``created_at`` and the deployment's topic prefix) and the knowledge base (every fact,
true or false, with its history) must equal those of W = 1, and re-decisions (or waits) must
have happened.

With FACTSTREAM_WINDOW_CLARK=1 the same comparison runs on the first 300 CLARK-News
documents in one namespace (the stub LM's CLARK rules, bench/corpus.py); its figures go to
FACTSTREAM_WINDOW_RESULTS (a folder) when that is set (``make window-clark``). The LM double's
judgement depends on the whole prompt (Decisions.whole_prompt): a document decided on other
candidates, or the same ones in another order, than one at a time shows would change the
changelog, so equality cannot come by chance.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fixtures.decisions import Decisions
from fixtures.reference import (
    Scenario,
    Snapshot,
    assert_batches_in_input_order,
    assert_same,
    conflict_scenario,
    reference_snapshot,
    snapshot,
)
from fixtures.stack import Stack, StackFactory

pytestmark = pytest.mark.integration

WINDOW = "8"
_AGAIN = re.compile(r"decide '[^']+' again: candidates (\w+)")
_WAITS = re.compile(r"'[^']+' waits for the commit \d+ before it")
_PREDICTED = re.compile(r"'[^']+' judged on the predicted knowledge base")


def redecisions(stack: Stack) -> Counter[str]:
    """Re-decisions the workers logged, by reason."""
    logs = "".join(stack.worker_log(i) for i in range(len(stack.workers)))
    return Counter(_AGAIN.findall(logs))


def predicted(stack: Stack) -> int:
    """Documents the workers logged judged on the predicted knowledge base (predict)."""
    logs = "".join(stack.worker_log(i) for i in range(len(stack.workers)))
    return len(_PREDICTED.findall(logs))


def dependency_waits(stack: Stack) -> int:
    """Documents the workers logged waiting for an earlier one's commit (predicted)."""
    logs = "".join(stack.worker_log(i) for i in range(len(stack.workers)))
    return len(_WAITS.findall(logs))


async def windowed_run(
    stack_factory: StackFactory, scenario: Scenario, *, timeout_s: float, **env: str
) -> tuple[Stack, Snapshot]:
    """``scenario`` through one worker with a window of 8, everything published at once."""
    stack = await stack_factory(scenario.decisions, FACTSTREAM_EDITOR_WINDOW=WINDOW, **env)
    worker = stack.start_worker()
    await stack.publish(scenario.documents)
    await stack.wait_outcomes(len(scenario.documents), timeout_s=timeout_s)
    stack.kill_worker(worker, signal.SIGTERM)
    stack.assert_no_retries()
    stack.assert_committed_in_order()
    return stack, await snapshot(stack, scenario)


@pytest.mark.parametrize("dependencies", ["off", "extraction", "speculate", "predict"])
async def test_a_window_of_8_on_a_conflicting_stream_equals_one_at_a_time(
    stack_factory: StackFactory, dependencies: str
) -> None:
    """Decided at once and again where a commit changed the candidates (off), or after
    the commits their predicted dependencies wait for (extraction; speculate, the default,
    which judges at once where an earlier plan is not known yet): the same changelog. The
    serial reference is built once (fixtures.reference) and shared by the three."""
    scenario = conflict_scenario(30)
    scenario.decisions.delay = {"[doc-": 0.05}  # every LM call waits: the window fills
    reference = await reference_snapshot(stack_factory, scenario)
    stack, actual = await windowed_run(
        stack_factory, scenario, timeout_s=600, FACTSTREAM_EDITOR_DEPENDENCIES=dependencies
    )

    assert_same(actual, reference)
    assert actual.changelog_records == len(actual.edits)  # each batch published once
    assert_batches_in_input_order(await stack.changelog())
    ops = actual.ops()
    assert {"add", "invalidate", "rewrite", "close", "reinforce"} <= ops.keys(), ops
    again, waited = redecisions(stack), dependency_waits(stack)
    print(
        f"\nconflict-30 W=1 vs W={WINDOW} ({dependencies}): equal; {len(actual.edits)} edits "
        f"{ops}; re-decisions {dict(again)}; waited for an earlier commit {waited}"
    )
    if dependencies == "off":
        assert sum(again.values()) > 0, "no document decided again: the stream did not conflict"
    elif dependencies == "predict":  # decided on the knowledge base earlier plans leave
        assert predicted(stack) > 0, "no document judged on the predicted knowledge base"
    else:
        assert waited > 0, "no document waited for an earlier one: the stream did not conflict"
    assert stack.lm_stats()["max_in_flight"] > 2  # several documents' calls at once


@pytest.mark.skipif(
    os.environ.get("FACTSTREAM_WINDOW_CLARK") != "1",
    reason="300 CLARK-News documents twice; FACTSTREAM_WINDOW_CLARK=1 runs it",
)
@pytest.mark.parametrize("dependencies", ["speculate", "predict"])
async def test_the_first_300_clark_news_documents_in_one_namespace(
    stack_factory: StackFactory, dependencies: str
) -> None:
    from bench.corpus import load, stream_documents, stub_rules

    clark = load()
    docs = stream_documents(clark, 300, ["clark"])
    scenario = Scenario(
        "clark-300",
        [d.model_dump(mode="json") for d in docs],
        # The judgement depends on the whole prompt too (the candidates and their order).
        Decisions.from_json({**stub_rules(clark), "whole_prompt": True}),
    )
    began = time.monotonic()
    reference = await reference_snapshot(stack_factory, scenario, timeout_s=3600)
    serial_s = time.monotonic() - began
    began = time.monotonic()
    stack, actual = await windowed_run(
        stack_factory, scenario, timeout_s=3600, FACTSTREAM_EDITOR_DEPENDENCIES=dependencies
    )
    window_s = time.monotonic() - began

    assert_same(actual, reference)
    again, waited = redecisions(stack), dependency_waits(stack)
    figures = {
        "documents": len(docs),
        "window": int(WINDOW),
        "dependencies": dependencies,
        "edits": len(actual.edits),
        "ops": actual.ops(),
        "facts": actual.fact_count,
        "redecisions": dict(sorted(again.items())),
        "waited_for_an_earlier_commit": waited,
        "judged_on_the_predicted_knowledge_base": predicted(stack),
        "equal": True,
        "seconds_w1": round(serial_s, 1),
        "seconds_w8": round(window_s, 1),
        "lm": stack.lm_stats()["by_task"],
    }
    print(f"\nclark-300 W=1 vs W={WINDOW}: {json.dumps(figures)}")
    folder = os.environ.get("FACTSTREAM_WINDOW_RESULTS")
    if folder:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        path = Path(folder) / f"window-clark-300-{dependencies}-{stamp}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(figures, indent=2) + "\n")
