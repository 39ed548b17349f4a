"""bench.spy: the main thread's py-spy samples go to their innermost non-stdlib package."""

from __future__ import annotations

from bench.spy import owner, summarise

_MAIN = (
    "_run_module_as_main (<frozen runpy>:198);cli (bench/run.py:174)"
    ";BaseEventLoop._run_once (asyncio/base_events.py:1845)"
)
_KAFKA = (
    f"{_MAIN};handle (factstream/agents/editor.py:5);send (factstream/streams/changelog.py:7)"
    ";add_message (aiokafka/producer/producer.py:3);pack (struct.py:1)"
)
_OURS = f"{_MAIN};handle (factstream/agents/editor.py:5);plan (factstream/edit/apply.py:9)"
_LOOP = f"{_MAIN};Handle._run (asyncio/events.py:80)"
_WAIT = f"{_MAIN};EpollSelector.select (selectors.py:451)"
_MODEL = (
    "Thread._bootstrap (threading.py:1002);_worker (concurrent/futures/thread.py:83)"
    ";OnnxEmbedder.encode (factstream/embed/onnx_embedder.py:211)"
    ";Session.run (onnxruntime/capi/onnxruntime_inference_collection.py:395)"
)
_IDLE = "Thread._bootstrap (threading.py:1002);_worker (concurrent/futures/thread.py:81)"


def test_each_main_thread_stack_has_one_owner() -> None:
    assert owner(_KAFKA) == "aiokafka"  # its stdlib callee counts as the package's
    assert owner(_OURS) == "factstream"
    assert owner(_LOOP) == "stdlib (the event loop)"


def test_only_the_main_threads_work_is_counted_as_cpu() -> None:
    raw = "\n".join(
        [f"{_KAFKA} 30", f"{_OURS} 15", f"{_LOOP} 5", f"{_WAIT} 40", f"{_MODEL} 70", f"{_IDLE} 9"]
    )
    got = summarise(raw, rate=100)
    assert got["main_thread_cpu_s"] == 0.5
    assert got["by_owner_cpu_s"] == {
        "aiokafka": 0.3,
        "factstream": 0.15,
        "stdlib (the event loop)": 0.05,
    }
    assert got["by_own_module_cpu_s"] == {"streams/changelog.py": 0.3, "edit/apply.py": 0.15}
    assert got["not_counted_samples"] == {
        "main thread: epoll wait": 40,
        "the model's encode": 70,
        "other threads": 9,
    }
