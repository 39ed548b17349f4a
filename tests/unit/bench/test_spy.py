"""bench.spy: py-spy samples go to the model, a third-party package, ours, or the stdlib."""

from __future__ import annotations

from bench.spy import owner, summarise

_SITE = "/v/lib/python3.11/site-packages"
_MODEL = (
    "thread (1);run (threading.py:1);OnnxEmbedder.encode (/w/factstream/embed/onnx_embedder.py:9)"
    ";_run (onnxruntime/x.py:1)"
)
_KAFKA = (
    "thread (2);_run_once (asyncio/base_events.py:1845);handle (/w/factstream/agents/editor.py:5)"
    f";send (/w/factstream/streams/changelog.py:7);add_message ({_SITE}/aiokafka/producer.py:3)"
    ";pack (struct.py:1)"
)
_LOOP = "thread (2);_run_once (asyncio/base_events.py:1845);select (selectors.py:451)"
_OURS = (
    "thread (2);handle (/w/factstream/agents/editor.py:5);plan (/w/factstream/knowledge/apply.py:9)"
)


def test_each_stack_has_one_owner() -> None:
    assert owner(_MODEL) == "embedding model"
    assert owner(_KAFKA) == "aiokafka"  # its stdlib callee counts as the package's
    assert owner(_LOOP) == "stdlib (event loop, threads)"
    assert owner(_OURS) == "factstream"


def test_summary_counts_cpu_seconds_at_the_rate() -> None:
    raw = "\n".join([f"{_MODEL} 50", f"{_KAFKA} 30", f"{_OURS} 15", f"{_LOOP} 5"])
    got = summarise(raw, rate=100)
    assert got["samples"] == 100 and got["cpu_s"] == 1.0
    assert got["by_owner_cpu_s"] == {
        "embedding model": 0.5,
        "aiokafka": 0.3,
        "factstream": 0.15,
        "stdlib (event loop, threads)": 0.05,
    }
    # The innermost own module of every non-model sample that has one.
    assert got["by_own_module_cpu_s"] == {"streams/changelog.py": 0.3, "knowledge/apply.py": 0.15}
